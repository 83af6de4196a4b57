"""The HTML report for a manager: scope, date and version; the verdict, which says PASS or FAIL
only when a gate was applied; then the waste total, the five costliest findings and the waste
by owner, on the first screen; then the counts, the charts and the long table of findings.
Checked as text, and as Chromium draws it."""

from __future__ import annotations

import dataclasses
import datetime as dt
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from reports import html, markdown, text
from scanner.engine.checkapi import Severity
from scanner.engine.results import AppliedSuppression, ScanResult
from scanner.model.resources import CoverageGap
from tests.conftest import FIXTURES, run_cli, scan

DEMO = [str(FIXTURES / "demo" / name) for name in ("plan.json", "template.json", "whatif.json")]
WHEN = dt.datetime(2026, 1, 2, 3, 4, tzinfo=dt.UTC)
# What reads first, in this order, on the first screen (top five and owners side by side).
SUMMARY = ("verdict", "waste-total", "top-five", "owners")
WIDTH, SCREEN = 1280, 900


def _page(result: ScanResult) -> str:
    return html.render(result, WHEN).decode()


def _section(page: str, section_id: str) -> str:
    return page.split(f"<section id='{section_id}'>", 1)[1].split("</section>", 1)[0]


def _rows(page: str, section_id: str) -> list[list[str]]:
    """A summary table's data rows, as the cells' text."""
    rows = re.findall(r"<tr>(<td.*?)</tr>", _section(page, section_id))
    return [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in rows]


def _rgb(colour: str) -> bytes:
    return bytes.fromhex(colour[1:])


def test_scope_verdict_waste_top_five_and_owners_come_first_then_counts_charts_and_findings() -> None:
    page = _page(scan(*DEMO))
    scope = "2026-01-02 03:04 UTC · azai 0.1.0 · 54 resources in 3 input(s)"
    assert f"<li>{DEMO[0]} (terraform, 18 resources)</li>" in page
    marks = [
        scope,
        *(f"<section id='{name}'>" for name in SUMMARY),
        "<h2>Findings by severity</h2>",
        'id="by-rule"',
        '<table id="findings">',
        "<h2 id='inputs'>What was scanned</h2>",
    ]
    places = [page.index(mark) for mark in marks]
    assert places == sorted(places)
    assert re.findall(r'<tr><td class="(\w+)">\1</td><td class="num">(\d+)</td></tr>', page) == [
        ("critical", "3"),
        ("high", "15"),
        ("medium", "75"),
        ("low", "3"),
    ]


def test_findings_are_ordered_by_severity_not_by_cost() -> None:
    """A critical finding once sorted fifth, behind the priced AZAI-201 rows."""
    table = _page(scan(*DEMO)).split('<table id="findings">', 1)[1].split("</table>", 1)[0]
    shown = [Severity.parse(s) for s in re.findall(r'<tr><td class="(\w+)">', table)]
    assert len(shown) == 96 and shown[:3] == [Severity.CRITICAL] * 3
    assert shown == sorted(shown, reverse=True)


@pytest.mark.parametrize(
    ("fail_on", "baseline", "keep_below_high", "badge", "word", "why"),
    [
        (
            None,
            False,
            False,
            "not-gated",
            "NOT GATED",
            "no gate was applied (--fail-on none), so nothing was judged: "
            "96 findings listed below (3 critical, 15 high, 75 medium, 3 low)",
        ),
        (
            Severity.CRITICAL,
            False,
            False,
            "fail",
            "FAIL",
            "fails the gate: 3 findings at critical or above (--fail-on critical), not suppressed",
        ),
        (
            Severity.HIGH,
            True,
            False,
            "fail",
            "FAIL",
            "fails the gate: 18 findings at high or above (--fail-on high), not suppressed and new since the baseline",
        ),
        (
            Severity.HIGH,
            False,
            True,
            "pass",
            "PASS",
            "passes the gate: no finding at high or above (--fail-on high) that is not suppressed",
        ),
    ],
)
def test_the_verdict_says_exactly_what_was_decided(
    fail_on: Severity | None, baseline: bool, keep_below_high: bool, badge: str, word: str, why: str
) -> None:
    """PASS and FAIL only under a gate, naming it; without one, "not gated" and what is listed."""
    result = scan(*DEMO)
    result.fail_on, result.baseline_used = fail_on, baseline
    if keep_below_high:
        result.findings = [f for f in result.findings if f.severity < Severity.HIGH]
    page = _page(result)
    assert _section(page, "verdict") == (
        f"<h2>Verdict</h2><p class='decision'><span class='badge {badge}'>{word}</span><span id='why'>{why}</span></p>"
    )
    if fail_on is None:
        assert "PASS" not in page and "FAIL" not in page


