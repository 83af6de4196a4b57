"""Contributor commands: generated documentation, and a new rule's scaffold."""

from __future__ import annotations

import sys
from pathlib import Path

from scanner.dev.scaffold import REPOSITORY, ScaffoldError, new_rule
from scanner.engine.checkapi import Check
from scanner.engine.registry import load_checks
from scanner.engine.ruledocs import generate, readme_with_rules
from scanner.errors import InputError

USAGE = """usage: python -m scanner.dev docs [--root DIR]
       python -m scanner.dev new-rule AZAI-NNN slug [--root DIR]

docs      writes docs/rules/ and README.md's rule table from the rules
new-rule  writes a working example rule and its fixture estate, renders the estate's
          four forms and the docs; edit both files, then see README.md, "Writing a rule"
--root    the checkout to work in (default: this one)"""


def _builtin_checks(root: Path) -> list[Check]:
    """Every rule, after making sure the built-in ones are ``root``'s: docs written into one
    checkout from another checkout's rules would be silently wrong."""
    checks = load_checks()
    expected = (root / "checks").resolve()
    for check in checks:
        module = sys.modules.get(check.module)
        origin = Path(module.__file__).resolve().parent if module and module.__file__ else None
        if check.id.startswith("AZAI-") and origin != expected:
            raise ScaffoldError(f"the rules loaded are from {origin}, not {expected}: run from {root}")
    return checks


def write_docs(root: Path) -> int:
    """Write docs/rules/ (removing pages of rules that are gone) and README.md's rule table."""
    checks = _builtin_checks(root)
    target = root / "docs" / "rules"
    target.mkdir(parents=True, exist_ok=True)
    files = generate(checks)
    for stale in [*target.glob("*.md"), *target.glob("*.json")]:
        if stale.name not in files:
            stale.unlink()
    for name, content in files.items():
        (target / name).write_text(content, encoding="utf-8")
    readme = root / "README.md"
    text = readme.read_text(encoding="utf-8")
    try:
        updated = readme_with_rules(text, checks)
    except ValueError as exc:
        raise ScaffoldError(str(exc)) from None
    if updated != text:
        readme.write_text(updated, encoding="utf-8")
    print(f"wrote {len(files)} files to {target} and the rule table in {readme}")
    return 0


def _split_root(args: list[str]) -> tuple[list[str], Path]:
    """The arguments without ``--root DIR`` (or ``--root=DIR``), and the root."""
    rest: list[str] = []
    root = REPOSITORY
    items = iter(args)
    for arg in items:
        if arg == "--root":
            value = next(items, None)
            if value is None:
                raise ScaffoldError("--root needs a directory")
            root = Path(value)
        elif arg.startswith("--root="):
            root = Path(arg.split("=", 1)[1])
        elif arg.startswith("-"):
            raise ScaffoldError(f"unknown option {arg}")
        else:
            rest.append(arg)
    if not (root / "checks").is_dir() or not (root / "README.md").is_file():
        raise ScaffoldError(f"{root} is not an azai checkout (no checks/ or README.md): pass --root DIR")
    return rest, root


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args[:1] not in (["docs"], ["new-rule"]):
        print(USAGE, file=sys.stderr)
        return 2
    try:
        rest, root = _split_root(args[1:])
        if args[0] == "docs" and not rest:
            return write_docs(root)
        if args[0] == "new-rule" and len(rest) == 2:
            return new_rule(rest[0], rest[1], root)
    except ScaffoldError as exc:
        print(f"{args[0]}: {exc}", file=sys.stderr)
        return exc.code
    except InputError as exc:  # a rule that does not load: the registry names it
        print(f"{args[0]}: {exc}", file=sys.stderr)
        return 2
    print(USAGE, file=sys.stderr)
    return 2
