"""A self-contained HTML report: waste charts by rule and by resource group, and the findings.

No script, no CDN, no font or image fetched: inline CSS and inline SVG only, so the file opens
the same offline, in a CI artifact viewer, or attached to an email.
"""

from __future__ import annotations

from reports.escaping import html_text
from scanner import __version__
from scanner.cost.summary import CostSummary, owner_of, summarize
from scanner.engine.results import ScanResult
from scanner.model.pricing import BASIS

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


def _table(result: ScanResult, summary: CostSummary) -> str:
    rows = []
    for f in sorted(
        result.findings, key=lambda f: (-(f.cost.monthly_usd or 0) if f.cost else 0, -f.severity, f.check.id)
    ):
        cost = f.cost
        money = f"${cost.monthly_usd:,.2f}" if cost and cost.monthly_usd is not None else ("unknown" if cost else "")
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


def render(result: ScanResult) -> bytes:
    summary = summarize(result)
    added = (
        f"<p>The scanned plans add <strong>${summary.added_by_plans_usd:,.2f}</strong> a month "
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
    body = (
        f"<h1>azai report</h1><p class='note'>azai {__version__} · {result.resources_scanned} resources · "
        f"{len(result.findings)} findings · {len(result.undetermined)} undetermined</p>"
        f"<h2>Estimated waste</h2><div class='total'>${summary.total_monthly_usd:,.2f} / month</div>{added}{unknown}"
        f"<p class='note'>{html_text(BASIS)}. Every figure below shows what was multiplied.</p>"
        f"<div class='charts'>{_bar_chart('Waste by rule (USD / month)', summary.by_rule, 'by-rule')}"
        f"{_bar_chart('Waste by resource group (USD / month)', summary.by_resource_group, 'by-group')}</div>"
        f"<h2>Findings</h2>{_table(result, summary)}{_coverage(result)}"
    )
    document = (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>azai report</title>'
        f"<style>{_STYLE}</style></head><body>{body}</body></html>\n"
    )
    return document.encode("utf-8")