def test_without_a_gate_suppressed_findings_are_counted_apart() -> None:
    result = scan(*DEMO)
    result.fail_on = None
    accepted = AppliedSuppression("external", "accepted risk", "azai.toml")
    result.findings = [
        dataclasses.replace(f, suppression=accepted) if f.severity == Severity.CRITICAL else f for f in result.findings
    ]
    assert _section(_page(result), "verdict").endswith(
        "<span id='why'>no gate was applied (--fail-on none), so nothing was judged: "
        "93 findings listed below (15 high, 75 medium, 3 low), and 3 suppressed</span></p>"
    )


def test_no_report_says_it_passed_without_a_gate() -> None:
    """Markdown and text agree with the page: no tick and no "passed" when no gate judged."""
    result = scan(*DEMO)
    result.fail_on = None
    comment = markdown.render(result, 0)[0].decode()
    assert "⚪ **not gated** (`--fail-on none`): nothing was judged · 54 resources in 3 input(s)" in comment
    assert "✅" not in comment
    log = text.render(result).decode()
    assert "passed" not in log and "FAILED" not in log


def test_an_incomplete_scan_says_so_under_the_verdict_as_a_word() -> None:
    result = scan(*DEMO)
    result.coverage = [CoverageGap("/subscriptions/s1", 403, "denied")]
    verdict = _section(_page(result), "verdict")
    assert verdict.endswith(
        "<p class='incomplete'><strong>INCOMPLETE</strong>: 1 scope(s) could not be read (listed below), "
        "so what they hold was not checked.</p>"
    )


def test_waste_total_top_five_and_owners_give_exact_figures() -> None:
    """The total with its basis; each resource once in the top five, at its largest estimate;
    the owners adding up to the total."""
    page = _page(scan(*DEMO))
    total = _section(page, "waste-total")
    assert "<p class='total'>$11,209.67 <small>a month</small></p>" in total
    assert (
        "Each resource counted once, at its largest estimate; retail prices in USD as each estimate names them: "
        "pay-as-you-go, no reservations or savings plans, unless a rule option sets a reservation rate." in total
    )
    assert _rows(page, "top-five") == [
        ["AZAI-207 serverless-full-time", "ws-demo/retrain", "$5,362.58"],
        ["AZAI-201 always-on-compute", "aks-demo/gpu", "$2,681.29"],
        ["AZAI-201 always-on-compute", "ws-demo/train", "$2,681.29"],
        ["AZAI-201 always-on-compute", "ws-demo/notebook", "$292.67"],
        ["AZAI-208 always-on-serverless-gpu", "llm-demo", "$191.84"],
    ]
    assert _rows(page, "owners") == [["ml-platform", "$8,528.38", "76%"], ["(untagged)", "$2,681.29", "24%"]]
    assert "<h2>Waste by owner (tag <code>owner</code>)</h2>" in page


def test_summary_quotes_hostile_names_owners_and_owner_tags_inertly() -> None:
    result = scan(*DEMO)
    hostile = "<img src=x onerror=alert(1)>"
    result.owner_tag = "<b>team</b>"
    result.findings = [
        dataclasses.replace(
            f,
            tags={result.owner_tag: hostile},
            resource=dataclasses.replace(f.resource, name=f.resource.name + hostile),
        )
        for f in result.findings
    ]
    page = _page(result)
    assert "<img" not in page and "<b>" not in page
    quoted = "&lt;img src=x onerror=alert(1)&gt;"
    assert _rows(page, "owners") == [[quoted, "$11,209.67", "100%"]]
    assert [row[1] for row in _rows(page, "top-five")] == [
        f"{name}{quoted}"
        for name in ("ws-demo/retrain", "aks-demo/gpu", "ws-demo/train", "ws-demo/notebook", "llm-demo")
    ]
    assert "<h2>Waste by owner (tag <code>&lt;b&gt;team&lt;/b&gt;</code>)</h2>" in page


