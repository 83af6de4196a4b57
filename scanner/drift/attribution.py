"""Drift with a witness: which of Resource Graph's change records explains each drift.

A live comparison's drift (a watched setting changed, an AI resource made outside the IaC, a
declared one gone) is read against Resource Graph's ``resourcechanges`` records of the drifted
resources (`scanner.sources.live.changes` reads them; docs/emulator-contract.md lists every
field with its Learn source). This module decides, without any I/O, which record explains
what, so that it is unit-tested apart from any server:

- **A changed setting** (AZAI-901): the latest ``Update`` record whose ``changes`` set the
  watched property to its current value (values compared as drift compares them: case, sets,
  the platform's default for an absent value). When the value it recorded before differs from
  the baseline's, the setting changed more than once. A record that changes items of a list
  (a key under the property, such as ``properties.nodeTaints[0]``) explains the property when
  no record names it whole; its values are then the items'. Records of the property that all
  set another value explain nothing: the current value came some other way.
- **A resource made** (AZAI-902, and a resource added between two scans): its latest
  ``Create`` record. **A resource gone** (AZAI-903, or removed between two scans): its latest
  ``Delete`` record.
- Nothing found: "no change record", and why (none within Resource Graph's 14 days; the base
  scan older than that; the records could not be read; no full id to look up). Never a guess.

A record made by an **expected writer** (``--expected-writer``: the service principals and
managed identities of the reviewed deployment path, matched case-insensitively on
``changedBy``) is reported as "deployed outside the IaC under review", and its finding's
severity is lowered to low: the change was deployed, just not through the IaC under review.

Values are shown only for the watched property a finding is about (the same rule as the drift
findings: a watched property is never a secret or credential). A record's other changes are
read for nothing and shown nowhere.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from scanner.drift.compare import WATCHED_TYPES, Change, DriftReport, Watched, same_value
from scanner.engine.checkapi import Severity
from scanner.engine.results import Finding
from scanner.model.resources import Resource, is_placeholder, parse_resource_id
from scanner.model.shown import json_text

WINDOW_DAYS = 14  # Resource Graph keeps changes this long (scanner.sources.live.changes)
NO_RECORD = f"no change record in Resource Graph's last {WINDOW_DAYS} days"
NOT_READ = "no change record read: Resource Graph's change records of its subscription could not be read"
NO_FULL_ID = "no change record looked up: the IaC does not give the resource's full id"
OUT_OF_SCOPE = "no change record looked up: its subscription is outside the live scope"
EXPECTED = "an expected writer: deployed outside the IaC under review"
VERBS = {"Update": "changed", "Create": "created", "Delete": "deleted"}


@dataclass(frozen=True)
class PropertyChange:
    """One entry of a record's ``changes``: the property path as Azure wrote it, and its
    previous and new values decoded (`decoded`), None when absent."""

    key: str
    previous: Any
    new: Any


@dataclass(frozen=True)
class ChangeRecord:
    """One ``resourcechanges`` row: its id, and its ``properties`` as Learn documents them."""

    change_id: str
    target_id: str
    change_type: str
    timestamp: dt.datetime
    changed_by: str | None = None
    changed_by_type: str | None = None
    client_type: str | None = None
    operation: str | None = None
    correlation_id: str | None = None
    changes: tuple[PropertyChange, ...] = ()

    def entry(self, path: str) -> PropertyChange | None:
        """The change of the property ``path`` itself (keys compare case-insensitively)."""
        wanted = path.lower()
        return next((c for c in self.changes if c.key.lower() == wanted), None)

    def items(self, path: str) -> tuple[PropertyChange, ...]:
        """The changes of parts of ``path``: its list items or members (``path[0]``, ``path.x``)."""
        wanted = path.lower()
        return tuple(c for c in self.changes if c.key.lower().startswith((wanted + "[", wanted + ".")))


def decoded(value: Any) -> Any:
    """A recorded value as JSON: Resource Graph's example writes values as strings (``"null"``
    for none, ``"true"``), so a string that is JSON text is read as that value; other text (an
    enum, a name) stays as it is."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except ValueError:
        return value


