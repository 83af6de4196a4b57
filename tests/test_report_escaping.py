"""Reports quote hostile input inertly and stay well formed (issue 21).

azai runs on pull requests, so resource names, tags, messages and ARM error messages are written
by whoever opened the pull request. Each payload below is carried by a scan (a resource name, an
owner tag, a warning and a coverage gap of a live read) and every report format is checked: it
parses, it holds nothing live (HTML, a ``javascript:`` link, a team mention, a control character
for the terminal), and a reader still recognises the payload in it.
"""

from __future__ import annotations

import dataclasses
import json
import re
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest

from reports.escaping import (
    WORD_JOINER,
    html_text,
    json_text,
    markdown_code,
    markdown_text,
    visible,
    xml_text,
)
from scanner.cli.commands import render
from scanner.emulator.estate import Estate, demo_estate_path
from scanner.engine.results import ScanResult
from scanner.model.resources import CoverageGap
from tests.conftest import FIXTURES, run_cli, scan

PAYLOADS = [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "[x](javascript:alert(1))",
    "![x](javascript:alert(1))",
    "<javascript:alert(1)>",
    "@org/team",
    "\x1b[31mred\x1b[0m",
    "\x1b]8;;https://evil.example\x07link\x1b]8;;\x07",
    "carriage\rreturn",
    "bell\x07",
    "nul\x00",
    "\ud800",
    "\ufffe\uffff",
    "]]>",
    "&amp; &",
    "a|b",
    "a\\|b",
    "`code`",
    "``",
    "two\nlines",
    "\u2028\x85",
    "\u202edesrever",
    "_em_ *strong* ~strike~",
    "# heading",
    "#1",
]

# A Terraform name ends at a "/" (the source reads it from the resource id), and strict JSON
# refuses a lone surrogate in a plan: names carry the other payloads. Tags, warnings and coverage
# carry them all; a live answer may hold a lone surrogate (the SDK's JSON reader accepts one), so
# the plan carries a marker in its place and the scan's owner tags are given the payload.
SURROGATE = re.compile("[\ud800-\udfff]")
NAME_PAYLOADS = [p for p in PAYLOADS if not re.search("[/\ud800-\udfff]", p)]
MARKER = "\ue000"
FORMATS = ("text", "markdown", "json", "sarif", "junit", "html")

# What no terminal or stderr line may hold: controls (newline aside, for the report's own lines),
# lone surrogates, bidirectional overrides.
CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff]")


def _hostile_plan(tmp_path: Path, payload: str, in_names: bool) -> Path:
    """The demo plan with the payload in every owner tag and, where the source lets it, in the
    OpenAI account's name, which its findings quote."""
    plan = json.loads((FIXTURES / "demo" / "plan.json").read_text(encoding="utf-8"))
    values = [r["values"] for r in plan["planned_values"]["root_module"]["resources"]]
    values += [c["change"]["after"] for c in plan["resource_changes"] if c["change"]["after"]]
    for value in values:
        value["tags"] = {"owner": f"team {payload}"}
        if in_names and value["name"] == "oai-demo":
            value["name"] = f"oai-{payload}"
    path = tmp_path / "plan.json"
    path.write_text(json.dumps(plan), encoding="utf-8")
    return path


def _hostile_result(tmp_path: Path, payload: str) -> ScanResult:
    carried = MARKER if SURROGATE.search(payload) else payload
    result = scan(_hostile_plan(tmp_path, carried, payload in NAME_PAYLOADS))
    if carried != payload:
        result.findings = [
            dataclasses.replace(f, tags={k: str(v).replace(MARKER, payload) for k, v in f.tags.items()})
            for f in result.findings
        ]
    result.warnings.append(f"warning {payload}")
    result.coverage.append(CoverageGap(scope=f"/subscriptions/{payload}", status=403, reason=f"denied {payload}"))
    return result


def _bytes(fmt: str, result: ScanResult) -> bytes:
    data, _ = render(fmt, result)
    return data if isinstance(data, bytes) else b"".join(data)