def test_without_priced_waste_the_summary_says_so() -> None:
    result = scan(*DEMO)
    result.findings = [f for f in result.findings if f.cost is None]
    page = _page(result)
    assert "<p class='total'>$0.00 <small>a month</small></p>" in page
    assert _section(page, "top-five").endswith("<p>No priced waste.</p>")
    assert _section(page, "owners").endswith("<p>No priced waste.</p>")


def _luminance(colour: str) -> float:
    """WCAG 2.x relative luminance (https://www.w3.org/TR/WCAG21/#dfn-relative-luminance)."""
    channels = [c / 255 for c in _rgb(colour)]
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in channels]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


@pytest.mark.parametrize(("foreground", "background"), [*html.STATUS_COLOURS.values(), (html.WASTE_COLOUR, "#ffffff")])
def test_status_and_waste_colours_meet_wcag_aa_contrast(foreground: str, background: str) -> None:
    lighter, darker = sorted((_luminance(foreground), _luminance(background)), reverse=True)
    assert (lighter + 0.05) / (darker + 0.05) >= 4.5


def test_the_charts_and_total_agree_and_the_page_says_why_rule_bars_add_up_to_more() -> None:
    """The rule bars say $33,629.01 (each input's finding counted) under a $11,209.67 total (each
    resource once, at its largest estimate): the page states both sums beside the charts."""
    page = _page(scan(*DEMO))
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


# In Chromium. The page has no script; the test adds one to a copy, which writes where each
# part is drawn into the DOM that --dump-dom prints. Positions do not depend on the window's
# height (the page has no vh units), only on its width, which both runs share.
_PROBE = (
    "<script>document.body.dataset.boxes = [...document.querySelectorAll('[id]')].map(e => {"
    "const r = e.getBoundingClientRect(); return [e.id, r.left, r.top, r.right, r.bottom].map("
    "v => typeof v === 'number' ? Math.round(v) : v).join(',');}).join(';');</script>"
)
Box = tuple[int, int, int, int]


def _chromium(tmp_path: Path) -> tuple[str, list[str]]:
    browser = shutil.which("chromium") or shutil.which("chromium-browser")
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
        "--hide-scrollbars",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    return browser, flags


