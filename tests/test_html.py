"""The HTML report for a manager: scope, date, version and gate first, then the counts, then
the findings most severe first, then the waste, whose charts and total agree on the page.
Checked as text, and as Chromium draws it."""

from __future__ import annotations

import datetime as dt
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from reports import html
from scanner.engine.checkapi import Severity
from scanner.engine.results import ScanResult
from tests.conftest import FIXTURES, run_cli, scan

DEMO = [str(FIXTURES / "demo" / name) for name in ("plan.json", "template.json", "whatif.json")]
WHEN = dt.datetime(2026, 1, 2, 3, 4, tzinfo=dt.UTC)
FAIL_BACKGROUND = bytes((0xFD, 0xE8, 0xE7))  # .fail in the page style
BAR = bytes.fromhex(html.BAR_COLOUR[1:])


def _page(result: ScanResult) -> str:
    return html.render(result, WHEN).decode()


def test_scope_date_version_and_gate_come_first_then_counts_findings_and_cost() -> None:
    page = _page(scan(*DEMO))
    scope = "2026-01-02 03:04 UTC · azai 0.1.0 · 54 resources in 3 input(s)"
    assert f"<li>{DEMO[0]} (terraform, 18 resources)</li>" in page
    gate = "<span class='gate fail'>FAIL</span> 18 finding(s) at or above high (--fail-on high), not suppressed"
    marks = [scope, gate, "<h2>Findings by severity</h2>", '<table id="findings">', "<h2>Estimated waste</h2>"]
    places = [page.index(mark) for mark in marks]
    assert places == sorted(places)
    assert re.findall(r'<tr><td class="(\w+)">\1</td><td class="num">(\d+)</td></tr>', page) == [
        ("critical", "3"),
        ("high", "15"),
        ("medium", "72"),
        ("low", "3"),
    ]


def test_findings_are_ordered_by_severity_not_by_cost() -> None:
    """A critical finding once sorted fifth, behind the priced AZAI-201 rows."""
    table = _page(scan(*DEMO)).split('<table id="findings">', 1)[1].split("</table>", 1)[0]
    shown = [Severity.parse(s) for s in re.findall(r'<tr><td class="(\w+)">', table)]
    assert len(shown) == 93 and shown[:3] == [Severity.CRITICAL] * 3
    assert shown == sorted(shown, reverse=True)


@pytest.mark.parametrize(
    ("fail_on", "gate"),
    [
        (None, "<span class='gate pass'>PASS</span> no gate (--fail-on none): no finding fails the run"),
        (Severity.CRITICAL, "<span class='gate fail'>FAIL</span> 3 finding(s) at or above critical"),
    ],
)
def test_the_gate_says_pass_or_fail_and_why(fail_on: Severity | None, gate: str) -> None:
    result = scan(*DEMO)
    result.fail_on = fail_on
    assert gate in _page(result)


def test_a_passing_gate_names_its_threshold() -> None:
    result = scan(*DEMO)
    result.findings = [f for f in result.findings if f.severity < Severity.HIGH]
    assert "<span class='gate pass'>PASS</span> no unsuppressed finding at or above high</p>" in _page(result)


def test_charts_and_total_agree_and_the_page_says_why_rule_bars_add_up_to_more() -> None:
    """The rule bars say $33,629.01 (each input's finding counted) under a $11,209.67 total (each
    resource once, at its largest estimate): the page states both sums beside the charts."""
    page = _page(scan(*DEMO))
    assert "<div class='total'>$11,209.67 / month</div>" in page
    bars = [float(v.replace(",", "")) for v in re.findall(r"<title>[^<]*: \$([\d,.]+)</title>", page)]
    # three rules (each finding of the three inputs: 3 x 5,655.25, 3 x 5,362.58, 3 x 191.84), one resource group
    assert bars == [16_965.75, 16_087.74, 575.52, 11_209.67]
    note = page.split("<p id='dedup' class='note'>", 1)[1].split("</p>", 1)[0]
    assert note == (
        "The total counts each resource once, at its largest estimate: a resource that several rules flag, or "
        "that several inputs declare (a plan and a template of one deployment), is one cost. The resource-group "
        "bars add up to the total ($11,209.67). The rule bars give each rule its own view, every finding counted, "
        "and add up to $33,629.01, $22,419.34 more than the total."
    )
    assert page.index("id='dedup'") < page.index('id="by-rule"')  # beside the numbers it explains


def _chromium() -> str | None:
    return shutil.which("chromium") or shutil.which("chromium-browser")


def _screenshot(browser: str, flags: list[str], page: Path, shot: Path, height: int) -> bytes:
    """The page as Chromium draws it in a 1200-pixel-wide window, as RGB bytes."""
    from PIL import Image

    subprocess.run(
        [browser, *flags, f"--window-size=1200,{height}", f"--screenshot={shot}", page.as_uri()],
        capture_output=True,
        timeout=120,
        check=True,
    )
    return Image.open(shot).convert("RGB").tobytes()


def _count(pixels: bytes, colour: bytes) -> int:
    return sum(1 for i in range(0, len(pixels), 3) if pixels[i : i + 3] == colour)


@pytest.mark.slow
def test_html_report_is_self_contained_and_reads_right_in_chromium(tmp_path: Path) -> None:
    report = tmp_path / "azai.html"
    done = run_cli("scan", "--format", "html", "--output", str(report), *DEMO)
    assert done.returncode == 1
    text = report.read_text()
    assert "http://" not in text.replace('xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in text
    assert "<script" not in text and text.count('class="bar"') == 4
    browser = _chromium()
    if browser is None:
        if os.environ.get("CI"):
            pytest.fail("CI must install Debian's chromium (see .ci/run)")
        pytest.skip("chromium is not installed (apt-get install chromium)")
    flags = [
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    dom = subprocess.run(
        [browser, *flags, "--dump-dom", report.as_uri()], capture_output=True, text=True, timeout=120
    ).stdout
    assert 'id="by-rule"' in dom and 'id="by-group"' in dom and "$11,209.67 / month" in dom
    assert "add up to $33,629.01, $22,419.34 more than the total" in dom
    # the first screen, as a manager opens it: the FAIL badge is drawn, the charts are further down
    first = _screenshot(browser, flags, report, tmp_path / "first.png", 900)
    assert _count(first, FAIL_BACKGROUND) > 1000, "the gate result is not on the first screen"
    assert _count(first, BAR) == 0
    # the whole page: both bar charts render
    whole = _screenshot(browser, flags, report, tmp_path / "whole.png", 8000)
    assert _count(whole, BAR) > 2000, "the bar charts did not render"
