"""SARIF 2.1.0 for GitHub code scanning, built with sarif-om and its serializer.

One run per source kind, each with its own ``automationDetails.id`` category, so GitHub keeps
plan and template alerts apart and closes them when a later upload no longer has them. Every
result has a physical location (the file and the resource's or property's line) and our own
``primaryLocationLineHash``, which GitHub never overwrites: the alert survives line moves and
is the same whether the resource was scanned from a plan or from a template. Where sarif-om
lags the final 2.1.0 schema (suppressions, property bags), plain dicts are passed through.
"""

from __future__ import annotations

import gzip
import json
import urllib.parse
import zlib
from pathlib import Path
from typing import Any

import attrs
import sarif_om as om

from reports.common import plain, unread_lines
from scanner import __version__
from scanner.cost.summary import cost_json
from scanner.engine.checkapi import Check, Severity
from scanner.engine.results import Finding, ScanResult, Undetermined
from scanner.engine.ruledocs import rule_markdown
from scanner.model.places import Place

SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
INFORMATION_URI = "https://learn.microsoft.com/azure/well-architected/ai/"
MAX_RESULTS_PER_RUN = 25_000
MAX_RUNS = 20
MAX_GZIP_BYTES = 10 * 1024 * 1024
KIND_ORDER = ("terraform", "arm", "whatif", "live")
# Scores as Trivy uses them; critical sits above GitHub's 9.0 boundary.
SECURITY_SEVERITY = {Severity.CRITICAL: "9.5", Severity.HIGH: "8.0", Severity.MEDIUM: "5.5", Severity.LOW: "2.0"}
LEVEL = {Severity.CRITICAL: "error", Severity.HIGH: "error", Severity.MEDIUM: "warning", Severity.LOW: "note"}


def category(kind: str) -> str:
    """``automationDetails.id``: a fixed category per source kind (the trailing slash means no run id).

    Live results share one category whatever the subscriptions, so a nightly upload closes the
    alerts of resources that are gone and never exceeds GitHub's 20 runs per file.
    """
    return "azai/live/" if kind == "live" else f"azai/iac/{kind}/"


def live_pseudo_path(resource_id: str) -> str:
    """A stable repository-relative stand-in path for a live resource that no file declares."""
    return "azure-live/" + urllib.parse.quote(resource_id.strip("/").lower(), safe="/")


class ArtifactUris:
    """Repository-relative, percent-encoded URIs for scanned and source files, each computed once.

    GitHub resolves ``%SRCROOT%`` to the checkout root, so URIs are relative to the repository
    root, whatever folder azai ran in. A file outside it keeps its absolute path as a last
    resort (GitHub then shows the alert without a file).
    """

    def __init__(self, root: Path) -> None:
        self._root = root.resolve()
        self._known: dict[str, str] = {}

    def __call__(self, path: str) -> str:
        known = self._known.get(path)
        if known is None:
            resolved = Path(path).resolve()
            try:
                relative = resolved.relative_to(self._root).as_posix()
            except ValueError:
                relative = resolved.as_posix()
            known = self._known[path] = urllib.parse.quote(relative, safe="/")
        return known

    def location(self, place: Place | None, resource_id: str) -> om.PhysicalLocation:
        """A physical location; a live resource no file declares gets its stable pseudo-path."""
        uri = self(place.file) if place and place.file else live_pseudo_path(resource_id)
        line = place.line if place and place.line else 1
        column = place.column if place and place.column else None
        return om.PhysicalLocation(
            artifact_location=om.ArtifactLocation(uri=uri, uri_base_id="%SRCROOT%"),
            region=om.Region(start_line=line, start_column=column),
        )


