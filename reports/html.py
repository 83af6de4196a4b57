"""A self-contained HTML report for a manager, in the order one reads it: when, by which
version and how much was scanned; the verdict, saying exactly what was decided; then what the
waste costs a month, the five costliest findings and the waste by owner, all on the first
screen; then the counts by severity, the waste charts, the long table of findings, and last
the inputs (a scan of a folder may list hundreds).

The verdict is FAIL or PASS only when a gate was applied (``--fail-on``, which ``azai scan``
sets to ``high`` unless told otherwise); a run without one (``--fail-on none``, and ``azai
demo``) is "not gated", in a neutral colour, so a page never says PASS above a critical
finding that nothing judged. Every verdict is a word as well as a colour.

The waste total counts each resource once, at its largest estimate, while the by-rule chart
gives each rule's own view, so its bars can add up to more than the total: the page says so,
with both sums, beside the numbers (docs/cost.md gives the method).

No script, no CDN, no font or image fetched: inline CSS and inline SVG only, so the file opens
the same offline, in a CI artifact viewer, or attached to an email.
"""

from __future__ import annotations

import datetime as dt

from reports.common import authors_line, change_of, history_of, resource_label, severity_counts, unread_lines
from reports.escaping import html_text
from scanner import __version__
from scanner.cost.summary import NOT_KNOWN, UNTAGGED, CostSummary, owner_of, summarize
from scanner.drift.attribution import when_text
from scanner.engine.results import Finding, ScanResult, sort_findings
from scanner.model.pricing import SUMMARY_BASIS

BAR_COLOUR = "#2f6fdb"
TOP_SHOWN = 5
# Each status's (text, background), a verdict's or an incomplete scan's: WCAG AA contrast or
# better, which tests/test_html.py checks.
STATUS_COLOURS = {
    "fail": ("#b3261e", "#fde8e7"),
    "pass": ("#1e6b34", "#e6f4ea"),
    "not-gated": ("#3d4650", "#e8ecf0"),
    "incomplete": ("#7a4100", "#fff1d6"),
}
WASTE_COLOUR = "#8f1d16"
_STYLE = (
    """
body { font: 14px/1.45 system-ui, -apple-system, 'Segoe UI', sans-serif; margin: 24px; color: #1b1f24; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; }
.note { color: #57606a; font-size: 12px; }
.charts { display: flex; flex-wrap: wrap; gap: 32px; } figure { margin: 0; }
table { border-collapse: collapse; margin-top: 8px; }
th, td { border: 1px solid #d0d7de; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f6f8fa; } td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.critical { color: #b3261e; font-weight: 600; } .high { color: #c2410c; }
.medium { color: #a16207; } .low { color: #1d4ed8; }
#verdict h2, #waste-total h2 { margin-top: 18px; }
p.decision { margin: 0 0 8px; display: flex; align-items: center; gap: 14px; }
#why { flex: 1; font-size: 15px; }
.badge { font-size: 20px; font-weight: 700; padding: 6px 14px; border-radius: 4px; border: 2px solid;
  white-space: nowrap; }
p.incomplete { padding: 6px 12px; border-left: 4px solid; }
.total { font-size: 30px; font-weight: 700; margin: 0 0 4px; """
    + f"color: {WASTE_COLOUR};"
    + """ }
.total small { font-size: 16px; font-weight: 400; color: #1b1f24; }
.summary { display: flex; flex-wrap: wrap; gap: 8px 48px; align-items: flex-start; }
.summary table { min-width: 320px; } .summary td { overflow-wrap: anywhere; max-width: 420px; }
"""
    + "".join(
        f".{name} {{ color: {text}; background: {background}; }}\n"
        for name, (text, background) in STATUS_COLOURS.items()
    )
)


def _money(value: float) -> str:
    return f"${value:,.2f}"


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _head(*columns: str) -> str:
    """A header row; a column named with a leading ``#`` is numeric (right-aligned), as its cells."""
    cells = "".join(
        f'<th scope="col" class="num">{c[1:]}</th>' if c.startswith("#") else f'<th scope="col">{c}</th>'
        for c in columns
    )
    return f"<tr>{cells}</tr>"