def parse_record(row: Mapping[str, Any]) -> ChangeRecord:
    """A row the live source checked (`scanner.sources.live.changes.change_row`); a
    ``timestamp`` that is no ISO 8601 time raises ValueError."""
    properties = row["properties"]
    attributes = properties["changeAttributes"]
    when = dt.datetime.fromisoformat(attributes["timestamp"])
    changes = properties.get("changes") or {}
    return ChangeRecord(
        change_id=str(row.get("id", "")),
        target_id=properties["targetResourceId"],
        change_type=properties["changeType"],
        timestamp=when if when.tzinfo else when.replace(tzinfo=dt.UTC),
        changed_by=_text(attributes.get("changedBy")),
        changed_by_type=_text(attributes.get("changedByType")),
        client_type=_text(attributes.get("clientType")),
        operation=_text(attributes.get("operation")),
        correlation_id=_text(attributes.get("correlationId")),
        changes=tuple(
            PropertyChange(str(key), decoded(_field(entry, "previousValue")), decoded(_field(entry, "newValue")))
            for key, entry in changes.items()
        ),
    )


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _field(entry: Any, name: str) -> Any:
    return entry.get(name) if isinstance(entry, dict) else None


@dataclass(frozen=True)
class Subject:
    """What one attribution explains: a changed watched property (``verb`` "changed", with its
    ``path``, the ``current`` value and the ``baseline``'s), or a resource made ("created") or
    gone ("deleted"). ``baseline_label`` names the baseline in text ("the base scan", "the IaC")."""

    resource_id: str
    resource_type: str
    verb: str
    path: str | None = None
    current: Any = None
    baseline: Any = None
    baseline_label: str = "the base scan"

    @property
    def watched(self) -> Watched | None:
        watched = WATCHED_TYPES.get(self.resource_type.lower(), ())
        return next((w for w in watched if self.path and w.path.lower() == self.path.lower()), None)

    def relevant(self, record: ChangeRecord) -> bool:
        """Whether ``record`` is about what this subject is: the same resource, and the kind of
        change (for a setting, one that touches its property)."""
        if record.target_id.lower() != self.resource_id.lower():
            return False
        if self.verb != "changed":
            return VERBS.get(record.change_type) == self.verb
        assert self.path is not None
        return record.change_type == "Update" and (record.entry(self.path) is not None or bool(record.items(self.path)))


@dataclass(frozen=True)
class Attribution:
    """Who made one drift, or why nobody is named. ``record`` is None for "no change record"
    (``reason`` says why). ``previous``/``new``: the watched property's values as Azure recorded
    them (``shown`` false when nothing of it is shown: a created or deleted resource).
    ``history``: every record of the subject in the window, oldest first (the timeline)."""

    subject: Subject
    record: ChangeRecord | None = None
    reason: str | None = None
    previous: Any = None
    new: Any = None
    shown: bool = False
    more_than_once: bool = False
    expected_writer: bool = False
    history: tuple[ChangeRecord, ...] = ()

    @property
    def line(self) -> str:
        """The one line every report shows: "changed by alice@contoso.com through Azure Portal
        on 2026-11-20 10:14 UTC", or "no change record ..."."""
        record = self.record
        if record is None:
            return self.reason or NO_RECORD
        who = record.changed_by or "an identity Resource Graph did not record"
        through = f" through {record.client_type}" if record.client_type else ""
        text = f"{self.subject.verb} by {who}{through} on {when_text(record.timestamp)}"
        if self.more_than_once:
            text += (
                f"; changed more than once: Azure recorded {json_text(self.previous)} before this change, "
                f"{self.subject.baseline_label} held {json_text(self.subject.baseline)}"
            )
        if self.expected_writer:
            text += f"; {EXPECTED}"
        return text

    def as_json(self) -> dict[str, Any]:
        """The finding's ``change`` object (docs/json-output.md)."""
        record = self.record
        return {
            "recorded": record is not None,
            "change_type": record.change_type if record else None,
            "changed_by": record.changed_by if record else None,
            "changed_by_type": record.changed_by_type if record else None,
            "client_type": record.client_type if record else None,
            "operation": record.operation if record else None,
            "timestamp": record.timestamp.astimezone(dt.UTC).isoformat() if record else None,
            "correlation_id": record.correlation_id if record else None,
            "property": self.subject.path,
            "previous_value": self.previous if self.shown else None,
            "new_value": self.new if self.shown else None,
            "changed_more_than_once": self.more_than_once,
            "expected_writer": self.expected_writer,
            "reason": self.reason,
            "summary": self.line,
        }