def _pipes(line: str) -> int:
    """Cell boundaries in a GFM table row: pipes not escaped by an odd run of backslashes."""
    return sum(1 for run in re.findall(r"(\\*)\|", line) if len(run) % 2 == 0)


def _assert_markdown_inert(text: str) -> None:
    lowered = text.lower()
    for live in ("<script", "<img", "](javascript:", "<javascript:"):
        assert live not in lowered, live
    assert not re.search(r"@[A-Za-z0-9]", text), "a live @mention"
    assert not re.search(r"#[0-9]", re.sub(r"&#[0-9]+;", "", text)), "a live issue reference"
    assert not CONTROL.search(text)
    header = 0
    for line in text.splitlines():
        if not line.startswith("|"):
            header = 0
        elif not header:
            header = _pipes(line)
        else:
            assert _pipes(line) == header, f"a table row with cells of its own: {line!r}"


def _check(fmt: str, data: bytes, payload: str) -> None:
    """Well formed, inert, and the payload recognisable where the format quotes it."""
    if fmt == "json":
        document: dict[str, Any] = json.loads(data.decode("utf-8"))
        assert f"denied {payload}" in [gap["reason"] for gap in document["coverage"]]
        assert f"team {payload}" in document["cost"]["by_owner"]
        if payload in NAME_PAYLOADS:
            assert f"oai-{payload}" in {f["resource_name"] for f in document["findings"]}
        return
    if fmt == "sarif":
        log = json.loads(data.decode("utf-8"))
        invocations = [run["invocations"][0] for run in log["runs"]]
        notes = [n["message"]["text"] for i in invocations for n in i["toolExecutionNotifications"]]
        assert f"warning {payload}" in notes
        assert any(f"denied {payload}" in note for note in notes)
        return
    if fmt == "junit":
        root = ET.fromstring(data)
        reasons = [error.text for error in root.iter("error")]
        # XML parsers read a carriage return in text as a newline (XML 1.0, 2.11 End-of-Line Handling).
        assert f"denied {xml_text(payload)}".replace("\r", "\n") in reasons
        if payload in NAME_PAYLOADS:
            names = {(case.get("name") or "").rsplit(" (", 1)[0] for case in root.iter("testcase")}
            assert f"oai-{xml_text(payload)}" in names  # a case is named "resource (input)"
        return
    text = data.decode("utf-8")
    assert not CONTROL.search(text)
    if fmt == "text":
        assert f"denied {visible(payload)}" in text
        assert f"team {visible(payload)}" in text
    elif fmt == "markdown":
        _assert_markdown_inert(text)
        assert markdown_text(f"denied {payload}") in text
        assert markdown_text(f"team {payload}") in text
        if payload in NAME_PAYLOADS:
            assert markdown_code(f"oai-{payload}") in text
    else:
        assert "<script" not in text and "<img" not in text
        assert html_text(f"denied {payload}") in text
        assert html_text(f"oai-{payload}") in text or payload not in NAME_PAYLOADS


