"""Reports that fit their hosts: the markdown report within ``--max-bytes``.

A GitHub pull-request comment holds 65,536 characters (the default) and a step summary 1 MiB
(GitHub aborts the step on a larger one). A cut report keeps the counts and the most severe
findings, and its last line says what was left out and where the full report is.
"""

from __future__ import annotations

import re

import pytest

from reports import markdown
from scanner.engine.checkapi import Severity
from scanner.engine.results import ScanResult
from tests.conftest import FIXTURES, run_cli, scan

DEMO = [str(FIXTURES / "demo" / name) for name in ("plan.json", "template.json", "whatif.json")]
ROW = re.compile(r"^\| \S+ (critical|high|medium|low)(?: \(\w+\))? \| `", re.MULTILINE)  # a finding row


def _demo(copies: int = 1) -> ScanResult:
    """The demo estate's findings, repeated ``copies`` times: a scan too large for its host."""
    result = scan(*DEMO)
    result.findings = result.findings * copies
    return result


def _header(report: str) -> str:
    """The verdict and the count tables: everything before the first section."""
    return report.split("\n### ", 1)[0]


def test_a_report_within_the_limit_is_whole() -> None:
    result = _demo()
    whole, warnings = markdown.render(result, 0)
    assert len(whole) < markdown.DEFAULT_MAX_BYTES
    assert markdown.render(result) == (whole, []) and warnings == []
    assert b"Cut to fit" not in whole


def test_over_the_limit_keeps_the_counts_and_the_most_severe_findings() -> None:
    result = _demo()
    whole = markdown.render(result, 0)[0].decode()
    cut, warnings = markdown.render(result, 8_000)
    text = cut.decode()
    assert len(cut) <= 8_000
    assert _header(text) == _header(whole)  # the counts are the whole scan's, not the cut's
    assert "| 🔴 critical | 3 |" in text and "| 🟡 medium | 75 |" in text
    # exactly the 3 critical and 9 high findings fit; no medium one is shown before them
    assert [m.group(1) for m in ROW.finditer(text)] == ["critical"] * 3 + ["high"] * 9
    assert text.rstrip().splitlines()[-1] == (
        "✂️ **Cut to fit 8,000 bytes:** 12 of 96 finding(s) shown, the most severe first; left out: the other "
        "findings, cost. The full report: run azai again with `--max-bytes 0`, or with `--format html` or "
        "`--format json`."
    )
    assert warnings == ["markdown report cut to fit --max-bytes 8000: 12 of 96 finding(s) shown"]


@pytest.mark.parametrize(
    ("limit", "copies"),
    [(markdown.DEFAULT_MAX_BYTES, 4), (1_000_000, 80)],
    ids=["pull-request-comment", "step-summary"],
)
def test_a_large_scan_fits_its_host(limit: int, copies: int) -> None:
    result = _demo(copies)
    assert len(markdown.render(result, 0)[0]) > limit
    cut, _ = markdown.render(result, limit)
    text = cut.decode()
    assert limit - 4_000 < len(cut) <= limit  # filled, not just the counts
    shown = [Severity.parse(m.group(1)) for m in ROW.finditer(text)]
    assert shown == sorted(shown, reverse=True) and shown[0] is Severity.CRITICAL
    assert f"{len(shown)} of {96 * copies} finding(s) shown" in text.splitlines()[-1]


def test_rule_sections_put_the_most_severe_first() -> None:
    """A critical finding never sits below a medium one, cut or not."""
    text = markdown.render(_demo(), 0)[0].decode()
    parts = [[Severity.parse(m.group(1)) for m in ROW.finditer(part)] for part in text.split("\n### ")[1:]]
    sections = [max(rows) for rows in parts if rows]  # the cost section has no finding rows
    assert len(sections) == 20
    assert sections == sorted(sections, reverse=True)


def test_the_cli_cuts_to_max_bytes_and_says_so() -> None:
    done = run_cli("scan", "--format", "markdown", "--max-bytes", "8000", "--fail-on", "none", *DEMO)
    assert done.returncode == 0
    assert len(done.stdout.encode()) <= 8_000 and "Cut to fit 8,000 bytes" in done.stdout
    assert done.stderr == "azai: warning: markdown report cut to fit --max-bytes 8000: 12 of 96 finding(s) shown\n"
    whole = run_cli("scan", "--format", "markdown", "--max-bytes", "0", "--fail-on", "none", *DEMO)
    assert len(whole.stdout.encode()) > 30_000 and "Cut to fit" not in whole.stdout and whole.stderr == ""


@pytest.mark.parametrize("value", ["100", "-1", "abc", "4095"])
def test_a_bad_max_bytes_exits_2_with_one_line(value: str) -> None:
    done = run_cli("scan", "--format", "markdown", "--max-bytes", value, *DEMO)
    assert done.returncode == 2
    assert done.stderr == (f"azai: error: --max-bytes {value}: give 0 (no limit) or a whole number of at least 4096\n")
