"""Compiled-template resources to their declarations in the ``.bicep`` source.

A resource's declaration chain (``app/acct``: the module ``app``, then the resource ``acct`` in
it) leads from ``main.bicep`` through local module files, at any depth, to its ``resource``
line. Each link is named in the compiled template that level compiled to: by symbolic name in a
``languageVersion`` 2.0 template, by its index in a 1.0 template's ``resources`` array, which
the ``.bicep`` file's own declarations name when they match the array entry for entry, type
for type (see `bicep`). A module from a registry has no file here: its resources point at the
``module`` line that deploys them; so do the resources of a file whose declarations do not
match what it compiled to, with a warning.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from pathlib import Path
from typing import Any

from scanner.model.places import Declaration
from scanner.model.resources import Resource
from scanner.sources.authored.bicep import FALLBACK, BicepFile, read_bicep
from scanner.sources.authored.paths import SourcePath

_COPY_INDEX = re.compile(r"\[[^\]]*\]$")


def bicep_beside(template: SourcePath, source_root: SourcePath | None) -> SourcePath | None:
    """The ``.bicep`` a compiled template was built from: ``main.bicep`` beside ``main.json``,
    else ``<source root>/main.bicep``, else the one ``main.bicep`` anywhere under the root."""
    beside = template.path.with_suffix(".bicep")
    if beside.is_file():
        return SourcePath(beside, posixpath.splitext(template.display)[0] + ".bicep")
    if source_root is None:
        return None
    name = beside.name
    direct = source_root.path / name
    candidates = [direct] if direct.is_file() else sorted(source_root.path.rglob(name))
    if len(candidates) != 1:
        return None
    return source_root.join(candidates[0].relative_to(source_root.path).as_posix())


def attach(resources: list[Resource], bicep: SourcePath, warnings: list[str]) -> None:
    """Give each resource whose declaration chain leads to a ``resource`` or ``module`` line its
    declaration."""
    sources = _BicepSources(warnings)
    for resource in resources:
        origin = resource.origin
        if not origin.instance or origin.document is None:
            continue
        declaration = sources.declaration(origin.instance.split("/"), bicep, origin.document.data)
        if declaration is not None:
            resource.origin = dataclasses.replace(origin, declaration=declaration)


def only_in_source(resources: list[Resource], bicep: SourcePath) -> None:
    """A template compiled in memory exists in no file: every resource points into the
    ``.bicep`` (its first line when no declaration was found), never into the compiled text."""
    for resource in resources:
        origin = resource.origin
        resource.origin = dataclasses.replace(
            origin,
            file=None,
            document=None,
            declaration=origin.declaration or Declaration(bicep.display, 1, 1),
        )


class _BicepSources:
    """The ``.bicep`` files one template's chains lead through, each parsed once, and the names
    of the entries of each 1.0 ``resources`` array, each matched once."""

    def __init__(self, warnings: list[str]) -> None:
        self._warnings = warnings
        self._files: dict[Path, BicepFile | None] = {}
        self._arrays: dict[tuple[Path, int], list[str] | None] = {}
        self._mismatched: set[Path] = set()  # said once, however many modules deploy the file

    def _parsed(self, path: Path, display: str) -> BicepFile | None:
        if path not in self._files:
            self._files[path] = read_bicep(path, display, self._warnings)
        return self._files[path]

    def declaration(self, segments: list[str], start: SourcePath, template: Any) -> Declaration | None:
        """The declaration at the end of ``segments`` (module names, then the resource's, as
        the compiled ``template`` keys them), or the line of the last module on the way whose
        file cannot be followed."""
        path, display = start.path, start.display
        deploying: Declaration | None = None
        for depth, segment in enumerate(segments):
            current = self._parsed(path, display)
            if current is None:
                return deploying
            name, compiled = self._named(current, path, display, template, _COPY_INDEX.sub("", segment))
            if name is None:
                return deploying
            if depth == len(segments) - 1:
                return current.resources.get(name, deploying)
            module = current.modules.get(name)
            if module is None:
                return deploying
            deploying = module.declaration
            if module.file is None or module.display is None or not module.file.is_file():
                return deploying
            if module.file.suffix.lower() != ".bicep":  # a module may deploy a JSON template
                return deploying
            path, display = module.file, module.display
            template = _inline_template(compiled)
        return deploying

    def _named(self, current: BicepFile, path: Path, display: str, template: Any, key: str) -> tuple[str | None, Any]:
        """The symbolic name of the compiled declaration ``key`` names, and that declaration: in
        a 1.0 array, ``key`` is an index, named by the file's declarations when they match."""
        resources = template.get("resources") if isinstance(template, dict) else None
        if not isinstance(resources, list):  # 2.0, or a template azai could not follow
            return key, resources.get(key) if isinstance(resources, dict) else None
        if not key.isdigit() or int(key) >= len(resources):
            return None, None
        cache = (path, id(resources))
        if cache not in self._arrays:
            self._arrays[cache] = _matched(current, resources)
            if self._arrays[cache] is None and current.clean and path not in self._mismatched:
                self._mismatched.add(path)  # (a file that does not parse was already said)
                self._warnings.append(
                    f"{display}: its declarations do not match the resources of the template it compiled to "
                    f"(is the compiled template older than the file?); its resources {FALLBACK}"
                )
        names = self._arrays[cache]
        return (names[int(key)] if names is not None else None), resources[int(key)]


def _matched(bicep: BicepFile, resources: list[Any]) -> list[str] | None:
    """Each array entry's symbolic name, when the file emits exactly these entries: as many,
    and each of the type its declaration says."""
    if len(bicep.emitted) != len(resources):
        return None
    for emitted, raw in zip(bicep.emitted, resources, strict=True):
        if not isinstance(raw, dict) or str(raw.get("type", "")).lower() != emitted.type:
            return None
    return [emitted.name for emitted in bicep.emitted]


def _inline_template(compiled: Any) -> Any:
    """The template a compiled module deployment carries inline, which is how ``bicep build``
    writes every module (None for any other shape: its links then go by name only)."""
    properties = compiled.get("properties") if isinstance(compiled, dict) else None
    return properties.get("template") if isinstance(properties, dict) else None
