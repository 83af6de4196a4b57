"""Markdown for pull-request comments and ``$GITHUB_STEP_SUMMARY``.

Counts first (by severity and by pillar), then the findings grouped by rule, the rules with the
most severe findings first, each rule with its resources in a table and the why-and-how-to-fix
folded away in ``<details>``, then what could not be decided and what was accepted. GitHub
renders it as is; so do Azure DevOps and GitLab.

Hosts cap what they show: a GitHub PR comment holds 65,536 characters and a step summary 1 MiB
(a larger one aborts the step). ``render`` keeps a report within ``max_bytes``: over it, the
counts stay, then the most severe findings that fit, and a last line says what was left out
and where the full report is. A byte bound is also a character bound, as no character takes
fewer than one byte.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass

from reports import MIN_MAX_BYTES
from reports.common import authors_line, history_of, place_text, resource_label, severity_counts, unread_lines
from reports.escaping import markdown_code, markdown_text
from scanner import __version__
from scanner.cost.summary import CostSummary, summarize
from scanner.drift.attribution import Attribution, History, when_text
from scanner.drift.compare import DriftReport
from scanner.engine.checkapi import Check, Pillar, Severity
from scanner.engine.results import Finding, ScanResult, Undetermined, UnreadType, sort_findings
from scanner.model.pricing import SUMMARY_BASIS
from scanner.model.resources import CoverageGap
from scanner.model.shown import json_text

DEFAULT_MAX_BYTES = 65_536  # a GitHub pull-request comment holds 65,536 characters

# No finding's table row is shorter: "| ", the severity icon (4 bytes), a space, the shortest
# label ("low"), four " | ", the closing " |" and the newline come to 25 bytes. So no more than
# a report's size over this many findings can fit, and 16,000 rows are not rendered to cut
# them to 64 KB.
_MIN_ROW_BYTES = 24

_ICON = {Severity.CRITICAL: "🔴", Severity.HIGH: "🟠", Severity.MEDIUM: "🟡", Severity.LOW: "🔵"}


def _where(finding: Finding) -> str:
    origin = finding.resource.origin
    place = finding.place
    where = place_text(place, column=False) if place else "live"
    return markdown_code(where) + (f" {markdown_code(origin.address)}" if origin.address else "")


def _rule_section(check: Check, findings: list[Finding], history: History | None = None) -> list[str]:
    lines = [f"### {check.id} {check.slug} ({len(findings)})", "", f"**{check.title}** · {check.pillar}", ""]
    lines += ["| severity | resource | type | where | finding |", "|---|---|---|---|---|"]
    changes = history.by_finding if history else {}
    for f in findings:
        state = f" ({f.baseline_state})" if f.baseline_state else ""
        change = changes.get(f.fingerprint)
        witness = f"<br>{markdown_text(change.line)}" if change else ""
        lines.append(
            f"| {_ICON[f.severity]} {f.severity.label}{state} | {markdown_code(f.resource.name)} "
            f"| {markdown_text(f.resource.type)} | {_where(f)} | {markdown_text(f.violation.message)}{witness} |"
        )
    lines += [
        "",
        "<details><summary>Why it matters and how to fix it</summary>",
        "",
        f"{check.principle.text} ([source]({check.principle.source}))",
        "",
        f"- **Terraform:** {check.remediation.terraform}",
        f"- **Bicep / ARM:** {check.remediation.bicep}",
        f"- **Azure CLI:** {check.remediation.cli}",
        "",
        f"Rule documentation: `azai rules {check.id}` · {check.help_uri}",
        "",
        "</details>",
        "",
    ]
    return lines


def _money(value: float) -> str:
    return f"${value:,.2f}"


def _cost_section(summary: CostSummary) -> list[str]:
    """Monthly waste, in the spirit of Infracost's pull-request comment."""
    if not summary.with_cost and not summary.unknown:
        return []
    lines = [f"### 💸 Estimated waste: {_money(summary.total_monthly_usd)} a month", ""]
    if summary.added_by_plans_usd:
        lines += [
            f"Merging these plans adds **{_money(summary.added_by_plans_usd)} a month** of always-on AI compute.",
            "",
        ]
    lines += ["| rule | monthly |", "|---|---:|"]
    lines += [f"| {markdown_text(rule)} | {_money(value)} |" for rule, value in summary.by_rule.items()]
    lines += ["", "| resource group | monthly |", "|---|---:|"]
    lines += [f"| {markdown_text(group)} | {_money(value)} |" for group, value in summary.by_resource_group.items()]
    lines += ["", f"| owner (tag {markdown_code(summary.owner_tag)}) | monthly |", "|---|---:|"]
    lines += [f"| {markdown_text(owner)} | {_money(value)} |" for owner, value in summary.by_owner.items()]
    lines += ["", "<details><summary>Top wasters and how each figure was computed</summary>", ""]
    lines += ["| resource | rule | monthly | basis | price source |", "|---|---|---:|---|---|"]
    for f in summary.top:
        assert f.cost is not None and f.cost.price is not None and f.cost.monthly_usd is not None
        source = f"[{f.cost.price.as_of}]({f.cost.price.source})"
        lines.append(
            f"| {markdown_code(f.resource.name)} | {f.check.id} | {_money(f.cost.monthly_usd)} "
            f"| {markdown_text(f.cost.basis)}; {markdown_text('; '.join(f.cost.assumptions[:-1]))} | {source} |"
        )
    if summary.unknown:
        lines += ["", f"Cost unknown for {len(summary.unknown)} finding(s), never counted as $0:", ""]
        lines += [
            f"- {markdown_code(f.resource.name)} ({f.check.id}): "
            f"{markdown_text((f.cost.unknown_reason if f.cost else None) or '')}"
            for f in summary.unknown
        ]
    lines += ["", f"Prices: {SUMMARY_BASIS}.", "", "</details>", ""]
    return lines


