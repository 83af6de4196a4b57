"""Baselines: the findings a team has accepted as of one scan.

A baseline marks each finding new or unchanged and lists the ones that disappeared, so a gate
can fail on new findings only. Findings are matched by fingerprint, which survives line moves.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from scanner import __version__
from scanner.engine.results import Finding
from scanner.errors import InputError
from scanner.model.jsondoc import load_document
from scanner.output import write_atomic

BASELINE_VERSION = 1


@dataclass(frozen=True)
class BaselineEntry:
    """A finding recorded in a baseline; enough to report it when it has disappeared."""

    fingerprint: str
    rule_id: str
    resource_id: str
    resource_name: str
    resource_type: str
    source: str
    message: str
    uri: str | None
    start_line: int | None
    start_column: int | None


def baseline_entry(finding: Finding) -> BaselineEntry:
    place = finding.place
    return BaselineEntry(
        fingerprint=finding.fingerprint,
        rule_id=finding.check.id,
        resource_id=finding.resource.id,
        resource_name=finding.resource.name,
        resource_type=finding.resource.type,
        source=finding.resource.origin.kind,
        message=finding.violation.message,
        uri=Path(place.file).as_posix() if place and place.file else None,
        start_line=place.line if place else None,
        start_column=place.column if place else None,
    )


def write_baseline(path: str, findings: Iterable[Finding]) -> None:
    entries = sorted((baseline_entry(f) for f in findings), key=lambda e: (e.fingerprint, e.rule_id))
    document = {
        "azai_baseline": BASELINE_VERSION,
        "tool_version": __version__,
        "findings": [dataclasses.asdict(e) for e in entries],
    }
    write_atomic(path, (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))


def read_baseline(path: str) -> dict[str, BaselineEntry]:
    data = load_document(Path(path), path).data
    if data.get("azai_baseline") != BASELINE_VERSION or not isinstance(data.get("findings"), list):
        raise InputError(f"{path}: not an azai baseline (version {BASELINE_VERSION}); write one with --write-baseline")
    fields = {f.name for f in dataclasses.fields(BaselineEntry)}
    entries: dict[str, BaselineEntry] = {}
    for item in data["findings"]:
        if not isinstance(item, dict) or set(item) != fields:
            raise InputError(f"{path}: baseline entry is malformed: {str(item)[:80]}")
        entry = BaselineEntry(**item)
        entries[entry.fingerprint] = entry
    return entries


def compare_with_baseline(
    findings: list[Finding], baseline: Mapping[str, BaselineEntry]
) -> tuple[list[Finding], list[BaselineEntry]]:
    """Findings marked new or unchanged, and the baseline entries that are now absent."""
    current = {f.fingerprint for f in findings}
    marked = [
        dataclasses.replace(f, baseline_state="unchanged" if f.fingerprint in baseline else "new") for f in findings
    ]
    absent = sorted((e for fp, e in baseline.items() if fp not in current), key=lambda e: (e.rule_id, e.fingerprint))
    return marked, absent
