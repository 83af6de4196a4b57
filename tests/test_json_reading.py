"""Reading JSON: strict for plans and what-if, with comments for ARM, and linear on any input.

Strict JSON refuses what Python's decoder lets through (NaN, infinities, numbers that overflow,
lone surrogates) at parse time with a line and column. ARM inputs may carry comments, as ARM
reads them, and their findings stay on the right lines. Every regular expression of the JSON
reader, the plan reader and the model is run through the CLI on a 300,000-character
adversarial input: a child process with a timeout fails the test if one hangs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from scanner.model.jsondoc import MAX_INPUT_BYTES
from tests.conftest import FIXTURES, run_cli

LONG = 300_000
HEAD = '{"format_version": "1.2", "terraform_version": "1.9.8", '


def _one_error_line(path: Path, *extra: str) -> str:
    done = run_cli("scan", "--fail-on", "none", *extra, str(path))
    assert done.returncode == 2, done.stdout + done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


# -- strict JSON --------------------------------------------------------------------------

STRICT = [
    ("nan", HEAD + '"resource_changes": [\n  NaN]}', "line 2 column 3: NaN is not a JSON number"),
    ("infinity", HEAD + '"x": Infinity}', "line 1 column 62: Infinity is not a JSON number"),
    ("minus-infinity", HEAD + '\n"x": [1, -Infinity]}', "line 2 column 10: -Infinity is not a JSON number"),
    ("overflow", HEAD + '"x": [1.5, 2e10,\n 1e999]}', "line 2 column 2: number too large to represent"),
    ("negative-overflow", HEAD + '"x": -1.0E400}', "line 1 column 62: number too large to represent"),
    ("long-fraction-overflow", HEAD + '"x": ' + "9" * 400 + ".5}", "line 1 column 62: number too large to represent"),
    (
        "lone-high-surrogate",
        HEAD + '"x": "ab\\ud800"}',
        "line 1 column 65: \\ud800 is a lone surrogate, not a character",
    ),
    ("lone-low-surrogate", HEAD + '"x":\n "\\uDC00\\ud83d\\ude00"}', "line 2 column 3: \\uDC00 is a lone surrogate"),
    ("high-then-not-low", HEAD + '"x": "\\ud83d\\u0041"}', "line 1 column 63: \\ud83d is a lone surrogate"),
    (
        "long-integer",
        HEAD + '"x": [0,\n ' + "7" * 5000 + "]}",
        "line 2 column 2: unreadable JSON value: Exceeds the limit",
    ),
]


@pytest.mark.parametrize(("content", "reason"), [c[1:] for c in STRICT], ids=[c[0] for c in STRICT])
def test_what_json_is_not_is_refused_at_parse_time_with_its_position(tmp_path: Path, content: str, reason: str) -> None:
    path = tmp_path / "plan.json"
    path.write_text(content, encoding="utf-8")
    assert _one_error_line(path).startswith(f"azai: error: {path}: invalid JSON at {reason}")


@pytest.mark.parametrize(
    "value",
    ['"NaN and Infinity in a string"', '"\\\\ud800 is an escaped backslash"', '"\\ud83d\\ude00"', "1e308", "-0.0e-999"],
)
def test_what_looks_like_it_but_is_json_is_read(tmp_path: Path, value: str) -> None:
    path = tmp_path / "plan.json"
    path.write_text(HEAD + f'"x": {value}, "resource_changes": []}}', encoding="utf-8")
    done = run_cli("scan", "--fail-on", "none", str(path))
    assert done.returncode == 0, done.stderr


def test_undecodable_bytes_are_refused_with_their_position(tmp_path: Path) -> None:
    path = tmp_path / "plan.json"
    path.write_bytes(HEAD.encode() + b'\n  "name": "caf\xc3\xa9 \xe9"}')
    assert _one_error_line(path) == f"azai: error: {path}: not UTF-8 text, so not JSON (line 2 column 17)"


# -- ARM comments -------------------------------------------------------------------------

PREAMBLE = [
    "// A template as ARM reads it: comments are allowed (ARM template syntax reference).",
    '/* A block comment with "quotes", // slashes',
    "   and a second line */",
]


def _commented(text: str) -> str:
    """``text`` with comment lines after its first line and a comment at the end of each line."""
    first, *rest = text.splitlines()
    lines = [first, *PREAMBLE, *(f'{line} // note: "x", /* not a block */' for line in rest)]
    return "\n".join(lines) + "\n/* trailing */\n"


def _findings(*args: str) -> list[tuple[str, str, str, int, int]]:
    done = run_cli("scan", "--format", "json", "--fail-on", "none", *args)
    assert done.returncode == 0, done.stderr
    return sorted(
        (
            f["rule_id"],
            f["resource_id"],
            f["location"]["pointer"],
            f["location"]["start_line"],
            f["location"]["start_column"],
        )
        for f in json.loads(done.stdout)["findings"]
    )


def test_a_template_with_comments_scans_with_findings_on_the_right_lines(tmp_path: Path) -> None:
    plain = FIXTURES / "demo" / "template.json"
    commented = tmp_path / "template.json"
    commented.write_text(_commented(plain.read_text(encoding="utf-8")), encoding="utf-8")
    expected = _findings(str(plain))
    shifted = [(rule, rid, pointer, line + len(PREAMBLE), column) for rule, rid, pointer, line, column in expected]
    assert len(expected) > 10
    assert _findings(str(commented)) == shifted


def test_an_arm_parameters_file_may_carry_comments(tmp_path: Path) -> None:
    template = FIXTURES / "demo" / "template.json"
    parameters = {
        "$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentParameters.json#",
        "contentVersion": "1.0.0.0",
        "parameters": {"location": {"value": "westeurope"}, "gpuSize": {"value": "Standard_D4s_v5"}},
    }
    plain = tmp_path / "plain.parameters.json"
    plain.write_text(json.dumps(parameters, indent=2), encoding="utf-8")
    commented = tmp_path / "commented.parameters.json"
    commented.write_text(_commented(plain.read_text(encoding="utf-8")), encoding="utf-8")
    with_plain = _findings("--parameters", str(plain), str(template))
    assert with_plain != _findings(str(template))  # the parameters change what is found
    assert _findings("--parameters", str(commented), str(template)) == with_plain


@pytest.mark.parametrize("name", ["plan.json", "whatif.json"])
def test_plans_and_what_if_results_with_comments_are_refused(tmp_path: Path, name: str) -> None:
    source = (FIXTURES / "demo" / name).read_text(encoding="utf-8")
    path = tmp_path / name
    path.write_text("// a comment\n" + source, encoding="utf-8")
    assert _one_error_line(path) == f"azai: error: {path}: invalid JSON at line 1 column 1: Expecting value"


# -- no regular expression is super-linear --------------------------------------------------


MODULE = "module.m" + "[" * LONG


def _cluster(address: str, module_address: str | None = None, id: str | None = None) -> dict[str, Any]:
    """An AKS cluster created by the plan, its region known only after apply, so the reader
    looks up its configuration block (address and module keys) and follows its references."""
    entry: dict[str, Any] = {"address": address, "mode": "managed", "type": "azurerm_kubernetes_cluster", "name": "a"}
    if module_address is not None:
        entry["module_address"] = module_address
    after = {"name": "a", "resource_group_name": "rg", **({"id": id} if id else {})}
    return {**entry, "change": {"actions": ["create"], "after": after, "after_unknown": {"location": True}}}


def _plan(*changes: dict[str, Any], references: list[str] | None = None) -> str:
    expressions = {"location": {"references": references}} if references else {}
    configuration = {
        "root_module": {"resources": [{"address": "azurerm_kubernetes_cluster.a", "expressions": expressions}]}
    }
    plan = {"format_version": "1.2", "terraform_version": "1.9.8", "resource_changes": list(changes)}
    return json.dumps({**plan, "configuration": configuration})


ADVERSARIAL = [
    # (case id, file content, exit code, a line of the output it must hold)
    (
        "address-of-brackets",
        _plan(_cluster("azurerm_kubernetes_cluster.a" + "[" * LONG)),
        2,
        "/resource_changes/0/address: expected a Terraform resource address, found 'azurerm_kubernetes_cluster.a[[[",
    ),
    (
        "module-address-of-brackets",
        _plan(_cluster("module.m.azurerm_kubernetes_cluster.a", module_address=MODULE)),
        2,
        "/resource_changes/0/module_address: expected a Terraform module address, found 'module.m[[[",
    ),
    (
        "module-steps-never-closed",
        _plan(_cluster("module.a[" * (LONG // 9) + ".azurerm_kubernetes_cluster.a")),
        2,
        "/resource_changes/0/address: expected a Terraform resource address, found 'module.a[module.a[",
    ),
    (
        "module-keys-never-closed",
        _plan(_cluster('module.a["' * (LONG // 10) + ".azurerm_kubernetes_cluster.a")),
        2,
        "/resource_changes/0/address: expected a Terraform resource address, found 'module.a[\"module.a[\"",
    ),
    (
        "reference-of-brackets",
        _plan(_cluster("azurerm_kubernetes_cluster.a"), references=[f"azurerm_x.y{'[' * LONG}.id", "a." + "a" * LONG]),
        0,
        '"resources": 2',
    ),
    (
        "id-of-provider-segments",
        _plan(_cluster("azurerm_kubernetes_cluster.a", id="/providers" * (LONG // 10))),
        0,
        '"resources": 2',
    ),
    ("whitespace-and-lines", HEAD + " \n" * LONG + '"resource_changes": []}', 0, '"resources": 0'),
    ("digits", HEAD + '"x": ' + "1" * LONG + "}", 2, "line 1 column 62: unreadable JSON value"),
    ("numbers", HEAD + '"x": [' + "1.5," * (LONG // 4) + "1e999]}", 2, f"line 1 column {63 + LONG}: number too large"),
    (
        "escaped-backslashes",
        HEAD + '"x": "' + "\\\\" * LONG + '\\ud800"}',
        2,
        f"line 1 column {63 + 2 * LONG}: \\ud800 is a lone surrogate",
    ),
    (
        "unclosed-block-comments",
        '{"$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",'
        + '"resources": [] ' + "/* " * (LONG // 3),
        2,
        "invalid JSON at line 1 column 111: a /* comment is never closed",
    ),
    (
        "long-line-comment",
        '{"$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#", // '
        + "x" * LONG + '\n"contentVersion": "1.0.0.0", "resources": []}',
        0,
        '"resources": 0',
    ),
    (
        "unclosed-string-after-comment",
        '{"$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#", // c\n'
        + '"resources": [], "x": "' + '\\"' * LONG,
        2,
        "invalid JSON at line 2 column 23: Unterminated string",
    ),
]  # fmt: skip


@pytest.mark.slow  # a child process each, so that a pattern that backtracks fails on its timeout
@pytest.mark.parametrize(("content", "code", "expected"), [c[1:] for c in ADVERSARIAL], ids=[c[0] for c in ADVERSARIAL])
def test_every_reader_pattern_is_linear_on_adversarial_input(
    tmp_path: Path, content: str, code: int, expected: str
) -> None:
    path = tmp_path / "input.json"
    path.write_text(content, encoding="utf-8")
    # A child process: run_cli's timeout (120 s) fails the test if a pattern backtracks.
    done = run_cli("scan", "--format", "json", "--fail-on", "none", str(path), process=True)
    assert done.returncode == code, done.stderr[:2000]
    output = done.stdout if code == 0 else done.stderr
    assert expected in output, output[:2000]
    if code == 2:
        assert len(done.stderr.strip().splitlines()) == 1


def test_a_file_larger_than_azai_reads_is_refused_before_it_is_read(tmp_path: Path) -> None:
    """A sparse file: its size is what a pull request could send, its blocks cost no disk."""
    path = tmp_path / "plan.json"
    with path.open("wb") as handle:
        handle.truncate(MAX_INPUT_BYTES + 1)
    assert _one_error_line(path) == (
        f"azai: error: {path}: {MAX_INPUT_BYTES + 1:,} bytes, more than the {MAX_INPUT_BYTES:,} (256 MiB) azai "
        "reads from one file; split the plan (one per root module) or scan its parts"
    )
