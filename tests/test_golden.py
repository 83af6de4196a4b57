"""Golden files for the SARIF, Markdown and JUnit reports of the demo estate.

Any change in these reports shows up in review as a diff of tests/golden/. The JSON-based ones
(SARIF, JSON) are compared by value and kept indented, so that their diffs stay readable
whatever whitespace azai writes. After an intended change, regenerate them with:

    AZAI_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/test_golden.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, ROOT, run_cli

GOLDEN = ROOT / "tests" / "golden"
DEMO = [str((FIXTURES / "demo" / name).relative_to(ROOT)) for name in ("plan.json", "template.json", "whatif.json")]
FORMATS = {"sarif": "demo.sarif", "markdown": "demo.md", "junit": "demo.junit.xml", "json": "demo.json"}
BY_VALUE = {"sarif", "json"}


@pytest.mark.parametrize(("fmt", "name"), FORMATS.items())
def test_report_matches_its_golden_file(fmt: str, name: str, tmp_path: Path) -> None:
    produced = tmp_path / name
    done = run_cli("scan", "--format", fmt, "--output", str(produced), "--fail-on", "high", *DEMO)
    assert done.returncode == 1, done.stderr
    golden = GOLDEN / name
    text = produced.read_text(encoding="utf-8")
    if os.environ.get("AZAI_UPDATE_GOLDEN"):
        GOLDEN.mkdir(exist_ok=True)
        kept = json.dumps(json.loads(text), indent=2) + "\n" if fmt in BY_VALUE else text
        golden.write_text(kept, encoding="utf-8")
    expected = golden.read_text(encoding="utf-8")
    same = json.loads(text) == json.loads(expected) if fmt in BY_VALUE else text == expected
    assert same, f"{name} changed; if intended, run AZAI_UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py"
