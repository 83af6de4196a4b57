"""A self-contained HTML report for a manager, in the order one reads it: what was scanned,
when, by which version, and whether the gate passed and why; then the counts by severity; then
the findings, most severe first; then the monthly waste, with its charts.

The waste total counts each resource once, at its largest estimate, while the by-rule chart
gives each rule's own view, so its bars can add up to more than the total: the page says so,
with both sums, beside the numbers (docs/cost.md gives the method).

No script, no CDN, no font or image fetched: inline CSS and inline SVG only, so the file opens
the same offline, in a CI artifact viewer, or attached to an email.
"""

from __future__ import annotations

import datetime as dt

from reports.common import severity_counts
from reports.escaping import html_text
from scanner import __version__
from scanner.cost.summary import CostSummary, owner_of, summarize
from scanner.engine.results import ScanResult, sort_findings
from scanner.model.pricing import SUMMARY_BASIS

BAR_COLOUR = "#2f6fdb"
_STYLE = """
body { font: 14px/1.45 system-ui, -apple-system, 'Segoe UI', sans-serif; margin: 24px; color: #1b1f24; }
h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 17px; margin: 28px 0 8px; }
.total { font-size: 30px; font-weight: 700; color: #b3261e; }
.note { color: #57606a; font-size: 12px; }
.charts { display: flex; flex-wrap: wrap; gap: 32px; }
table { border-collapse: collapse; margin-top: 8px; }
th, td { border: 1px solid #d0d7de; padding: 4px 8px; text-align: left; }
th { background: #f6f8fa; } td.num { text-align: right; font-variant-numeric: tabular-nums; }
.critical { color: #b3261e; font-weight: 600; } .high { color: #c2410c; }
.medium { color: #a16207; } .low { color: #1d4ed8; }
.gate { font-size: 20px; font-weight: 700; padding: 8px 12px; display: inline-block; border-radius: 4px; }
.fail { background: #fde8e7; color: #b3261e; } .pass { background: #e6f4ea; color: #1e6b34; }
"""


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


def _money(value: float) -> str:
    return f"${value:,.2f}"


def _table(result: ScanResult, summary: CostSummary) -> str:
    """Every finding, most severe first (then rule, file and resource), whatever it costs."""
    rows = []
    for f in sort_findings(result.findings):
        cost = f.cost
        money = _money(cost.monthly_usd) if cost and cost.monthly_usd is not None else ("unknown" if cost else "")
        why = html_text(
            cost.basis if cost and cost.monthly_usd is not None else (cost.unknown_reason or "") if cost else ""
        )
        state = " (suppressed)" if f.suppression else ""
        rows.append(
            f'<tr><td class="{f.severity.label}">{f.severity.label}{state}</td><td>{f.check.id} {f.check.slug}</td>'
            f"<td>{html_text(f.resource.name)}</td><td>{html_text(owner_of(f, summary.owner_tag))}</td>"
            f'<td>{html_text(f.violation.message)}</td><td class="num">{money}</td><td class="note">{why}</td></tr>'
        )
    columns = ("severity", "rule", "resource", "owner", "finding", "monthly", "basis")
    head = "<tr>" + "".join(f"<th>{c}</th>" for c in columns) + "</tr>"
    return f'<table id="findings">{head}{"".join(rows)}</table>'


def _gate(result: ScanResult) -> str:
    """Pass or fail, and why: the threshold and how many findings reach it."""
    failing = result.failing()
    if result.fail_on is None:
        verdict, why = "pass", "no gate (--fail-on none): no finding fails the run"
    elif failing:
        verdict = "fail"
        why = (
            f"{len(failing)} finding(s) at or above {result.fail_on.label} (--fail-on {result.fail_on.label}), "
            "not suppressed" + (" and new since the baseline" if result.baseline_used else "")
        )
    else:
        verdict, why = "pass", f"no unsuppressed finding at or above {result.fail_on.label}"
    incomplete = f"; incomplete: {len(result.coverage)} scope(s) not scanned" if result.coverage else ""
    return f"<p id='gate'><span class='gate {verdict}'>{verdict.upper()}</span> {html_text(why + incomplete)}</p>"


def _scope(result: ScanResult, generated: dt.datetime) -> str:
    """What was scanned (each input, live subscriptions included), when, and by which version."""
    inputs = "".join(
        f"<li>{html_text(str(i['path']))} ({html_text(str(i['kind']))}, {i['resources']} resources)</li>"
        for i in result.inputs
    )
    return (
        f"<p id='scope' class='note'>{generated:%Y-%m-%d %H:%M} UTC · azai {__version__} · "
        f"{result.resources_scanned} resources in {len(result.inputs)} input(s)</p><ul>{inputs}</ul>"
    )


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
    head = "<tr><th>severity</th><th>findings</th></tr>"
    return f"<h2>Findings by severity</h2><table id='counts'>{head}{cells}</table>{extra}"


def _waste(summary: CostSummary) -> str:
    """The total, the charts, and why the by-rule bars may add up to more than the total."""
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
        f"<h2>Estimated waste</h2><div class='total'>{_money(total)} / month</div>{added}{unknown}"
        f"<p class='note'>{html_text(SUMMARY_BASIS)}. Every figure in the findings shows what was multiplied."
        f"</p>{agree}"
        f"<div class='charts'>{rules}{groups}</div>"
    )


def _coverage(result: ScanResult) -> str:
    """What the scan could not read, so nobody takes the report as complete."""
    if not result.coverage:
        return ""
    rows = "".join(
        f"<tr><td>{html_text(g.scope)}</td><td>{html_text(g.status_label)}</td><td>{html_text(g.reason)}</td></tr>"
        for g in result.coverage
    )
    return (
        f"<h2 id='coverage'>Incomplete: {len(result.coverage)} scope(s) not scanned</h2>"
        f"<table><tr><th>scope</th><th>status</th><th>reason</th></tr>{rows}</table>"
    )


def render(result: ScanResult, generated: dt.datetime | None = None) -> bytes:
    """The page; ``generated`` (default now, UTC) is the date it shows."""
    summary = summarize(result)
    when = generated or dt.datetime.now(dt.UTC)
    body = (
        f"<h1>azai report</h1>{_scope(result, when)}{_gate(result)}{_coverage(result)}{_counts(result)}"
        f"<h2>Findings</h2>{_table(result, summary)}{_waste(summary)}"
    )
    document = (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>azai report</title>'
        f"<style>{_STYLE}</style></head><body>{body}</body></html>\n"
    )
    return document.encode("utf-8")
