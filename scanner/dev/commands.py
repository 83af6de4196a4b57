"""Contributor commands: generated documentation, and a new rule's scaffold."""

from __future__ import annotations

import sys
from pathlib import Path

from scanner.engine.registry import load_checks
from scanner.engine.ruledocs import generate

USAGE = """usage: python -m scanner.dev docs [DIR]
       python -m scanner.dev new-rule AZAI-NNN slug"""


def write_docs(target: Path) -> int:
    """Write docs/rules/ from the rules, removing pages of rules that are gone."""
    target.mkdir(parents=True, exist_ok=True)
    files = generate(load_checks())
    for stale in [*target.glob("*.md"), *target.glob("*.json")]:
        if stale.name not in files:
            stale.unlink()
    for name, content in files.items():
        (target / name).write_text(content, encoding="utf-8")
    print(f"wrote {len(files)} files to {target}")
    return 0


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] == ["docs"] and len(args) <= 2:
        return write_docs(Path(args[1] if len(args) > 1 else "docs/rules"))
    print(USAGE, file=sys.stderr)
    return 2
