"""Snapshots (``--save-inventory``): an inventory as stable, versioned, pretty JSON.

GitHub code scanning needs a file to put a live result on, and drift auditing needs yesterday's
estate: this file is both. Resources are sorted by id and keys sorted, so a rescan of an
unchanged estate changes only the scan metadata. Unknown values are written as
``{"$unknown": reason}``, with ``$symbol`` and ``$may_be_null`` when they have them (sensitive
plan values are Unknown already, so none is ever written), and a snapshot read back gives the
same resources, origins and findings.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from scanner import __version__
from scanner.errors import InputError
from scanner.model.jsondoc import Document, expect, load_document, member, pointer_join
from scanner.model.resources import Origin, Resource, parse_resource_id
from scanner.model.unknown import Unknown
from scanner.output import write_atomic

INVENTORY_VERSION = 1
MARKER = "azai_inventory"


# How an Unknown is written: its reason, and what else decides findings when it has it (the
# symbol that makes two ``resourceGroup().location`` values equal, a value that may be null).
_UNKNOWN_KEYS = frozenset({"$unknown", "$symbol", "$may_be_null"})


def _plain(value: Any) -> Any:
    if isinstance(value, Unknown):
        plain: dict[str, Any] = {"$unknown": value.reason}
        if value.symbol is not None:
            plain["$symbol"] = value.symbol
        if value.may_be_null:
            plain["$may_be_null"] = True
        return plain
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _restore(value: Any) -> Any:
    if isinstance(value, dict):
        if "$unknown" in value and value.keys() <= _UNKNOWN_KEYS:
            symbol = value.get("$symbol")
            return Unknown(
                str(value["$unknown"]),
                symbol=symbol if isinstance(symbol, str) else None,
                may_be_null=value.get("$may_be_null") is True,
            )
        return {k: _restore(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_restore(v) for v in value]
    return value


def save_inventory(
    path: str, resources: Iterable[Resource], scopes: Iterable[str], coverage: Iterable[Any], inputs: Iterable[str] = ()
) -> Document:
    """Write the snapshot atomically, and point resources that have no file of their own (live
    resources no scanned IaC declares) at their entry, so SARIF can place them."""
    ordered = sorted((r for r in resources if not r.origin.reference_only), key=lambda r: (r.id.lower(), r.origin.kind))
    document = {
        MARKER: INVENTORY_VERSION,
        "tool_version": __version__,
        "scan": {
            "time": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
            "scopes": sorted(scopes),
            "inputs": sorted(inputs),
            "coverage": [dataclasses.asdict(g) for g in coverage],
        },
        "resources": [_entry(r) for r in ordered],
    }
    text = json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    write_atomic(path, text.encode("utf-8"))
    doc = Document(path=path, text=text, data=document)
    for index, resource in enumerate(ordered):
        if resource.origin.in_a_file:
            continue
        resource.origin = Origin(
            kind=resource.origin.kind,
            file=path,
            pointer=pointer_join("/resources", index, "resource"),
            document=doc,
            address=resource.origin.address,
        )
    return doc


def _entry(resource: Resource) -> dict[str, Any]:
    """One resource as the snapshot keeps it, with what its source said beside the body, so that
    a snapshot read back decides and reports the same: the notes on what that form cannot set, a
    template condition (its findings are undetermined), the plan's action, the key of a resource
    whose name is an expression, and the paths the configuration wrote (what drift compares)."""
    origin = resource.origin
    entry: dict[str, Any] = {"source": origin.kind, "address": origin.address, "resource": _plain(resource.body)}
    if origin.notes:
        entry["notes"] = dict(origin.notes)
    for key, value in (("condition", origin.condition), ("action", origin.action), ("key_name", resource.key_name)):
        if value is not None:
            entry[key] = value
    if origin.configured is not None:
        entry["configured"] = sorted(origin.configured)
    return entry


def is_snapshot(data: dict[str, Any]) -> bool:
    return MARKER in data


def read_snapshot(doc: Document) -> tuple[list[Resource], dict[str, Any]]:
    """Resources and scan metadata of a snapshot; a wrong version or shape is a one-line error."""
    data = doc.data
    if MARKER not in data:
        raise InputError(f"{doc.path}: not an azai snapshot (write one with --save-inventory)")
    if data.get(MARKER) != INVENTORY_VERSION:
        raise InputError(
            f"{doc.path}: unsupported azai snapshot version {data.get(MARKER)!r} (this azai reads {INVENTORY_VERSION})"
        )
    if data.get("resources") is None or data.get("scan") is None:
        raise InputError(f"{doc.path}: not an azai snapshot: 'scan' and 'resources' are required")
    scan = expect(doc, data["scan"], dict, "/scan")
    resources = []
    for index, raw in enumerate(expect(doc, data["resources"], list, "/resources")):
        at = pointer_join("/resources", index)
        malformed = f"snapshot resource {index} is malformed at "
        entry = expect(doc, raw, dict, at, malformed)
        body = expect(doc, entry.get("resource"), dict, at + "/resource", malformed)
        resource_id = expect(doc, body.get("id"), str, at + "/resource/id", malformed)
        parsed = parse_resource_id(resource_id)
        resources.append(
            Resource(
                id=resource_id,
                type=parsed.resource_type or str(body.get("type", "")),
                name=parsed.name_chain or str(body.get("name", "")),
                body=_restore(body),
                origin=Origin(
                    kind=expect(doc, entry.get("source"), str, at + "/source", malformed),
                    file=doc.path,
                    pointer=at + "/resource",
                    document=doc,
                    address=member(doc, entry, "address", str, at, malformed),
                    action=member(doc, entry, "action", str, at, malformed),
                    condition=member(doc, entry, "condition", str, at, malformed),
                    notes=_notes(doc, entry, at, malformed),
                    configured=_configured(doc, entry, at, malformed),
                ),
                key_name=member(doc, entry, "key_name", str, at, malformed),
            )
        )
    return resources, scan


def _configured(doc: Document, entry: dict[str, Any], pointer: str, context: str) -> frozenset[str] | None:
    """An entry's configured ARM paths; None (compare everything) when the source did not tell."""
    paths = member(doc, entry, "configured", list, pointer, context)
    if paths is None:
        return None
    where = pointer_join(pointer, "configured")
    return frozenset(expect(doc, p, str, pointer_join(where, i), context) for i, p in enumerate(paths))


def _notes(doc: Document, entry: dict[str, Any], pointer: str, context: str) -> dict[str, str] | None:
    """An entry's notes: what its source form cannot set, by ARM path, each a sentence."""
    notes = member(doc, entry, "notes", dict, pointer, context)
    if notes is None:
        return None
    return {k: expect(doc, v, str, pointer_join(pointer, "notes", k), context) for k, v in notes.items()}


def load_snapshot(path: str) -> tuple[list[Resource], dict[str, Any]]:
    return read_snapshot(load_document(Path(path), path))
