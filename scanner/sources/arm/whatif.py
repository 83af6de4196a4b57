"""ARM what-if results: the ``after`` state of resources the deployment would leave in place.

Both shapes are accepted: the REST ``WhatIfOperationResult`` (``properties.changes``) and the
Azure CLI's ``--no-pretty-print`` output (top-level ``changes``). Create, Modify, NoChange and
Deploy changes describe resources that will exist after the deployment; Delete and Ignore
describe resources the template does not manage, which drift auditing uses instead.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from scanner.model.jsondoc import Document, deeper, expect, member, pointer_join
from scanner.model.resources import Origin, Resource, parse_resource_id
from scanner.sources.arm.wellformed import require_read_shape

SCANNED_CHANGES = frozenset({"create", "modify", "nochange", "deploy"})
# A what-if change type in a Terraform plan's words (`Origin.action`); Deploy says nothing of
# whether the resource exists, so it has no action.
ACTIONS = {"create": "create", "modify": "update", "nochange": "no-op"}


def whatif_changes(data: dict[str, Any]) -> tuple[list[Any], str] | None:
    """The change list and its pointer, in either shape; None when this is not what-if output."""
    properties = data.get("properties")
    if isinstance(properties, dict) and isinstance(properties.get("changes"), list):
        return properties["changes"], "/properties/changes"
    if isinstance(data.get("changes"), list):
        return data["changes"], "/changes"
    return None


def read_whatif(doc: Document) -> tuple[list[Resource], list[str]]:
    found = whatif_changes(doc.data)
    changes, base = found if found else ([], "")
    return list(_resources(doc, changes, base)), []


def _resources(doc: Document, changes: list[Any], base: str) -> Iterator[Resource]:
    for i, raw in enumerate(changes):
        at = deeper(base, i)
        change = expect(doc, raw, dict, at)
        change_type = (member(doc, change, "changeType", str, at) or "").lower()
        resource_id = member(doc, change, "resourceId", str, at)
        member(doc, change, "before", dict, at)
        after = member(doc, change, "after", dict, at)
        if change_type not in SCANNED_CHANGES or after is None:
            continue
        resource_id = resource_id or str(after.get("id") or "")
        parsed = parse_resource_id(resource_id)
        resource_type = parsed.resource_type or str(after.get("type", ""))
        name = parsed.name_chain or str(after.get("name", ""))
        if not resource_type:
            continue
        require_read_shape(doc, resource_type, after, pointer_join(base, i, "after"))
        yield Resource(
            id=resource_id,
            type=resource_type,
            name=name,
            body=after,
            origin=Origin(
                kind="whatif",
                file=doc.path,
                pointer=pointer_join(base, i, "after"),
                document=doc,
                symbolic_name=change.get("symbolicName") if isinstance(change.get("symbolicName"), str) else None,
                action=ACTIONS.get(change_type),
            ),
        )
