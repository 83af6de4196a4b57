"""The drifted estate with its change history written by someone who had not read the
implementation (fixtures/independent/drift-witness/, from docs/drift.md and Microsoft Learn's
resourcechanges reference alone): every drift finding, its severity and who the change records
say made it, as its expected.json predicts.

Its change records are relative (``ago``) and its base snapshot is absolute; the test moves the
snapshot to 20 days before the run, the age its expectations were written for, so the "no
change record" reasons read the same on any day."""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scanner.emulator.estate import Estate
from scanner.emulator.server import Emulator
from tests.conftest import FIXTURES, run_cli

ESTATE = FIXTURES / "independent" / "drift-witness"
BASE_AGE = dt.timedelta(days=20, hours=1)  # as the writer ran it: 2026-11-09T08:00Z against 2026-11-29 ~09:40Z
# Placeholders the writer used for times that move with the clock: "<Q - P2DT3H10M>" is the
# query's time less a duration.
WHEN = re.compile(r"<Q - P[0-9DTHM]+>")
SHOWN = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}")
# Fields the writer described in prose rather than as the report spells them.
PROSE = ("reason", "note")


def _base(tmp_path: Path) -> Path:
    snapshot = json.loads((ESTATE / "before.json").read_text(encoding="utf-8"))
    snapshot["scan"]["time"] = (dt.datetime.now(dt.UTC) - BASE_AGE).isoformat()
    path = tmp_path / "before.json"
    path.write_text(json.dumps(snapshot), encoding="utf-8")
    return path


def _outcome(finding: dict[str, Any], change: dict[str, Any], summary: str) -> tuple[Any, ...]:
    """A finding as compared: rule, resource, path, severity, every change field the writer
    predicted (but prose), and the summary line with its time made a pattern."""
    fields = tuple(sorted((k, json.dumps(v)) for k, v in change.items() if k not in PROSE))
    return (finding["rule"], finding["resource_id"].lower(), finding["path"], finding["severity"], fields, summary)


def _predicted(entry: dict[str, Any]) -> tuple[Any, ...]:
    return _outcome(entry, entry["change"], WHEN.sub("<time>", entry["change_summary"]))


def _reported(finding: dict[str, Any], predicted_keys: set[str]) -> tuple[Any, ...]:
    change = {k: v for k, v in (finding["change"] or {}).items() if k in predicted_keys}
    summary = SHOWN.sub("<time>", (finding["change"] or {}).get("summary") or "")
    entry = {"rule": finding["rule_id"], "resource_id": finding["resource_id"], "path": finding["evidence"]["path"]}
    return _outcome({**entry, "severity": finding["severity"]}, change, summary)


def test_the_independent_drifted_estate_is_attributed_as_its_writer_predicted(
    serve: Callable[..., Emulator], tmp_path: Path
) -> None:
    expected = json.loads((ESTATE / "expected.json").read_text(encoding="utf-8"))
    emulator = serve(Estate.load(ESTATE / "after-estate.json"))
    writer = expected["command"].split("--expected-writer ", 1)[1].split()[0]
    done = run_cli(
        "drift",
        str(_base(tmp_path)),
        "--all-subscriptions",
        "--arm-endpoint",
        emulator.endpoint,
        "--expected-writer",
        writer,
        "--format",
        "json",
    )
    assert done.returncode == expected["expected_exit_code"], done.stderr
    report = json.loads(done.stdout)
    keys = {key for entry in expected["expected"] for key in entry["change"]}
    by_place = lambda outcome: (outcome[:4], outcome[5])  # noqa: E731
    reported = sorted((_reported(f, keys) for f in report["findings"]), key=by_place)
    predicted = sorted((_predicted(entry) for entry in expected["expected"]), key=by_place)
    assert len(report["findings"]) == expected["finding_count"]
    # Compare each finding as the writer predicted it: a field the writer left out of one
    # finding's change (a "no change record" finding's client) is not compared for it.
    for got, want in zip(reported, predicted, strict=True):
        wanted = dict(want[4])
        assert (got[:4], {k: v for k, v in got[4] if k in wanted}, got[5]) == (want[:4], wanted, want[5])
    assert report["summary"]["by_severity"] == expected["by_severity"]
    drift = report["drift"]
    assert sorted(r.lower() for r in drift["added"]) == sorted(r.lower() for r in expected["drift"]["added"])
    assert sorted(r.lower() for r in drift["removed"]) == sorted(r.lower() for r in expected["drift"]["removed"])
    assert report["coverage"] == [] and emulator.writes() == []


def test_the_markdown_drift_table_writes_values_as_json_as_text_and_json_do(
    serve: Callable[..., Emulator], tmp_path: Path
) -> None:
    """The writer saw Python's ``True``/``False`` and quotes in the Markdown table, where text
    and JSON write ``true`` and JSON lists."""
    emulator = serve(Estate.load(ESTATE / "after-estate.json"))
    done = run_cli(
        "drift",
        str(_base(tmp_path)),
        "--all-subscriptions",
        "--arm-endpoint",
        emulator.endpoint,
        "--format",
        "markdown",
    )
    row = next(line for line in done.stdout.splitlines() if "`oai-chat-prod` | `properties.disableLocalAuth`" in line)
    assert row == "| `oai-chat-prod` | `properties.disableLocalAuth` | `true` | `false` |"
    assert "True" not in done.stdout and "'value'" not in done.stdout