def when_text(moment: dt.datetime) -> str:
    return moment.astimezone(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def attribute(
    subject: Subject, records: Sequence[ChangeRecord], expected: frozenset[str], no_record: str = NO_RECORD
) -> Attribution:
    """The record that explains ``subject`` among ``records`` (any resource's, any order);
    ``expected``: the expected writers, lower-case; ``no_record``: what to say when no record
    of the subject was read (`NO_RECORD`, or why the window cannot hold one)."""
    history = tuple(sorted((r for r in records if subject.relevant(r)), key=lambda r: r.timestamp))
    if subject.verb != "changed":
        found = Attribution(subject, history[-1], history=history) if history else Attribution(subject, history=history)
    else:
        found = _setting(subject, history)
    if found.record is None:
        return found if found.reason else dataclasses.replace(found, reason=no_record)
    writer = (found.record.changed_by or "").lower() in expected
    return dataclasses.replace(found, expected_writer=writer)


def _setting(subject: Subject, history: tuple[ChangeRecord, ...]) -> Attribution:
    """A changed property's record: the latest that set its current value; else the latest that
    changed its items, when none names it whole; else none, and why."""
    assert subject.path is not None
    watched = subject.watched
    whole = [r for r in history if r.entry(subject.path)]
    for record in reversed(whole):
        entry = record.entry(subject.path)
        assert entry is not None
        if _same(entry.new, subject.current, watched):
            more = not _same(entry.previous, subject.baseline, watched)
            return Attribution(subject, record, None, entry.previous, entry.new, True, more, history=history)
    if whole:
        reason = f"no change record sets its current value ({len(whole)} recorded change(s) of it)"
        return Attribution(subject, reason=reason, history=history)
    if history:
        record = history[-1]
        items = record.items(subject.path)
        previous = {c.key: c.previous for c in items}
        new = {c.key: c.new for c in items}
        return Attribution(subject, record, None, previous, new, True, history=history)
    return Attribution(subject, history=history)


def _same(recorded: Any, value: Any, watched: Watched | None) -> bool:
    """A recorded value equal to ``value`` as drift compares them, the platform's default
    standing for an absent one; raw text compared too (a string property that reads as JSON)."""
    held = watched.default if recorded is None and watched is not None else recorded
    return same_value(held, value, watched) or (isinstance(recorded, str) and same_value(str(value), recorded))


@dataclass
class History:
    """What `azai drift` learned from the change records: each drift finding's attribution by
    fingerprint, each added or removed resource's by lower-case id, the window read and the
    expected writers (lower-case)."""

    by_finding: dict[str, Attribution] = field(default_factory=dict)
    by_resource: dict[str, Attribution] = field(default_factory=dict)
    window_days: int = WINDOW_DAYS
    expected: frozenset[str] = frozenset()

    def timeline(self) -> list[TimelineEntry]:
        """Every record of the drifted subjects, once, oldest first (then by author), with the
        watched properties it changed among those that drifted."""
        entries: dict[str, TimelineEntry] = {}
        for attribution in [*self.by_finding.values(), *self.by_resource.values()]:
            for record in attribution.history:
                what = attribution.subject.path or attribution.subject.verb
                known = entries.get(record.change_id)
                listed = known.what if known else ()
                writer = (record.changed_by or "").lower() in self.expected
                entries[record.change_id] = TimelineEntry(record, tuple(dict.fromkeys([*listed, what])), writer)
        return sorted(entries.values(), key=lambda e: (e.record.timestamp, (e.record.changed_by or "").lower()))

    def authors(self) -> list[tuple[str, int, bool]]:
        """Each author in the timeline with their number of changes and whether they are an
        expected writer, most changes first."""
        counts: dict[str, tuple[int, bool]] = {}
        for entry in self.timeline():
            who = entry.record.changed_by or "(not recorded)"
            count, _ = counts.get(who, (0, False))
            counts[who] = (count + 1, entry.expected_writer)
        return sorted(((w, n, e) for w, (n, e) in counts.items()), key=lambda item: (-item[1], item[0].lower()))


@dataclass(frozen=True)
class TimelineEntry:
    record: ChangeRecord
    what: tuple[str, ...]  # the drifted watched properties it changed, or "created" / "deleted"
    expected_writer: bool


def queryable(resource_id: str, subscriptions: Iterable[str]) -> str | None:
    """Why ``resource_id``'s records cannot be looked up (a placeholder in it, or a subscription
    outside the live scope), or None when they can."""
    if any(is_placeholder(part) for part in resource_id.split("/") if part):
        return NO_FULL_ID
    subscription = (parse_resource_id(resource_id).subscription or "").lower()
    return None if subscription in {s.lower() for s in subscriptions} else OUT_OF_SCOPE


def lookups(wanted: Mapping[str, Subject], unlooked: Mapping[str, str]) -> dict[str, list[str]]:
    """The ids whose records to read, by lower-case subscription, each once: the subjects'
    resources that are not ``unlooked``."""
    targets: dict[str, list[str]] = {}
    for key, subject in wanted.items():
        if key in unlooked:
            continue
        listed = targets.setdefault((parse_resource_id(subject.resource_id).subscription or "").lower(), [])
        if all(subject.resource_id.lower() != known.lower() for known in listed):
            listed.append(subject.resource_id)
    return targets


def subjects(report: DriftReport, findings: Iterable[Finding]) -> dict[str, Subject]:
    """What each live comparison's drift finding (by fingerprint) and each added or removed
    resource (by ``resource:`` and its lower-case id) is about, from the report's changes."""
    label = "the IaC" if report.mode == "iac" else "the base scan"
    changed = {(r.id.lower(), c.path.lower()): c for r, changes in report.changed for c in changes}
    out: dict[str, Subject] = {}
    for resource, verb in [*((r, "created") for r in report.added), *((r, "deleted") for r in report.removed)]:
        full = report.placed.get(resource.id.lower(), resource.id)
        out[f"resource:{resource.id.lower()}"] = Subject(full, resource.type, verb)
    for finding in findings:
        subject = _finding_subject(finding, changed, out, label)
        if subject is not None:
            out[finding.fingerprint] = subject
    return out


def _finding_subject(
    finding: Finding, changed: Mapping[tuple[str, str], Change], made: Mapping[str, Subject], label: str
) -> Subject | None:
    resource: Resource = finding.resource
    change = changed.get((resource.id.lower(), finding.violation.path.lower()))
    if change is not None:
        return Subject(resource.id, resource.type, "changed", change.path, change.after, change.before, label)
    return made.get(f"resource:{resource.id.lower()}")


def no_record_reason(base_time: dt.datetime | None, now: dt.datetime) -> str:
    """What "no change record" means for this comparison: none in Resource Graph's window, or,
    when the base scan is older than the window, that the window has passed for part of it."""
    if base_time is None or now - base_time <= dt.timedelta(days=WINDOW_DAYS):
        return NO_RECORD
    days = (now - base_time).days
    return f"no change record: the base scan is {days} days old and Resource Graph keeps {WINDOW_DAYS} days of changes"


def witness(
    wanted: Mapping[str, Subject],
    records: Sequence[ChangeRecord],
    unlooked: Mapping[str, str],
    read: set[str],
    expected: frozenset[str],
    no_record: str = NO_RECORD,
) -> History:
    """Each subject's attribution (`subjects` keys them). ``unlooked``: why some subjects' records
    were not looked up (`queryable`); ``read``: the lower-case subscriptions whose records were
    read whole (the others' subjects are `NOT_READ`); ``expected``: the expected writers."""
    history = History(expected=expected)
    for key, subject in wanted.items():
        subscription = (parse_resource_id(subject.resource_id).subscription or "").lower()
        reason = unlooked.get(key) or (None if subscription in read else NOT_READ)
        found = Attribution(subject, reason=reason) if reason else attribute(subject, records, expected, no_record)
        if key.startswith("resource:"):
            history.by_resource[key.removeprefix("resource:")] = found
        else:
            history.by_finding[key] = found
    return history


def lowered(findings: Iterable[Finding], history: History) -> list[Finding]:
    """The findings, those an expected writer's record explains at low severity."""
    return [
        dataclasses.replace(f, severity=Severity.LOW)
        if (a := history.by_finding.get(f.fingerprint)) is not None and a.expected_writer
        else f
        for f in findings
    ]