def _decision(result: ScanResult) -> tuple[str, str]:
    """What the run decided, as (``fail``, ``pass`` or ``not-gated``, why in one line): the gate
    and how many findings reach it, or that no gate judged the findings at all."""
    gate = result.fail_on
    active = [f for f in result.findings if f.suppression is None]
    if gate is None:
        counts = ", ".join(f"{n} {label}" for label, n in severity_counts(result, active).items() if n)
        suppressed = len(result.findings) - len(active)
        listed = (
            f"{_plural(len(active), 'finding')} listed below"
            + (f" ({counts})" if counts else "")
            + (f", and {suppressed} suppressed" if suppressed else "")
        )
        return "not-gated", f"no gate was applied (--fail-on none), so nothing was judged: {listed}"
    failing = result.failing()
    which = "not suppressed" + (" and new since the baseline" if result.baseline_used else "")
    if failing:
        reached = f"{_plural(len(failing), 'finding')} at {gate.label} or above"
        return "fail", f"fails the gate: {reached} (--fail-on {gate.label}), {which}"
    return "pass", f"passes the gate: no finding at {gate.label} or above (--fail-on {gate.label}) that is {which}"


def _verdict(result: ScanResult) -> str:
    """The verdict as a word in a badge (its colour a second signal, never the only one) and why."""
    outcome, why = _decision(result)
    word = outcome.replace("-", " ").upper()
    incomplete = (
        f"<p class='incomplete'><strong>INCOMPLETE</strong>: {len(result.coverage)} scope(s) could not be read "
        "(listed below), so what they hold was not checked.</p>"
        if result.coverage
        else ""
    )
    return (
        f"<section id='verdict'><h2>Verdict</h2><p class='decision'><span class='badge {outcome}'>{word}</span>"
        f"<span id='why'>{html_text(why)}</span></p>{incomplete}</section>"
    )


def _waste_total(summary: CostSummary) -> str:
    """The month's waste, what it is priced on, what the plans would add, and what has no price."""
    added = (
        f"<p>The scanned plans add <strong>{_money(summary.added_by_plans_usd)}</strong> a month "
        "of always-on AI compute.</p>"
        if summary.added_by_plans_usd
        else ""
    )
    unknown = (
        f"<p class='note'>Cost unknown for {len(summary.unknown)} finding(s) (no price for their size or region); "
        "they are not counted as $0.</p>"
        if summary.unknown
        else ""
    )
    return (
        f"<section id='waste-total'><h2>Estimated waste</h2>"
        f"<p class='total'>{_money(summary.total_monthly_usd)} <small>a month</small></p>"
        f"<p class='note'>Each resource counted once, at its largest estimate; {html_text(SUMMARY_BASIS)}.</p>"
        f"{added}{unknown}</section>"
    )


def _top_five(summary: CostSummary) -> str:
    """The costliest findings, each resource once, with the rule that prices it."""
    rows = "".join(
        f"<tr><td>{f.check.id} {f.check.slug}</td><td>{html_text(f.resource.name)}</td>"
        f"<td class='num'>{_money(f.cost.monthly_usd if f.cost and f.cost.monthly_usd else 0.0)}</td></tr>"
        for f in summary.top[:TOP_SHOWN]
    )
    body = f"<table>{_head('rule', 'resource', '#USD a month')}{rows}</table>" if rows else "<p>No priced waste.</p>"
    return f"<section id='top-five'><h2>The five costliest findings</h2>{body}</section>"


def _owners(summary: CostSummary) -> str:
    """The waste by the owner tag's value, adding up to the total, with each owner's share."""
    total = summary.total_monthly_usd
    rows = "".join(
        f"<tr><td>{html_text(owner)}</td><td class='num'>{_money(value)}</td>"
        f"<td class='num'>{f'{value / total:.0%}' if total else ''}</td></tr>"
        for owner, value in summary.by_owner.items()
    )
    meaning = {UNTAGGED: "no such tag on the resource or its parents", NOT_KNOWN: "the tag is set at deploy"}
    notes = "; ".join(f"{owner}: {text}" for owner, text in meaning.items() if owner in summary.by_owner)
    body = (
        f"<table>{_head('owner', '#USD a month', '#share')}{rows}</table><p class='note'>{notes}</p>"
        if rows
        else "<p>No priced waste.</p>"
    )
    tag = html_text(summary.owner_tag)
    return f"<section id='owners'><h2>Waste by owner (tag <code>{tag}</code>)</h2>{body}</section>"