def _header(result: ScanResult, active: list[Finding]) -> list[str]:
    """The verdict and the counts by severity and by pillar: what a reviewer reads first."""
    counts = severity_counts(result, active)
    failing = result.failing()
    if result.fail_on is None:  # no gate: a green tick would read as a pass nothing decided
        verdict = "⚪ **not gated** (`--fail-on none`): nothing was judged"
    elif failing:
        verdict = f"❌ **{len(failing)} finding(s) at or above {result.fail_on.label}**"
    else:
        verdict = f"✅ nothing fails the gate (`--fail-on {result.fail_on.label}`)"
    lines = [
        f"## azai: {len(active)} finding(s), {len(result.undetermined)} undetermined",
        "",
        f"{verdict} · {result.resources_scanned} resources in {len(result.inputs)} input(s) · azai {__version__}",
        "",
        "| severity | findings |",
        "|---|---|",
    ]
    lines += [f"| {_ICON[s]} {s.label} | {counts[s.label]} |" for s in sorted(Severity, reverse=True)]
    pillars = Counter(str(f.check.pillar) for f in active)
    lines += ["", "| pillar | findings |", "|---|---|"]
    lines += [f"| {p} | {pillars.get(str(p), 0)} |" for p in Pillar]
    if result.baseline_used:
        new = sum(1 for f in active if f.baseline_state == "new")
        lines += ["", f"Against the baseline: {new} new, {len(active) - new} unchanged, {len(result.absent)} fixed."]
    lines.append("")
    return lines


def _findings_section(result: ScanResult, shown: list[Finding]) -> list[str]:
    """One section per rule that found something: the rules with the most severe findings first
    (in the order the rules ran within a severity), so a critical finding never sits below a
    medium one, and a cut report keeps the sections a reviewer must read. Among rules whose worst
    finding is as severe, those whose mildest is more severe come first, so that a rule with a
    high and a medium finding does not put its medium row above another rule's high ones."""
    groups = [(check, [f for f in shown if f.check.id == check.id]) for check in result.checks]
    ranked = sorted(
        ((c, g) for c, g in groups if g),
        key=lambda cg: (-max(f.severity for f in cg[1]), -min(f.severity for f in cg[1])),
    )
    history = history_of(result)
    return [line for check, group in ranked for line in _rule_section(check, group, history)]


