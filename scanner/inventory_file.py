"""The saved inventory (``--save-inventory``): live resources as stable, pretty JSON.

GitHub code scanning needs a file to put a result on; this file is it. Resources are sorted by
id and written with sorted keys, so a rescan of an unchanged estate changes only the scan
metadata, and each SARIF result points at its resource's line here.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Iterable
from typing import Any

from scanner import __version__
from scanner.jsondoc import Document, pointer_join
from scanner.model import Origin, Resource
from scanner.output import write_atomic
from scanner.unknown import Unknown

INVENTORY_VERSION = 1


def _plain(value: Any) -> Any:
    if isinstance(value, Unknown):
        return {"$unknown": value.reason}
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def save_inventory(path: str, resources: list[Resource], scopes: list[str], coverage: Iterable[Any]) -> Document:
    """Write the inventory atomically and return it as a document, for positions."""
    ordered = sorted(resources, key=lambda r: r.id.lower())
    document = {
        "azai_inventory": INVENTORY_VERSION,
        "tool_version": __version__,
        "scan": {
            "time": dt.datetime.now(dt.UTC).replace(microsecond=0).isoformat(),
            "scopes": sorted(scopes),
            "coverage": [dataclasses.asdict(g) for g in coverage],
        },
        "resources": [_plain(r.body) for r in ordered],
    }
    text = json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
    write_atomic(path, text.encode("utf-8"))
    doc = Document(path=path, text=text, data=document)
    for index, resource in enumerate(ordered):
        resource.origin = Origin(
            kind=resource.origin.kind, file=path, pointer=pointer_join("/resources", index), document=doc
        )
    return doc