def _rule(check: Check) -> om.ReportingDescriptor:
    return om.ReportingDescriptor(
        id=check.id,
        name=check.slug,
        short_description=om.MultiformatMessageString(text=check.title[:1024]),
        full_description=om.MultiformatMessageString(text=check.summary[:1024]),
        help=om.MultiformatMessageString(text=check.doc, markdown=rule_markdown(check)),
        help_uri=check.help_uri,
        default_configuration=om.ReportingConfiguration(level=LEVEL[check.severity]),
        properties={
            "tags": [str(check.pillar), check.slug, "security"],
            "precision": "high",
            "security-severity": SECURITY_SEVERITY[check.severity],
            "pillar": str(check.pillar),
        },
    )


def _location(item: Finding | Undetermined, uris: ArtifactUris) -> om.Location:
    resource = item.resource
    logical = []
    if resource.origin.address:
        logical.append(
            om.LogicalLocation(name=resource.name, fully_qualified_name=resource.origin.address, kind="resource")
        )
    logical.append(om.LogicalLocation(name=resource.name, fully_qualified_name=resource.id, kind="resource"))
    return om.Location(physical_location=uris.location(item.place, resource.id), logical_locations=logical)


def _scanned_location(item: Finding, uris: ArtifactUris) -> list[om.Location] | None:
    """The plan's or compiled template's own position, when the result points at the source
    people wrote: kept so that a reader can still find the resource in what was scanned."""
    related = item.related_place
    if related is None:
        return None
    return [
        om.Location(
            id=0,
            physical_location=uris.location(related, item.resource.id),
            message=om.Message(text="where the scanned file declares it"),
        )
    ]


def _result(finding: Finding, rule_index: int, uris: ArtifactUris) -> om.Result:
    properties: dict[str, Any] = {
        "severity": finding.severity.label,
        "pillar": str(finding.check.pillar),
        "resourceId": finding.resource.id,
        "resourceType": finding.resource.type,
        "evidence": plain(
            {
                "path": finding.violation.path,
                "observed": finding.violation.observed,
                "expected": finding.violation.expected,
            }
        ),
        "cost": cost_json(finding.cost),
    }
    result = om.Result(
        rule_id=finding.check.id,
        rule_index=rule_index,
        level=LEVEL[finding.severity],
        message=om.Message(text=finding.violation.message),
        locations=[_location(finding, uris)],
        related_locations=_scanned_location(finding, uris),
        partial_fingerprints={
            "primaryLocationLineHash": f"{finding.fingerprint[:16]}:1",
            "azaiFingerprint/v1": finding.fingerprint,
        },
        properties=properties,
    )
    if finding.suppression is not None:
        entry: dict[str, Any] = {
            "kind": finding.suppression.kind,
            "status": "accepted",
            "justification": finding.suppression.justification,
        }
        if finding.suppression.expires:
            entry["properties"] = {"expires": finding.suppression.expires}
        result.suppressions = [entry]
    if finding.baseline_state is not None:
        result.baseline_state = finding.baseline_state
    return result


def _absent_result(entry: Any, rule_index: int, uris: ArtifactUris) -> om.Result:
    place = Place(entry.uri, entry.start_line, entry.start_column) if entry.uri else None
    return om.Result(
        rule_id=entry.rule_id,
        rule_index=rule_index,
        kind="pass",
        level="none",
        message=om.Message(text=f"No longer found: {entry.message}"),
        locations=[
            om.Location(
                physical_location=uris.location(place, entry.resource_id),
                logical_locations=[
                    om.LogicalLocation(
                        name=entry.resource_name, fully_qualified_name=entry.resource_id, kind="resource"
                    )
                ],
            )
        ],
        partial_fingerprints={
            "primaryLocationLineHash": f"{entry.fingerprint[:16]}:1",
            "azaiFingerprint/v1": entry.fingerprint,
        },
        baseline_state="absent",
    )


def _notification(
    text: str, level: str, item: Undetermined | None = None, uris: ArtifactUris | None = None
) -> om.Notification:
    notification = om.Notification(message=om.Message(text=text), level=level)
    if item is not None and uris is not None:
        notification.locations = [_location(item, uris)]
        notification.associated_rule = om.ReportingDescriptorReference(id=item.check.id)
    return notification


