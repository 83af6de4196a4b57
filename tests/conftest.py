"""Shared helpers: fixture and corpus locations, scanning, and running the real CLI."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from scanner.engine import ScanResult
from scanner.scan import ScanRequest, run_scan, scan_paths

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
CORPUS = ROOT.parent / "shared" / "corpus"


def scan(*paths: Path | str, parameters: str | None = None, select: Sequence[str] = ()) -> ScanResult:
    """Scan with defaults; ``select`` narrows to the rules a test is about."""
    if not select:
        return scan_paths([str(p) for p in paths], parameters)
    return run_scan(ScanRequest(paths=[str(p) for p in paths], parameters_file=parameters, select=select))


def run_cli(*args: str, cwd: Path = ROOT, env: Mapping[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """The real command line in a child process, as a user or a pipeline runs it.

    The child sees none of the user's Azure variables (azd placeholders read them), only ``env``.
    """
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("AZURE_")}
    env = {**inherited, **(env or {}), "PYTHONPATH": str(ROOT)}
    env.pop("AZAI_DEBUG", None)
    return subprocess.run(
        [sys.executable, "-m", "scanner", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=120,
    )


def cli_json(*args: str) -> dict[str, Any]:
    done = run_cli("scan", "--format", "json", "--fail-on", "none", *args)
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


@pytest.fixture
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.skip("../shared/corpus is not present")
    return CORPUS