def _undetermined_section(undetermined: list[Undetermined]) -> list[str]:
    """Checks that could not decide, folded away but counted, so nobody reads them as passed."""
    if not undetermined:
        return []
    lines = [
        f"### Undetermined ({len(undetermined)})",
        "",
        "These rules could not decide because a deciding value is unknown before deploy; they did not pass.",
        "",
        "<details><summary>Show the undetermined checks</summary>",
        "",
        "| rule | resource | reason |",
        "|---|---|---|",
    ]
    lines += [f"| {u.check.id} | {markdown_code(u.resource.name)} | {markdown_text(u.reason)} |" for u in undetermined]
    lines += ["", "</details>", ""]
    return lines


def _suppressed_section(suppressed: list[Finding]) -> list[str]:
    """Accepted findings with their justification and expiry: visible, but not counted by the gate."""
    if not suppressed:
        return []
    lines = [
        f"### Suppressed ({len(suppressed)})",
        "",
        "<details><summary>Show the accepted findings</summary>",
        "",
        "| rule | resource | justification | expires |",
        "|---|---|---|---|",
    ]
    for f in suppressed:
        assert f.suppression is not None
        lines.append(
            f"| {f.check.id} | {markdown_code(f.resource.name)} | {markdown_text(f.suppression.justification)} "
            f"| {markdown_text(f.suppression.expires or '')} |"
        )
    lines += ["", "</details>", ""]
    return lines


def _drift_section(report: DriftReport | None) -> list[str]:
    """What changed between the two estates `azai drift` compared, property by property."""
    if report is None:
        return []
    lines = [
        f"### Drift ({report.mode}): {len(report.changed)} changed, "
        f"{len(report.added)} added, {len(report.removed)} removed",
        "",
        f"{markdown_code(report.base)} → {markdown_code(report.current)}",
        "",
        "| resource | property | before | after |",
        "|---|---|---|---|",
    ]
    for resource, changes in report.changed:
        lines += [
            f"| {markdown_code(resource.name)} | {markdown_code(c.path)} | {markdown_code(json_text(c.before))} "
            f"| {markdown_code(json_text(c.after))} |"
            for c in changes
        ]
    made = report.history.by_resource if report.history else {}
    lines += [
        f"| {markdown_code(r.name)} | (added) | | {markdown_text(r.type)}{_made_by(made, r.id)} |" for r in report.added
    ]
    lines += [
        f"| {markdown_code(r.name)} | (removed) | {markdown_text(r.type)}{_made_by(made, r.id)} | |"
        for r in report.removed
    ]
    if report.appeared or report.resolved:
        lines += ["", f"Findings appeared: {len(report.appeared)}, resolved: {len(report.resolved)}.", ""]
        lines += [f"- appeared: {f.check.id} {markdown_code(f.resource.name)}" for f in report.appeared]
        lines += [f"- resolved: {f.check.id} {markdown_code(f.resource.name)}" for f in report.resolved]
    lines.append("")
    return lines


def _made_by(made: dict[str, Attribution], resource_id: str) -> str:
    """Who created or deleted an added or removed resource, on a line of the cell's own."""
    attribution = made.get(resource_id.lower())
    return f"<br>{markdown_text(attribution.line)}" if attribution else ""


def _timeline_section(history: History | None) -> list[str]:
    """The drift's change records in time order, each with its author, after a line of who
    made how many: the story of the window at a glance."""
    if history is None:
        return []
    timeline = history.timeline()
    lines = [f"### Changes in time order (Resource Graph, last {history.window_days} days)", ""]
    if not timeline:
        return [*lines, "No change record of the drifted resources.", ""]
    lines += [f"By author: {markdown_text(authors_line(history))}.", ""]
    lines += ["| when | who | through | operation | resource | drifted |", "|---|---|---|---|---|---|"]
    for entry in timeline:
        record = entry.record
        who = markdown_text(record.changed_by or "(not recorded)")
        who += " (expected writer)" if entry.expected_writer else ""
        lines.append(
            f"| {when_text(record.timestamp)} | {who} | {markdown_text(record.client_type or '')} "
            f"| {markdown_code(record.operation or '')} | {markdown_code(resource_label(record.target_id))} "
            f"| {', '.join(markdown_code(w) for w in entry.what)} |"
        )
    lines.append("")
    return lines


