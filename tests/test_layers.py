"""Imports run one way, from the model up to the command line (docs/architecture.md).

Every import in scanner/, checks/ and reports/ is read from the source, those inside functions
included, so a lazy import against the flow fails as surely as one at the top of a module.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("scanner", "checks", "reports")

BASE = {"base"}
# Which layers each layer may import (besides itself). Sources and the engine never see each
# other: sources build the model without knowing any rule, and rules run on the model without
# knowing where it came from.
ALLOWED: dict[str, set[str]] = {
    "base": set(),
    "model": BASE,
    "sources": BASE | {"model"},
    "engine": BASE | {"model"},
    "emulator": BASE | {"model"},
    "policy": BASE | {"model", "engine"},
    "cost": BASE | {"model", "engine"},
    "drift": BASE | {"model", "engine"},
    "checks": BASE | {"model", "engine", "drift"},
    "reports": BASE | {"model", "engine", "policy", "cost", "drift"},
    "pipeline": BASE | {"model", "sources", "engine", "policy", "cost", "drift"},
    "dev": BASE | {"model", "engine"},
    "cli": BASE | {"model", "sources", "engine", "policy", "cost", "drift", "reports", "pipeline", "emulator"},
}


def layer_of(module: str) -> str | None:
    """``scanner.sources.arm.template`` -> ``sources``; None for modules outside the project."""
    parts = module.split(".")
    if parts[0] in ("checks", "reports"):
        return parts[0]
    if parts[0] != "scanner":
        return None
    if len(parts) == 1 or parts[1] in ("errors", "output", "__init__"):
        return "base"
    return "cli" if parts[1] == "__main__" else parts[1]


def imports_against_the_flow(root: Path) -> list[str]:
    """Each import whose target layer its module's layer may not use, as 'file:line a -> b'."""
    found = []
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            module = ".".join(path.relative_to(root).with_suffix("").parts)
            source = layer_of(module)
            assert source in ALLOWED, f"{module} is in no layer: add its package to ALLOWED"
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                if isinstance(node, ast.Import):
                    targets = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                    targets = [node.module]
                else:
                    continue
                for target in targets:
                    to = layer_of(target)
                    if to is not None and to != source and to not in ALLOWED[source]:
                        found.append(f"{path.relative_to(root)}:{node.lineno} {source} -> {to} ({target})")
    return found


def test_imports_follow_the_layers() -> None:
    assert imports_against_the_flow(ROOT) == []


def test_an_import_against_the_flow_is_caught(tmp_path: Path) -> None:
    """The check itself can fail: a source that imports the check API, even lazily."""
    for package in PACKAGES:
        (tmp_path / package).mkdir()
    (tmp_path / "scanner" / "sources").mkdir()
    (tmp_path / "scanner" / "sources" / "reader.py").write_text(
        "def read():\n    from scanner.engine.checkapi import Check\n    return Check\n", encoding="utf-8"
    )
    (tmp_path / "reports" / "text.py").write_text("import scanner.pipeline.scan\n", encoding="utf-8")
    assert imports_against_the_flow(tmp_path) == [
        "scanner/sources/reader.py:2 sources -> engine (scanner.engine.checkapi)",
        "reports/text.py:1 reports -> pipeline (scanner.pipeline.scan)",
    ]
