"""Resource Graph's change records of drifted resources: who changed them, when, through what.

Resource Graph keeps a ``Microsoft.Resources/changes`` record for each change to a resource in
its ``resourcechanges`` table, for 14 days (MicrosoftDocs/azure-docs
articles/governance/resource-graph/changes/get-resource-changes.md@14be4db, ms.date 06/14/2024;
"Changes are queryable for fourteen days": how-to/get-resource-changes.md@007df60). A row's
``properties`` hold ``targetResourceId``, ``changeType``, ``changeAttributes`` (``changedBy``,
``changedByType``, ``clientType``, ``operation``, ``timestamp``, ``correlationId``...) and,
for an update, ``changes`` with each property's previous and new value
(changes/changes-resource-spec.md@967a3bf). docs/emulator-contract.md lists every field with
its source.

`read_changes` sends one query per subscription for all the resources of it that drifted,
paged and guarded like discovery (`Collector.graph_pages`: ``$skipToken`` held to a page
trail, retries and throttling within the scan's budget, a failure a coverage gap of scope
``/subscriptions/S/providers/Microsoft.Resources/changes``, never an error): a read, a POST
to Resource Graph being the only non-GET a scan sends. Which record explains which finding is
the drift package's business (`scanner.drift.attribution`); this module only reads the rows and
refuses those whose shape Resource Graph does not promise.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from scanner.model.needs import LiveNeeds
from scanner.model.resources import CoverageGap
from scanner.sources.live.boundary import BoundaryError
from scanner.sources.live.clients import ClientFactory
from scanner.sources.live.collect import Collector, Progress

CHANGES_TABLE = "resourcechanges"
RETENTION_DAYS = 14
CHANGES_SCOPE = "/subscriptions/{subscription}/providers/Microsoft.Resources/changes"
WORKERS = 8  # subscriptions queried at once; the transport holds them to Resource Graph's quota


def changes_query(resource_ids: Sequence[str]) -> str:
    """The KQL of one subscription's read: the records of these resources from the last
    `RETENTION_DAYS` days, in id order (a stable order for ``$skipToken`` paging). The columns
    and time filter are written as Learn's samples write them (``tostring(properties.
    targetResourceId)``, ``todatetime(properties.changeAttributes.timestamp)``, ``ago(1d)``)."""
    listed = ", ".join(_kql_string(resource_id) for resource_id in resource_ids)
    return (
        f"{CHANGES_TABLE} "
        "| extend targetResourceId = tostring(properties.targetResourceId), "
        "changeTime = todatetime(properties.changeAttributes.timestamp) "
        f"| where targetResourceId in~ ({listed}) "
        f"| where changeTime > ago({RETENTION_DAYS}d) "
        "| project id, properties "
        "| order by id asc"
    )


def _kql_string(text: str) -> str:
    """``text`` as a KQL string literal: single quotes, backslash and quote escaped."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


@dataclass
class ChangeReading:
    """What `read_changes` read: each row's ``id`` and ``properties`` as Resource Graph gave
    them, the lower-case subscriptions whose records were read whole, and what could not be."""

    rows: list[dict[str, Any]] = field(default_factory=list)
    read: set[str] = field(default_factory=set)
    coverage: list[CoverageGap] = field(default_factory=list)


def read_changes(factory: ClientFactory, targets: Mapping[str, Sequence[str]]) -> ChangeReading:
    """The change records of ``targets`` (subscription -> the ids of its drifted resources),
    one paged query per subscription, the subscriptions read concurrently."""
    collector = Collector(factory, Progress(False), LiveNeeds())
    reading = ChangeReading()
    items = sorted((subscription.lower(), list(ids)) for subscription, ids in targets.items() if ids)
    with ThreadPoolExecutor(max_workers=WORKERS) as pool:
        answers = list(pool.map(lambda item: _subscription_changes(collector, *item), items))
    stopped = {scope.split("/")[2] for scope in collector.timed_out}  # by the scan's time limit
    for (subscription, _), (rows, gaps) in zip(items, answers, strict=True):
        reading.coverage += gaps
        if not gaps and subscription not in stopped:
            reading.rows += rows
            reading.read.add(subscription)
    reading.coverage += collector.coverage + collector.time_limit_gap()
    return reading


def _subscription_changes(
    collector: Collector, subscription: str, ids: list[str]
) -> tuple[list[dict[str, Any]], list[CoverageGap]]:
    """One subscription's rows and the gaps of its read: none when it was read whole, or when
    the scan's time limit stopped it (the collector's ``timed_out`` then names it)."""
    scope = CHANGES_SCOPE.format(subscription=subscription)
    gaps: list[CoverageGap] = []
    rows: list[dict[str, Any]] = []
    pages = collector.graph_pages(changes_query(ids), ("id",), scope, subscriptions=[subscription], gaps=gaps)
    try:
        for page in pages:
            rows += [change_row(row) for row in page]
    except BoundaryError as exc:
        gaps.append(CoverageGap(scope, None, collector.boundary.redactor.quote(str(exc))))
    return rows, gaps


def change_row(row: dict[str, Any]) -> dict[str, Any]:
    """A row as azai reads it: its ``id`` and ``properties``, with ``targetResourceId`` and
    ``changeType`` strings, ``changeAttributes`` an object with an ISO 8601 ``timestamp``, and
    ``changes`` (when present) an object. Anything else refuses the answer: a record that
    cannot say what changed, or when, is no witness. The change actor attributes are optional
    (Learn: "some change details may show up before others")."""
    properties = row.get("properties")
    if not isinstance(properties, dict):
        raise BoundaryError("a resourcechanges row has no 'properties' object")
    for name in ("targetResourceId", "changeType"):
        if not isinstance(properties.get(name), str):
            raise BoundaryError(f"a resourcechanges row has no '{name}' string")
    attributes = properties.get("changeAttributes")
    if not isinstance(attributes, dict) or not isinstance(attributes.get("timestamp"), str):
        raise BoundaryError("a resourcechanges row has no 'changeAttributes.timestamp' string")
    try:
        dt.datetime.fromisoformat(attributes["timestamp"])
    except ValueError:
        raise BoundaryError("a resourcechanges row's timestamp is not an ISO 8601 time") from None
    if not isinstance(properties.get("changes", {}), dict):
        raise BoundaryError("a resourcechanges row's 'changes' is not an object")
    return {"id": row["id"], "properties": properties}
