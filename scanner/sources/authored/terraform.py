"""Plan resources to their ``resource`` blocks in the ``.tf`` sources.

The root module is ``--source-root``, else the plan's folder when it holds ``*.tf``, else the
current folder. Module folders come from ``.terraform/modules/modules.json``, which
``terraform init`` writes for every module call (downloaded or local), else from a call's local
``source`` (``./modules/x``) in the plan's ``configuration``, nested. A module from a registry
that was never initialised here has no folder: its resources keep the plan's location.
"""

from __future__ import annotations

import dataclasses
import json
import posixpath
import re
from pathlib import Path
from typing import Any

from scanner.model.places import Declaration
from scanner.model.resources import Resource
from scanner.sources.authored.hcl import read_module
from scanner.sources.authored.paths import SourcePath
from scanner.sources.terraform.plan import declaration_key

MANIFEST = Path(".terraform") / "modules" / "modules.json"
_LOCAL = ("./", "../")
# A resource or module block's header, at any indentation: its kind and labels.
_HEADER = re.compile(rb'^[ \t]*(resource|module)[ \t]+"([^"\n]*)"(?:[ \t]+"([^"\n]*)")?', re.M)


def root_module(plan: SourcePath, source_root: SourcePath | None) -> SourcePath:
    """Where the root module's ``.tf`` files are, by the rule above."""
    if source_root is not None:
        return source_root
    if any(plan.path.parent.glob("*.tf")):
        return SourcePath(plan.path.parent, posixpath.dirname(Path(plan.display).as_posix()) or ".")
    return SourcePath(Path.cwd(), ".")


def attach(
    resources: list[Resource], plan: dict[str, Any], root: SourcePath, chosen: bool, warnings: list[str]
) -> None:
    """Give each plan resource whose block is found its declaration. A root folder the user did
    not name (``chosen`` false) must prove it is this plan's root module, or nothing is mapped:
    a monorepo's folder is full of other configurations' ``azurerm_x.this`` blocks."""
    folders = module_folders(plan, root)
    keyed = [
        (resource, *declaration_key(resource.origin.address))
        for resource in resources
        if resource.origin.address is not None and not resource.origin.reference_only
    ]
    wanted: dict[str, set[str]] = {}
    for _, module, local in keyed:
        wanted.setdefault(module, set()).add(local)
    if not chosen and not _is_root_of(plan, root, wanted.get("", set())):  # before any parsing
        if any(root.path.glob("*.tf")):
            warnings.append(
                f"{root.display}: its .tf files are not this plan's root module (they do not declare all of "
                "its root resources and module calls); findings point at the plan (pass --source-root)"
            )
        return
    declared: dict[str, dict[str, Declaration]] = {}
    for module, blocks in wanted.items():
        folder = folders.get(module)
        declared[module] = read_module(folder.path, folder.display, blocks, warnings) if folder else {}
    for resource, module, local in keyed:
        declaration = declared[module].get(local)
        if declaration is not None:
            resource.origin = dataclasses.replace(resource.origin, declaration=declaration)


def _is_root_of(plan: dict[str, Any], root: SourcePath, wanted: set[str]) -> bool:
    """The folder's ``.tf`` files have a ``resource`` block for every root-module resource the
    plan has, and a ``module`` block for every call in its configuration (a header is enough:
    a block that does not parse still says whose folder this is)."""
    configuration = plan.get("configuration")
    module = configuration.get("root_module") if isinstance(configuration, dict) else None
    calls = module.get("module_calls") if isinstance(module, dict) else None
    if not wanted and not calls:
        return False
    headers: set[tuple[bytes, ...]] = set()
    for path in sorted(root.path.glob("*.tf")):  # one pass over each file, however many blocks
        headers.update((kind, *(label for label in labels if label)) for kind, *labels in _HEADER.findall(_read(path)))
    needed = {(b"resource", *(part.encode() for part in key.split(".", 1))) for key in wanted}
    needed |= {(b"module", str(name).encode()) for name in (calls if isinstance(calls, dict) else {})}
    return needed <= headers


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError:
        return b""


def module_folders(plan: dict[str, Any], root: SourcePath) -> dict[str, SourcePath]:
    """Module call path (``gpu.inner``; empty for the root) -> its folder."""
    folders = {"": root}
    manifest = _manifest(root)
    for key, directory in manifest.items():
        folders.setdefault(key, root.join(directory))
    configuration = plan.get("configuration")
    module = configuration.get("root_module") if isinstance(configuration, dict) else None
    if isinstance(module, dict):
        _follow_calls(module, "", root, manifest, folders)
    return folders


def _follow_calls(
    module: dict[str, Any], key: str, folder: SourcePath, manifest: dict[str, str], out: dict[str, SourcePath]
) -> None:
    calls = module.get("module_calls")
    for name, call in calls.items() if isinstance(calls, dict) else []:
        if not isinstance(call, dict):
            continue
        child_key = f"{key}.{name}" if key else str(name)
        source = call.get("source")
        if child_key in manifest:
            child: SourcePath | None = out[child_key]
        elif isinstance(source, str) and source.startswith(_LOCAL):
            child = out.setdefault(child_key, folder.join(source))
        else:
            child = None
        inner = call.get("module")
        if child is not None and isinstance(inner, dict):
            _follow_calls(inner, child_key, child, manifest, out)


def _manifest(root: SourcePath) -> dict[str, str]:
    """``Key`` -> ``Dir`` from the module manifest, relative to the root module; empty when
    ``terraform init`` has not run here or the file is not the manifest's shape."""
    try:
        data = json.loads((root.path / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    entries = data.get("Modules") if isinstance(data, dict) else None
    out: dict[str, str] = {}
    for entry in entries if isinstance(entries, list) else []:
        key, directory = (entry.get("Key"), entry.get("Dir")) if isinstance(entry, dict) else (None, None)
        if key and isinstance(key, str) and isinstance(directory, str):
            out[key] = directory.replace("\\", "/")  # written on Windows
    return out