def _bar_chart(title: str, data: dict[str, float], chart_id: str) -> str:
    """A horizontal bar chart as inline SVG."""
    rows = list(data.items())[:12]
    width, label_width, bar_height, gap = 560, 220, 22, 8
    height = max(1, len(rows)) * (bar_height + gap) + 30
    peak = max((v for _, v in rows), default=0.0) or 1.0
    parts = [
        f'<figure id="{chart_id}"><figcaption><strong>{html_text(title)}</strong></figcaption>',
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" role="img" '
        f'aria-label="{html_text(title)}">',
    ]
    for i, (label, value) in enumerate(rows):
        y = 10 + i * (bar_height + gap)
        length = max(2.0, (width - label_width - 110) * value / peak)
        parts.append(f'<text x="0" y="{y + 16}" font-size="12">{html_text(label[:32])}</text>')
        parts.append(
            f'<rect class="bar" x="{label_width}" y="{y}" width="{length:.1f}" height="{bar_height}" '
            f'fill="{BAR_COLOUR}"><title>{html_text(label)}: ${value:,.2f}</title></rect>'
        )
        parts.append(f'<text x="{label_width + length + 6:.1f}" y="{y + 16}" font-size="12">${value:,.0f}</text>')
    if not rows:
        parts.append('<text x="0" y="20" font-size="12">no priced waste</text>')
    parts.append("</svg></figure>")
    return "".join(parts)


def _waste_detail(summary: CostSummary) -> str:
    """The charts, and why the by-rule bars may add up to more than the total."""
    by_rule = sum(summary.by_rule.values())
    total = summary.total_monthly_usd
    agree = (
        f"<p id='dedup' class='note'>The total counts each resource once, at its largest estimate: a resource that "
        "several rules flag, or that several inputs declare (a plan and a template of one deployment), is one cost. "
        f"The resource-group bars add up to the total ({_money(total)}). The rule bars give each rule its own view, "
        f"every finding counted, and add up to {_money(by_rule)}"
        + (f", {_money(by_rule - total)} more than the total." if round(by_rule - total, 2) > 0 else ".")
        + "</p>"
    )
    rules = _bar_chart("Waste by rule, each rule its own view (USD / month)", summary.by_rule, "by-rule")
    groups = _bar_chart(
        "Waste by resource group, adding up to the total (USD / month)", summary.by_resource_group, "by-group"
    )
    return (
        f"<h2>Waste by rule and resource group</h2><p class='note'>Every figure in the findings shows what was "
        f"multiplied.</p>{agree}<div class='charts'>{rules}{groups}</div>"
    )


def _money_cell(finding: Finding) -> tuple[str, str]:
    """A finding's monthly figure and its basis, "unknown" and why when it has no price."""
    cost = finding.cost
    if cost is None:
        return "", ""
    if cost.monthly_usd is None:
        return "unknown", cost.unknown_reason or ""
    return _money(cost.monthly_usd), cost.basis


def _table(result: ScanResult, summary: CostSummary) -> str:
    """Every finding, most severe first (then rule, file and resource), whatever it costs."""
    rows = []
    for f in sort_findings(result.findings):
        money, why = _money_cell(f)
        state = " (suppressed)" if f.suppression else ""
        change = change_of(result, f)
        witness = f"<br><span class='note witness'>{html_text(change.line)}</span>" if change else ""
        rows.append(
            f'<tr><td class="{f.severity.label}">{f.severity.label}{state}</td><td>{f.check.id} {f.check.slug}</td>'
            f"<td>{html_text(f.resource.name)}</td><td>{html_text(owner_of(f, summary.owner_tag))}</td>"
            f'<td>{html_text(f.violation.message)}{witness}</td><td class="num">{money}</td>'
            f'<td class="note">{html_text(why)}</td></tr>'
        )
    head = _head("severity", "rule", "resource", "owner", "finding", "#monthly", "basis")
    return f'<h2>Findings</h2><table id="findings">{head}{"".join(rows)}</table>'