def _drawn(browser: str, flags: list[str], report: Path) -> tuple[str, dict[str, Box]]:
    """The DOM Chromium builds from the page, and each element's box (left, top, right, bottom)
    by id, at the screenshot's width."""
    probe = report.with_name("probe.html")
    probe.write_text(report.read_text().replace("</body>", _PROBE + "</body>"))
    dom = subprocess.run(
        [browser, *flags, f"--window-size={WIDTH},{SCREEN}", "--dump-dom", probe.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    ).stdout
    found = re.search(r'data-boxes="([^"]*)"', dom)
    assert found, "the probe did not run"
    boxes = {}
    for item in found.group(1).split(";"):
        name, *edges = item.split(",")
        boxes[name] = (int(edges[0]), int(edges[1]), int(edges[2]), int(edges[3]))
    return dom, boxes


def _screenshot(browser: str, flags: list[str], report: Path, shot: Path, height: int) -> bytes:
    """The page as Chromium draws it in a window WIDTH pixels wide, as RGB bytes."""
    from PIL import Image

    subprocess.run(
        [browser, *flags, f"--window-size={WIDTH},{height}", f"--screenshot={shot}", report.as_uri()],
        capture_output=True,
        timeout=120,
        check=True,
    )
    image = Image.open(shot).convert("RGB")
    assert image.size == (WIDTH, height)
    return image.tobytes()


def _count(pixels: bytes, colour: str, box: Box = (0, 0, WIDTH, 100_000)) -> int:
    """How many pixels in ``box`` (of a WIDTH-wide RGB image) are exactly ``colour``."""
    wanted = _rgb(colour)
    left, top, right, bottom = box
    rows = len(pixels) // (WIDTH * 3)
    return sum(
        1
        for y in range(max(0, top), min(rows, bottom))
        for x in range(max(0, left), min(WIDTH, right))
        if pixels[(y * WIDTH + x) * 3 : (y * WIDTH + x) * 3 + 3] == wanted
    )


def _assert_summary_reads_first(boxes: dict[str, Box]) -> None:
    """Verdict, waste total, top five then owners (beside it, or under it on a narrow screen),
    all on the first screen; the counts and the long tables after them."""
    verdict, total, top, owners = (boxes[name] for name in SUMMARY)
    assert verdict[3] <= total[1] and total[3] <= top[1]
    assert owners[1] >= top[1] and (owners[0] >= top[2] or owners[1] >= top[3])
    assert max(box[3] for box in (verdict, total, top, owners)) <= SCREEN
    assert min(boxes[name][1] for name in ("counts", "by-rule", "findings")) >= max(top[3], owners[3])


def _self_contained(page: str) -> None:
    assert "http://" not in page.replace('xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in page
    assert "<script" not in page and "<link" not in page and "@import" not in page


@pytest.mark.slow
def test_demo_page_is_not_gated_and_shows_the_waste_first_in_chromium(tmp_path: Path) -> None:
    """`azai demo` applies no gate: the page says "not gated" in grey, never PASS, and the
    demo's $70,157.06 a month, its five costliest findings and its owners are on the first
    screen, with the figures the demo estate gives."""
    report = tmp_path / "demo.html"
    done = run_cli("demo", "--format", "html", "--output", str(report))
    assert done.returncode == 0, done.stderr
    page = report.read_text()
    _self_contained(page)
    assert "PASS" not in page and "FAIL" not in page
    assert "<span class='badge not-gated'>NOT GATED</span>" in page
    assert "<p class='total'>$70,157.06 <small>a month</small></p>" in page
    assert _rows(page, "top-five") == [
        ["AZAI-206 idle-provisioned-throughput", "oai-demo/chat-ptu", "$58,400.00"],
        ["AZAI-207 serverless-full-time", "ws-demo/retrain", "$5,362.58"],
        ["AZAI-201 always-on-compute", "aks-demo/gpu", "$2,681.29"],
        ["AZAI-201 always-on-compute", "ws-demo/train", "$2,681.29"],
        ["AZAI-209 pay-per-token-full-time", "oai-demo/support-bot", "$547.50"],
    ]
    assert _rows(page, "owners") == [["(untagged)", "$61,628.79", "88%"], ["ml-platform", "$8,528.27", "12%"]]
    browser, flags = _chromium(tmp_path)
    dom, boxes = _drawn(browser, flags, report)
    assert "$70,157.06" in dom and "NOT GATED" in dom
    _assert_summary_reads_first(boxes)
    first = _screenshot(browser, flags, report, tmp_path / "first.png", SCREEN)
    assert _count(first, html.STATUS_COLOURS["not-gated"][1], boxes["verdict"]) > 2000, (
        "the grey NOT GATED badge is not drawn"
    )
    assert _count(first, html.STATUS_COLOURS["pass"][1]) == _count(first, html.STATUS_COLOURS["fail"][1]) == 0
    assert _count(first, html.WASTE_COLOUR, boxes["waste-total"]) > 300, "the waste total is not drawn"


@pytest.mark.slow
def test_scan_page_fails_its_gate_and_draws_its_charts_in_chromium(tmp_path: Path) -> None:
    report = tmp_path / "azai.html"
    done = run_cli("scan", "--format", "html", "--output", str(report), *DEMO)
    assert done.returncode == 1
    page = report.read_text()
    _self_contained(page)
    assert page.count('class="bar"') == 4
    browser, flags = _chromium(tmp_path)
    dom, boxes = _drawn(browser, flags, report)
    assert "$11,209.67" in dom and "add up to $33,629.01, $22,419.34 more than the total" in dom
    _assert_summary_reads_first(boxes)
    # the first screen, as a manager opens it: the red FAIL badge and the waste total are drawn
    first = _screenshot(browser, flags, report, tmp_path / "first.png", SCREEN)
    assert _count(first, html.STATUS_COLOURS["fail"][1], boxes["verdict"]) > 1000, "FAIL is not on the first screen"
    assert _count(first, html.WASTE_COLOUR, boxes["waste-total"]) > 300
    # the whole page: both bar charts render where the DOM puts them
    whole = _screenshot(browser, flags, report, tmp_path / "whole.png", boxes["findings"][3] + 100)
    assert _count(whole, html.BAR_COLOUR, boxes["by-rule"]) > 2000, "the rule chart did not render"
    assert _count(whole, html.BAR_COLOUR, boxes["by-group"]) > 2000, "the group chart did not render"