@pytest.mark.parametrize("payload", PAYLOADS, ids=[ascii(p) for p in PAYLOADS])
def test_every_report_quotes_hostile_input_inertly(payload: str, tmp_path: Path) -> None:
    result = _hostile_result(tmp_path, payload)
    for fmt in FORMATS:
        _check(fmt, _bytes(fmt, result), payload)


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\x1b[31m", "\\x1b[31m"),
        ("a\r\nb", "a\\x0d\\x0ab"),
        ("\x07\x00\x7f\x9b", "\\x07\\x00\\x7f\\x9b"),
        ("\ud800", "\\ud800"),
        ("\u202e\u2028", "\\u202e\\u2028"),
        ("C:\\dir\\plan.json", "C:\\dir\\plan.json"),
        ("é ✓ 日本 🙂 \u2060", "é ✓ 日本 🙂 \u2060"),
    ],
)
def test_visible_escapes_controls_and_keeps_printable_unicode(text: str, shown: str) -> None:
    assert visible(text) == shown


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("<script>alert(1)</script>", "&lt;script&gt;alert(1)&lt;/script&gt;"),
        ("[x](javascript:alert(1))", "&#91;x&#93;(javascript:alert(1))"),
        ("@org/team", f"@{WORD_JOINER}org/team"),
        ("see #12", f"see #{WORD_JOINER}12"),
        ("a|b\\", "a\\|b\\\\"),
        ("`x` *y* ~z~", "\\`x\\` \\*y\\* \\~z\\~"),
        ("_y_ Standard_NC24ads_A100_v4", "\\_y\\_ Standard_NC24ads_A100_v4"),
        ("one\ntwo", "one\\\\x0atwo"),
        ("&amp;", "&amp;amp;"),
    ],
)
def test_markdown_text_is_literal(text: str, shown: str) -> None:
    assert markdown_text(text) == shown


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("ws-demo/score", "`ws-demo/score`"),
        ('azurerm_x.y["a"]', '`azurerm_x.y["a"]`'),
        ("fixtures/demo/plan.json:1", "`fixtures/demo/plan.json:1`"),
        ("a`b", "a\\`b"),
        ("a|b", "a\\|b"),
        ("a\\|b", "a\\\\\\|b"),
        ("<b>", "&lt;b&gt;"),
        ("[x](y)", "&#91;x&#93;(y)"),
        ("@org", f"@{WORD_JOINER}org"),
        ("a\nb", "a\\\\x0ab"),
    ],
)
def test_markdown_code_falls_back_to_text_where_a_span_is_unsafe(text: str, shown: str) -> None:
    assert markdown_code(text) == shown


def test_xml_text_leaves_only_what_xml_allows() -> None:
    text = xml_text("a\x00b\x1b\x0bc\ud800\ufffe\uffff\t\n\r\x85é")
    assert text == "a\\x00b\\x1b\\x0bc\\ud800\\ufffe\\uffff\t\n\r\x85é"
    element = ET.Element("case", name=text)
    element.text = text
    parsed = ET.fromstring(ET.tostring(element, encoding="unicode"))
    assert parsed.get("name") == text


def test_json_text_keeps_the_value_and_encodes_as_utf8() -> None:
    value = {"name": "a\ud800b\u2028c\x85é"}
    written = json_text(json.dumps(value, ensure_ascii=False))
    assert written == '{"name": "a\\ud800b\\u2028c\\u0085é"}'
    assert json.loads(written.encode("utf-8")) == value


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_a_lone_surrogate_from_a_live_answer_is_written_by_the_cli(serve, fmt: str, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The bug: ``ensure_ascii=False`` JSON of a lone surrogate (here an owner tag a server sent,
    which the JSON report's cost section quotes) could not be encoded as UTF-8: exit 70."""
    estate = Estate.load(demo_estate_path())
    for resource in estate.resources:
        if resource["id"].endswith("/managedClusters/aks-demo"):
            resource["tags"] = {"owner": "team \ud800"}
    emulator = serve(estate)
    out = tmp_path / f"report.{fmt}"
    live = ("--arm-endpoint", emulator.endpoint, "--all-subscriptions")
    done = run_cli("scan", *live, "--format", fmt, "--output", str(out), "--fail-on", "none", cwd=tmp_path)
    assert (done.returncode, done.stderr) == (0, "")
    report = json.loads(out.read_text(encoding="utf-8"))
    if fmt == "json":
        assert report["cost"]["by_owner"]["team \ud800"] == 2681.29  # the GPU pool's always-on nodes


def test_json_report_indents_no_line_separator_inside_a_value(tmp_path: Path) -> None:
    """``textwrap.indent`` splits on U+2028 and NEL too: a name holding one kept its value."""
    result = scan(_hostile_plan(tmp_path, "a\u2028b\x85c", in_names=True))
    names = {f["resource_name"] for f in json.loads(_bytes("json", result))["findings"]}
    assert "oai-a\u2028b\x85c" in names


def test_an_error_line_quoting_input_stays_one_line(tmp_path: Path) -> None:
    missing = tmp_path / "no\nsuch\x1b[31m.json"
    done = run_cli("scan", str(missing))
    assert done.returncode == 2
    assert done.stderr == f"azai: error: {visible(str(missing))}: no such file\n"