def _timeline(result: ScanResult) -> str:
    """``azai drift`` against live: the drift's change records in time order, each with its
    author, after a line of who made how many, so an auditor reads the window's story."""
    history = history_of(result)
    if history is None:
        return ""
    title = f"<h2 id='timeline'>Changes in time order (Resource Graph, last {history.window_days} days)</h2>"
    timeline = history.timeline()
    if not timeline:
        return f"{title}<p>No change record of the drifted resources.</p>"
    rows = "".join(
        f"<tr><td>{when_text(e.record.timestamp)}</td><td>{html_text(e.record.changed_by or '(not recorded)')}"
        f"{' (expected writer)' if e.expected_writer else ''}</td><td>{html_text(e.record.client_type or '')}</td>"
        f"<td>{html_text(e.record.operation or '')}</td><td>{html_text(resource_label(e.record.target_id))}</td>"
        f"<td>{html_text(', '.join(e.what))}</td></tr>"
        for e in timeline
    )
    head = _head("when", "who", "through", "operation", "resource", "drifted")
    return f"{title}<p>By author: {html_text(authors_line(history))}.</p><table id='changes'>{head}{rows}</table>"


def _scope(result: ScanResult, generated: dt.datetime) -> str:
    """When, by which version, and how much was scanned; the inputs are listed at the end."""
    return (
        f"<p id='scope' class='note'>{generated:%Y-%m-%d %H:%M} UTC · azai {__version__} · "
        f"{result.resources_scanned} resources in {len(result.inputs)} input(s)</p>"
    )


def _inputs(result: ScanResult) -> str:
    """Each input (live subscriptions included), with its kind and how many resources it holds."""
    items = "".join(
        f"<li>{html_text(str(i['path']))} ({html_text(str(i['kind']))}, {i['resources']} resources)</li>"
        for i in result.inputs
    )
    return f"<h2 id='inputs'>What was scanned</h2><ul>{items}</ul>"


def _counts(result: ScanResult) -> str:
    """Findings by severity (suppressed ones apart), and what could not be decided."""
    active = [f for f in result.findings if f.suppression is None]
    cells = "".join(
        f'<tr><td class="{label}">{label}</td><td class="num">{count}</td></tr>'
        for label, count in severity_counts(result, active).items()
    )
    extra = (
        f"<p class='note'>{len(result.findings) - len(active)} suppressed finding(s) not counted; "
        f"{len(result.undetermined)} check(s) undetermined (a deciding value is unknown before deploy).</p>"
    )
    return f"<h2>Findings by severity</h2><table id='counts'>{_head('severity', '#findings')}{cells}</table>{extra}"


def _coverage(result: ScanResult) -> str:
    """What the scan could not read, so nobody takes the report as complete, and the resource
    types it read nothing from (a warning, in the incomplete scan's colours, for an AI
    service's), which no rule judged."""
    unread = "".join(
        f"<p class='incomplete'><strong>Warning</strong>: {html_text(text)}</p>" if ai else f"<p>{html_text(text)}</p>"
        for ai, text in unread_lines(result.unread_types)
    )
    if not result.coverage:
        return f"<h2 id='coverage'>Coverage</h2>{unread}" if unread else ""
    rows = "".join(
        f"<tr><td>{html_text(g.scope)}</td><td>{html_text(g.status_label)}</td><td>{html_text(g.reason)}</td></tr>"
        for g in result.coverage
    )
    return (
        f"<h2 id='coverage'>Incomplete: {len(result.coverage)} scope(s) not scanned</h2>"
        f"<table>{_head('scope', 'status', 'reason')}{rows}</table>{unread}"
    )


def render(result: ScanResult, generated: dt.datetime | None = None) -> bytes:
    """The page; ``generated`` (default now, UTC) is the date it shows."""
    summary = summarize(result)
    when = generated or dt.datetime.now(dt.UTC)
    body = (
        f"<header><h1>azai report</h1>{_scope(result, when)}</header><main>{_verdict(result)}"
        f"{_waste_total(summary)}<div class='summary'>{_top_five(summary)}{_owners(summary)}</div>"
        f"{_coverage(result)}{_counts(result)}{_waste_detail(summary)}{_table(result, summary)}{_timeline(result)}"
        f"{_inputs(result)}"
        "</main>"
    )
    document = (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1"><title>azai report</title>'
        f"<style>{_STYLE}</style></head><body>{body}</body></html>\n"
    )
    return document.encode("utf-8")