def _used_rules(
    checks: list[Check], findings: list[Finding], absent: list[Any], undecided: list[Undetermined]
) -> list[Check]:
    """The rules a run's results and notes refer to, in catalog order. Listing only these keeps
    the log small and makes goldens change only where results do; a rule's full help still
    reaches code scanning with its first result."""
    used = {f.check.id for f in findings} | {e.rule_id for e in absent} | {u.check.id for u in undecided}
    return [c for c in checks if c.id in used]


def _run(kind: str, result: ScanResult, cut: list[str], uris: ArtifactUris) -> dict[str, Any]:
    """One run as plain JSON values. Each result is built as sarif-om objects and walked at once,
    so the objects of only one are held at a time (all of them at once were a quarter of the
    peak memory at 16,000 results); the run gets the walked list."""
    findings = [f for f in result.findings if f.resource.origin.kind == kind]
    absent = [e for e in result.absent if e.source == kind]
    undecided = [u for u in result.undetermined if u.resource.origin.kind == kind]
    over = len(findings) + len(absent) - MAX_RESULTS_PER_RUN
    cut_text = None
    if over > 0:  # cut before building: findings come most severe first, and outrank absent entries
        cut_text = (
            f"SARIF: {len(findings) + len(absent)} results exceed GitHub's limit of {MAX_RESULTS_PER_RUN} per run; "
            "the least severe were cut"
        )
        cut.append(f"{cut_text} ({category(kind)})")
        findings = findings[:MAX_RESULTS_PER_RUN]
        absent = absent[: MAX_RESULTS_PER_RUN - len(findings)]
    checks = _used_rules(result.checks, findings, absent, undecided)
    index = {c.id: i for i, c in enumerate(checks)}
    results = [_plain(_result(f, index[f.check.id], uris)) for f in findings]
    results += [_plain(_absent_result(e, index.get(e.rule_id, -1), uris)) for e in absent]
    notifications = _notifications(result, undecided, uris, cut_text)
    run: dict[str, Any] = _plain(
        om.Run(
            tool=om.Tool(
                driver=om.ToolComponent(
                    name="azai",
                    full_name=f"azai {__version__}",
                    version=__version__,
                    semantic_version=__version__,
                    information_uri=INFORMATION_URI,
                    rules=[_rule(c) for c in checks],
                )
            ),
            automation_details=om.RunAutomationDetails(id=category(kind)),
            column_kind="unicodeCodePoints",
            invocations=[om.Invocation(execution_successful=True, tool_execution_notifications=notifications)],
            results=[],
        )
    )
    run["results"] = results  # in the place sarif-om gave the empty list
    return run


def _notifications(
    result: ScanResult, undecided: list[Undetermined], uris: ArtifactUris, cut_text: str | None
) -> list[om.Notification]:
    """A run's tool-execution notifications: a note for each of its undecided rule and resource
    pairs, at the resource; the scan's warnings, coverage gaps (errors: what was not read) and
    unread types; last, the warning that results were cut (``cut_text``), so that a reader of
    the log alone learns that it does not hold everything."""
    notifications = [
        _notification(f"{u.check.id} {u.check.slug} could not decide on {u.resource.name}: {u.reason}", "note", u, uris)
        for u in undecided
    ]
    notifications += [_notification(w, "warning") for w in result.warnings]
    notifications += [
        _notification(f"not scanned: {gap.scope} ({gap.status_label}): {gap.reason}", "error")
        for gap in result.coverage
    ]
    notifications += [
        _notification(text, "warning" if ai else "note") for ai, text in unread_lines(result.unread_types)
    ]
    if cut_text is not None:
        notifications.append(_notification(cut_text, "warning"))
    return notifications


def _kinds(result: ScanResult) -> list[str]:
    present = {str(i["kind"]) for i in result.inputs}
    kinds = [k for k in KIND_ORDER if k in present] + sorted(present - set(KIND_ORDER))
    return kinds or ["terraform"]


_FIELDS: dict[type, tuple[tuple[str, str, Any], ...] | None] = {}


