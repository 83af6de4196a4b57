"""Compiled-template resources to their declarations in the ``.bicep`` source.

``bicep build`` with ``languageVersion`` 2.0 keeps the symbolic names, so a resource's
declaration chain (``app/acct``: the module ``app``, then the resource ``acct`` in it) leads
from ``main.bicep`` through local module files to its ``resource`` line. A module from a
registry has no file here: its resources point at the ``module`` line that deploys them. A
template without symbolic names (``languageVersion`` 1.0) says nothing that identifies a
declaration, so its resources keep the compiled template's position.
"""

from __future__ import annotations

import dataclasses
import posixpath
import re
from pathlib import Path

from scanner.model.places import Declaration
from scanner.model.resources import Resource
from scanner.sources.authored.bicep import BicepFile, read_bicep
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
        chain = resource.origin.instance
        if resource.origin.symbolic_name is None or not chain:
            continue
        declaration = sources.declaration(chain.split("/"), bicep)
        if declaration is not None:
            resource.origin = dataclasses.replace(resource.origin, declaration=declaration)


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
    """The ``.bicep`` files one template's chains lead through, each parsed once."""

    def __init__(self, warnings: list[str]) -> None:
        self._warnings = warnings
        self._files: dict[Path, BicepFile | None] = {}

    def _parsed(self, path: Path, display: str) -> BicepFile | None:
        if path not in self._files:
            self._files[path] = read_bicep(path, display, self._warnings)
        return self._files[path]

    def declaration(self, segments: list[str], start: SourcePath) -> Declaration | None:
        """The declaration at the end of ``segments`` (module names, then the resource's), or
        the line of the last module on the way whose file cannot be followed."""
        path, display = start.path, start.display
        deploying: Declaration | None = None
        for depth, segment in enumerate(segments):
            name = _COPY_INDEX.sub("", segment)
            current = self._parsed(path, display)
            if current is None:
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
        return deploying
