"""Rule documentation made from the rules themselves: each rule's page (also SARIF's rule help),
the catalog table, the peer rules covered, the compliance mapping and the README's rule table.

``docs/rules/`` and the block of README.md between `README_START` and `README_END` are written
from these by ``python -m scanner.dev docs``; tests regenerate both and fail when the committed
files differ, so the docs cannot drift from the code.
"""

from __future__ import annotations

import dataclasses
import json
import textwrap
from collections.abc import Iterable
from importlib import resources
from typing import Any

from scanner import RULE_PAGES
from scanner.engine.checkapi import Check, PeerRule, Pillar

COMPLIANCE_VERSION = 3
AZURE_POLICY_TOOL = "Azure Policy"  # the peer tool whose rule ids are policy definition GUIDs
README_START = "<!-- rules:start -->"
README_END = "<!-- rules:end -->"
IAC_SOURCES = frozenset({"terraform", "arm", "whatif"})
_WORDS = ("no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve")


def _peer_ids(check: Check) -> str:
    return "; ".join(f"{p.tool} {p.id}" for p in check.peers)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _peer_section(peers: tuple[PeerRule, ...]) -> list[str]:
    """The rule page's table of the peer rules it covers, with where azai decides differently."""
    if not peers:
        return []
    lines = ["## Peer rules covered", "", "| tool | rule | what it checks | where azai differs |", "|---|---|---|---|"]
    for peer in peers:
        lines.append(f"| {peer.tool} | `{peer.id}` | {_cell(peer.title)} | {_cell(peer.note) or 'agrees'} |")
    return [*lines, ""]


def _reads_row(check: Check) -> list[str]:
    """What a live rule reads beyond its own types, so that a user can see what a live scan
    limited to it (``--select``) requests, and which read permissions it needs."""
    if "live" not in check.sources:
        return []
    reads = ", ".join(f"`{item}`" for item in check.reads) or "nothing else"
    return [f"| Live scan also reads | {reads if check.reads_declared else 'any type (not declared)'} |"]


def rule_markdown(check: Check) -> str:
    """One rule's page: metadata table, then its docstring, the peer rules it covers, remediation."""
    sources = ", ".join(sorted(check.sources))
    lines = [
        f"# {check.id} {check.slug}",
        "",
        f"**{check.title}**",
        "",
        "| | |",
        "|---|---|",
        f"| Pillar | {check.pillar} |",
        f"| Default severity | {check.severity.label} |",
        f"| Resource types | {', '.join(f'`{t}`' for t in check.resource_types)} |",
        f"| Sources | {sources} |",
        *_reads_row(check),
        f"| Principle | {check.principle.text} ([source]({check.principle.source})) |",
        f"| Peer rules covered | {_peer_ids(check) or 'none: no peer checks this'} |",
        "",
        check.doc.strip(),
        "",
        *_peer_section(check.peers),
        *_remediation_section(check),
    ]
    return "\n".join(lines)


FENCES = (("Terraform", "hcl"), ("Bicep / ARM", "bicep"), ("Azure CLI", "sh"))


def _remediation_section(check: Check) -> list[str]:
    """The fix in each form: the sentence, then the fixed code as a fenced block when the rule
    gives one (``hcl``, ``bicep``, ``sh``, as GitHub highlights them)."""
    fix = check.remediation
    forms = ((fix.terraform, fix.terraform_code), (fix.bicep, fix.bicep_code), (fix.cli, fix.cli_code))
    lines = ["## Remediation", ""]
    for (label, language), (prose, code) in zip(FENCES, forms, strict=True):
        lines += [f"**{label}:** {prose}", ""]
        if code.strip():
            lines += [f"```{language}", textwrap.dedent(code).strip("\n"), "```", ""]
    reference = f"Guide: {fix.guide}" if fix.guide and fix.guide != check.help_uri else f"More: {check.help_uri}"
    return [*lines, reference, ""]


def catalog_markdown(checks: list[Check], link: bool = True) -> str:
    """One table of the rules, grouped by pillar."""
    lines = ["| id | slug | pillar | severity | title | peer rules covered |", "|---|---|---|---|---|---|"]
    for check in sorted(checks, key=lambda c: (list(Pillar).index(c.pillar), c.id)):
        ident = f"[{check.id}]({check.id}.md)" if link else check.id
        peers = _peer_ids(check) or "none"
        lines.append(f"| {ident} | {check.slug} | {check.pillar} | {check.severity.label} | {check.title} | {peers} |")
    return "\n".join(lines) + "\n"


def index_markdown(checks: list[Check]) -> str:
    header = "# Rules\n\nGenerated from the rule code by `python -m scanner.dev docs`; do not edit by hand.\n\n"
    return header + catalog_markdown(checks)


def compliance_json(checks: list[Check]) -> str:
    """The compliance mapping as data: each rule's pillar and principle, the peer rules it covers,
    the reverse index a team reads to find the azai rule for a policy it already runs, and the
    regulatory-compliance initiatives' controls with the azai rules that cover their policies."""
    rules = {
        c.id: {
            "slug": c.slug,
            "title": c.title,
            "pillar": str(c.pillar),
            "severity": c.severity.label,
            "principle": c.principle.text,
            "principle_source": c.principle.source,
            "peers": [dataclasses.asdict(p) for p in c.peers],
        }
        for c in checks
    }
    by_peer: dict[str, dict[str, list[str]]] = {}
    for check in checks:
        for peer in check.peers:
            by_peer.setdefault(peer.tool, {}).setdefault(peer.id, []).append(check.id)
    ordered = {tool: dict(sorted(ids.items())) for tool, ids in sorted(by_peer.items())}
    document = {
        "azai_compliance": COMPLIANCE_VERSION,
        "rules": rules,
        "by_peer": ordered,
        "initiatives": initiatives_mapping(checks),
    }
    return json.dumps(document, indent=2) + "\n"