def _schema_fields(cls: type) -> tuple[tuple[str, str, Any], ...] | None:
    """(attribute, schema property name, default) of a sarif-om class, read once per class; None
    for a class that is not one (attrs.has on every value cost a third of the walk)."""
    if cls not in _FIELDS:
        fields = None
        if attrs.has(cls):
            fields = []
            for field in attrs.fields(cls):
                default = field.default
                if isinstance(default, attrs.Factory):  # type: ignore[arg-type]  # attrs types Factory as a function
                    default = default.factory()
                fields.append((field.name, field.metadata.get("schema_property_name", field.name), default))
        _FIELDS[cls] = tuple(fields) if fields is not None else None
    return _FIELDS[cls]


def _plain(value: Any) -> Any:
    """A sarif-om object tree as plain JSON values: each object's fields under their schema names,
    a field equal to its default left out, as sarif-om's own serializer does it, but in one
    shallow pass (that serializer deep-copies every object at every level)."""
    kind = type(value)
    if kind in _SCALARS or value is None:
        return value
    if kind is list:
        return [_plain(item) for item in value]
    if kind is dict:
        return {key: _plain(item) for key, item in value.items()}
    fields = _schema_fields(kind)
    if fields is None:
        return value
    out = {}
    for name, schema_name, default in fields:
        item = getattr(value, name)
        # Identity first: most fields are unset (None), and `!=` on a sarif-om object runs
        # attrs' Python-level comparison.
        if item is default or (default is not None and item == default):
            continue
        out[schema_name] = item if type(item) in _SCALARS else _plain(item)
    return out


_SCALARS = frozenset((str, int, float, bool))


def _serialize(document: dict[str, Any]) -> bytes:
    """Compact JSON, written by the C encoder (an indented dump runs the pure-Python one). The
    newline is appended in place (the text has no other reference), not in a copy of it."""
    text = json.dumps(document, separators=(",", ":"))
    text += "\n"
    return text.encode("utf-8")


def _too_large(data: bytes) -> bool:
    """Over GitHub's gzipped limit. Compressing is skipped when the text itself is under it, and
    so is gzip's default level when deflate's fastest level already fits (on a 21 MB log:
    1.24 MB in 0.06 s, against 1.01 MB in 0.25 s). That rests on the fastest level never
    compressing better than the default by more than gzip's extra framing; deflate does not
    promise it, but on the 21 MB log the fastest level is over 200 KB larger, not smaller."""
    if len(data) <= MAX_GZIP_BYTES or len(zlib.compress(data, 1)) + _GZIP_FRAMING <= MAX_GZIP_BYTES:
        return False
    return len(gzip.compress(data)) > MAX_GZIP_BYTES


_GZIP_FRAMING = 18  # gzip's header and trailer, which zlib's 6 bytes stand in for


def render(result: ScanResult, repository_root: Path) -> tuple[bytes, list[str]]:
    """The SARIF log, with URIs relative to ``repository_root``, and warnings about anything
    cut to fit GitHub's limits."""
    cut: list[str] = []
    uris = ArtifactUris(repository_root)
    kinds = _kinds(result)
    if len(kinds) > MAX_RUNS:
        cut.append(f"SARIF: {len(kinds)} runs exceed GitHub's limit of {MAX_RUNS}; later runs were dropped")
        kinds = kinds[:MAX_RUNS]
    # What is written, and cut if need be, is the plain tree.
    document = _plain(om.SarifLog(version="2.1.0", schema_uri=SCHEMA_URI, runs=[]))
    document["runs"] = [_run(kind, result, cut, uris) for kind in kinds]
    data = _serialize(document)
    while _too_large(data) and any(run["results"] for run in document["runs"]):
        for run in document["runs"]:
            run["results"] = run["results"][: len(run["results"]) // 2]
        data = _serialize(document)
        message = "SARIF: output exceeded GitHub's 10 MB (gzipped) limit; results were cut, least severe first"
        if message not in cut:
            cut.append(message)
    return data, cut
