"""Rule documentation generated from the rules themselves.

``docs/rules/`` is this module's output (``python -m scanner.docgen``); a test regenerates it
and fails when the committed files differ, so the docs cannot drift from the code.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from scanner.checkapi import Check, Pillar


def rule_markdown(check: Check) -> str:
    """One rule's page: metadata table, then its docstring, then remediation."""
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
        f"| Principle | {check.principle.text} ([source]({check.principle.source})) |",
        f"| Peer rules covered | {', '.join(check.peers) or 'none: no peer checks this'} |",
        "",
        check.doc.strip(),
        "",
        "## Remediation",
        "",
        f"- **Terraform:** {check.remediation.terraform}",
        f"- **Bicep / ARM:** {check.remediation.bicep}",
        f"- **Azure CLI:** {check.remediation.cli}",
        "",
        f"More: {check.help_uri}",
        "",
    ]
    return "\n".join(lines)


def catalog_markdown(checks: list[Check], link: bool = True) -> str:
    """One table of the rules, grouped by pillar."""
    lines = ["| id | slug | pillar | severity | title | peer rules covered |", "|---|---|---|---|---|---|"]
    for check in sorted(checks, key=lambda c: (list(Pillar).index(c.pillar), c.id)):
        ident = f"[{check.id}]({check.id}.md)" if link else check.id
        peers = "; ".join(check.peers) or "none"
        lines.append(f"| {ident} | {check.slug} | {check.pillar} | {check.severity.label} | {check.title} | {peers} |")
    return "\n".join(lines) + "\n"


def index_markdown(checks: list[Check]) -> str:
    header = "# Rules\n\nGenerated from the rule code by `python -m scanner.docgen`; do not edit by hand.\n\n"
    return header + catalog_markdown(checks)


def compliance_json(checks: list[Check]) -> str:
    """The compliance mapping as data: each rule's pillar and the peer rules it covers."""
    mapping = {
        c.id: {"slug": c.slug, "pillar": str(c.pillar), "principle_source": c.principle.source, "peers": list(c.peers)}
        for c in checks
    }
    return json.dumps({"azai_compliance": 1, "rules": mapping}, indent=2) + "\n"


def generate(checks: list[Check]) -> dict[str, str]:
    """File name -> content for ``docs/rules/``."""
    files = {f"{c.id}.md": rule_markdown(c) for c in checks}
    files["README.md"] = index_markdown(checks)
    files["compliance.json"] = compliance_json(checks)
    return files


def main(argv: list[str]) -> int:
    from scanner.registry import load_checks

    target = Path(argv[1] if len(argv) > 1 else "docs/rules")
    target.mkdir(parents=True, exist_ok=True)
    files = generate(load_checks())
    for stale in [*target.glob("*.md"), *target.glob("*.json")]:
        if stale.name not in files:
            stale.unlink()
    for name, content in files.items():
        (target / name).write_text(content, encoding="utf-8")
    print(f"wrote {len(files)} files to {target}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