def _coverage_section(coverage: list[CoverageGap], unread: list[UnreadType]) -> list[str]:
    """What the scan could not read, so nobody takes the report as complete, and the resource
    types it read nothing from (a warning for an AI service's), which no rule judged."""
    if not coverage and not unread:
        return []
    if coverage:
        lines = [f"### ⚠️ Incomplete: {len(coverage)} scope(s) not scanned", ""]
        lines += ["| scope | status | reason |", "|---|---|---|"]
        lines += [f"| {markdown_code(g.scope)} | {g.status_label} | {markdown_text(g.reason)} |" for g in coverage]
        lines.append("")
    else:
        lines = ["### Coverage", ""]
    for ai, text in unread_lines(unread, markdown_code):
        lines += [f"⚠️ **Warning:** {text}" if ai else text, ""]
    return lines


def _warnings_section(warnings: list[str]) -> list[str]:
    """What the scan warned about while reading its inputs."""
    if not warnings:
        return []
    return ["### Warnings", ""] + [f"- {markdown_text(w)}" for w in warnings] + [""]


def _document(lines: list[str]) -> bytes:
    return ("\n".join(lines).rstrip() + "\n").encode("utf-8")


def render(result: ScanResult, max_bytes: int = DEFAULT_MAX_BYTES) -> tuple[bytes, list[str]]:
    """The report, and a warning when it was cut to fit ``max_bytes`` (0: no limit; otherwise at
    least ``MIN_MAX_BYTES``, which always holds the counts and the last line)."""
    if 0 < max_bytes < MIN_MAX_BYTES:
        raise ValueError(f"max_bytes {max_bytes} is below {MIN_MAX_BYTES}")
    active = [f for f in result.findings if f.suppression is None]
    suppressed = [f for f in result.findings if f.suppression is not None]
    summary = summarize(result)
    head = _header(result, active)
    if not max_bytes or len(active) * _MIN_ROW_BYTES <= max_bytes:  # else the rows alone are too long
        full = _document(
            [
                *head,
                *_cost_section(summary),
                *_findings_section(result, active),
                *_undetermined_section(result.undetermined),
                *_suppressed_section(suppressed),
                *_drift_section(result.drift),
                *_timeline_section(history_of(result)),
                *_coverage_section(result.coverage, result.unread_types),
                *_warnings_section(result.warnings),
            ]
        )
        if not max_bytes or len(full) <= max_bytes:
            return full, []
    if result.coverage:
        head += [f"⚠️ **Incomplete:** {len(result.coverage)} scope(s) not scanned.", ""]
    sections = {
        "cost": bool(summary.with_cost or summary.unknown),
        "undetermined checks": bool(result.undetermined),
        "suppressed findings": bool(suppressed),
        "drift": result.drift is not None,
        "coverage": bool(result.coverage or result.unread_types),
        "warnings": bool(result.warnings),
    }
    fit = _Fit(result, head, active, [name for name, present in sections.items() if present], max_bytes)
    shown, cut = fit.most_severe()
    warning = f"markdown report cut to fit --max-bytes {max_bytes}: {len(shown)} of {len(active)} finding(s) shown"
    return cut, [warning]


@dataclass(frozen=True)
class _Fit:
    """A report cut to ``limit`` bytes: the counts (``head``), the most severe findings that fit,
    and a last line saying what was left out (``omitted`` sections) and where the whole report is."""

    result: ScanResult
    head: list[str]
    active: list[Finding]
    omitted: list[str]
    limit: int

    def report(self, shown: list[Finding]) -> bytes:
        left_out = (["the other findings"] if len(shown) < len(self.active) else []) + self.omitted
        ending = (
            f"✂️ **Cut to fit {self.limit:,} bytes:** {len(shown)} of {len(self.active)} finding(s) shown, "
            f"the most severe first; left out: {', '.join(left_out)}. "
            "The full report: run azai again with `--max-bytes 0`, or with `--format html` or `--format json`."
        )
        return _document([*self.head, *_findings_section(self.result, shown), ending])

    def most_severe(self) -> tuple[list[Finding], bytes]:
        """The longest most-severe-first prefix of the findings whose report fits, found by
        bisection (the size grows with the prefix), and that report."""
        ranked = sort_findings(self.active)
        low, high = 0, min(len(ranked), self.limit // _MIN_ROW_BYTES)
        while low < high:
            middle = (low + high + 1) // 2
            if len(self.report(ranked[:middle])) <= self.limit:
                low = middle
            else:
                high = middle - 1
        return ranked[:low], self.report(ranked[:low])