def bundled_initiatives() -> dict[str, Any]:
    """The Azure Policy regulatory-compliance initiatives bundled in ``data/initiatives.json``:
    per initiative its name, version and source, and per control the policy definition GUIDs it
    groups, as transcribed from the initiative's definition."""
    text = resources.files("scanner").joinpath("data/initiatives.json").read_text(encoding="utf-8")
    loaded: dict[str, Any] = json.loads(text)
    return loaded


def initiatives_mapping(checks: list[Check]) -> dict[str, Any]:
    """Each bundled initiative with, per control, the azai rules that declare one of the control's
    policy definitions as an Azure Policy peer rule: a mapping derived from the declarations, so a
    control no rule's peer is in maps to no rule."""
    data = bundled_initiatives()
    covering: dict[str, set[str]] = {}
    for check in checks:
        for peer in check.peers:
            if peer.tool == AZURE_POLICY_TOOL:
                covering.setdefault(peer.id.lower(), set()).add(check.id)
    mapped: dict[str, Any] = {}
    for guid, initiative in sorted(data["initiatives"].items()):
        controls = {
            control_id: {
                "policies": control["policies"],
                "azai_rules": sorted({r for p in control["policies"] for r in covering.get(p.lower(), ())}),
            }
            for control_id, control in initiative["controls"].items()
        }
        entry = {key: value for key, value in initiative.items() if key != "controls"}
        mapped[guid] = {**entry, "as_of": data["as_of"], "controls": controls}
    return mapped


def peers_markdown(checks: list[Check]) -> str:
    """Every peer rule the rules cover, by tool, with the azai rule and where it decides differently."""
    rows = sorted(((p, c) for c in checks for p in c.peers), key=lambda pc: (pc[0].tool.lower(), pc[0].id, pc[1].id))
    lines = [
        "# Peer rules covered",
        "",
        "Generated from the rule code by `python -m scanner.dev docs`; do not edit by hand. Peer rules",
        "azai leaves out on purpose, and why, are in [../peers.md](../peers.md).",
        "",
        "| tool | peer rule | what it checks | azai rule | where azai differs |",
        "|---|---|---|---|---|",
    ]
    for peer, check in rows:
        note = _cell(peer.note) or "agrees"
        lines.append(f"| {peer.tool} | `{peer.id}` | {_cell(peer.title)} | [{check.id}]({check.id}.md) | {note} |")
    return "\n".join(lines) + "\n"


def generate(checks: list[Check]) -> dict[str, str]:
    """File name -> content for ``docs/rules/``."""
    files = {f"{c.id}.md": rule_markdown(c) for c in checks}
    files["README.md"] = index_markdown(checks)
    files["compliance.json"] = compliance_json(checks)
    files["peers.md"] = peers_markdown(checks)
    return files


def is_drift_rule(check: Check) -> bool:
    """A rule that runs only in ``azai drift``."""
    return check.sources == frozenset({"drift"})


def is_live_only(check: Check) -> bool:
    """A rule that needs data only a live scan has (metrics, image versions): no IaC fixtures."""
    return not is_drift_rule(check) and not check.sources & IAC_SOURCES


def _number(n: int) -> str:
    return _WORDS[n] if n < len(_WORDS) else str(n)


def _pillar_rows(checks: Iterable[Check]) -> list[tuple[str, list[Check]]]:
    """(row label, rules) in id order: one row per pillar, ordered by its first rule, then drift."""
    rows: dict[str, list[Check]] = {}
    drift = []
    for check in sorted(checks, key=lambda c: c.id):
        if is_drift_rule(check):
            drift.append(check)
        else:
            rows.setdefault(str(check.pillar), []).append(check)
    ordered = list(rows.items())
    if drift:
        ordered.append(("Drift (`azai drift`)", drift))
    return ordered


def _row_cell(checks: list[Check], prefix: str) -> str:
    """``[AZAI-101](…) anonymous-endpoint · [102](…) shared-gpu-pool (live) · …``: the first id
    in full, the rest by number within their pack, live-only rules marked."""
    cells = []
    for i, check in enumerate(checks):
        shown = check.id if i == 0 or check.id.split("-")[0] != checks[i - 1].id.split("-")[0] else check.id[-3:]
        live = " (live)" if is_live_only(check) else ""
        cells.append(f"[{shown}]({prefix}{check.id}.md) {check.slug}{live}")
    return " · ".join(cells)


def readme_rules_markdown(checks: list[Check], prefix: str = "docs/rules/") -> str:
    """The README's summary of the rules: how many, and one row of links per pillar."""
    special = [c for c in checks if is_drift_rule(c) or is_live_only(c)]
    count = f"{len(checks)} rules, each written once and run on plans, templates, what-if results and live estates"
    if special:
        need = "needs" if len(special) == 1 else "need"
        count += f"\n(the {_number(len(special))} listed as live-only or drift {need} data"
        count += " only a live scan or `azai drift` has)"
    lines = [count + ".", "", "| pillar | rules |", "|---|---|"]
    lines += [f"| {label} | {_row_cell(row, prefix)} |" for label, row in _pillar_rows(checks)]
    return "\n".join(lines) + "\n"


def readme_with_rules(readme: str, checks: list[Check]) -> str:
    """README.md with the block between `README_START` and `README_END` regenerated."""
    start, end = readme.find(README_START), readme.find(README_END)
    if start < 0 or end < start:
        raise ValueError(f"README.md lacks the {README_START} ... {README_END} markers around its rule table")
    head = readme[: start + len(README_START)]
    return f"{head}\n{readme_rules_markdown(checks, RULE_PAGES)}\n{readme[end:]}"
