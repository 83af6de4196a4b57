"""Shared helpers: fixture and corpus locations, scanning, and running the real CLI."""

from __future__ import annotations

import datetime as dt
import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import chdir
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from scanner.cli.commands import main
from scanner.emulator.estate import Estate
from scanner.emulator.server import Emulator, Faults
from scanner.engine.results import ScanResult
from scanner.pipeline.scan import ScanRequest, run_scan

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
CORPUS = ROOT.parent / "shared" / "corpus"
# The date the fixtures are judged on: rules that compare dates (AZAI-504's model retirements)
# take the run's date, and tests pin it so that they do not change outcome as the calendar moves.
FIXTURE_DATE = dt.date(2026, 1, 15)


@pytest.fixture(autouse=True)
def _pinned_run_date(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every run, in this process or a child, judges dates as of FIXTURE_DATE."""
    monkeypatch.setenv("AZAI_RUN_DATE", FIXTURE_DATE.isoformat())


# The slow set (`-m "not slow"` leaves it out; README.md says which tests are in it): tests that
# serve an emulator are marked by `pytest_collection_modifyitems` below; the others mark
# themselves with one of these, or `pytest.mark.slow` where they render in Chromium, run the
# SARIF Multitool or fuzz.
CHILD_PROCESS = pytest.mark.slow  # starts a Python interpreter or Node.js: a few tenths of a second each
TIME_LIMIT = pytest.mark.slow  # waits out a transport's time limit (a deadline, a read timeout) in real time


def scan(*paths: Path | str, parameters: str | None = None, select: Sequence[str] = ()) -> ScanResult:
    """Scan with defaults; ``select`` narrows to the rules a test is about."""
    return run_scan(
        ScanRequest(paths=[str(p) for p in paths], parameters_file=parameters, select=select, today=FIXTURE_DATE)
    )


def run_cli(
    *args: str, cwd: Path = ROOT, env: Mapping[str, str] | None = None, process: bool = False
) -> subprocess.CompletedProcess[str]:
    """The real command line, as a user or a pipeline runs it: its parsing, its reports, its
    exit codes and its one-line errors. In this process (click's test runner, fast) unless
    ``process``: a child process, for what only a process has (a pipe closed early, a terminal,
    ``python -m scanner``, a command that changes the environment).

    The command sees none of the user's Azure variables (azd placeholders read them), only ``env``.
    """
    if process:
        inherited = {k: v for k, v in os.environ.items() if not k.startswith("AZURE_")}
        child = {**inherited, **(env or {}), "PYTHONPATH": str(ROOT)}
        child.pop("AZAI_DEBUG", None)
        return subprocess.run(
            [sys.executable, "-m", "scanner", *args], capture_output=True, text=True, cwd=cwd, env=child, timeout=120
        )
    with chdir(cwd):
        result = CliRunner().invoke(main, list(args), env={"AZAI_DEBUG": None, **(env or {})})
    return subprocess.CompletedProcess(["azai", *args], result.exit_code, result.stdout, result.stderr)


def cli_json(*args: str) -> dict[str, Any]:
    done = run_cli("scan", "--format", "json", "--fail-on", "none", *args)
    assert done.returncode == 0, done.stderr
    data: dict[str, Any] = json.loads(done.stdout)
    return data


CORPUS_ABSENT = "../shared/corpus is not present beside the checkout: conformance tests skipped"


def corpus_or_skip() -> Path:
    """The corpus; without it, a visible skip (CI must have it: there, its absence fails)."""
    if not CORPUS.is_dir():
        if os.environ.get("CI"):
            pytest.fail("CI runs the conformance tests: ../shared/corpus must be beside the checkout")
        pytest.skip(CORPUS_ABSENT)
    return CORPUS


def corpus_cases(paths: list[Any]) -> list[Any]:
    """Parameters over corpus files, or one case that says why there are none."""
    if CORPUS.is_dir():
        return paths
    return [pytest.param(None, marks=pytest.mark.skip(reason=CORPUS_ABSENT), id="no-corpus")]


@pytest.fixture
def corpus() -> Path:
    return corpus_or_skip()


@pytest.fixture(scope="module")
def serve() -> Iterator[Callable[..., Emulator]]:
    """``serve(estate, faults=None)``: one emulator for the module, serving each test's estate.
    The environment points DefaultAzureCredential and TLS trust at it while the module runs."""
    emulator: Emulator | None = None
    with pytest.MonkeyPatch.context() as patch:

        def start(estate: Estate, faults: Faults | None = None) -> Emulator:
            nonlocal emulator
            if emulator is None:
                emulator = Emulator(estate, faults).start()
                for key, value in emulator.environment().items():
                    patch.setenv(key, value)
            return emulator.serve(estate, faults)

        yield start
        if emulator is not None:
            emulator.stop()


@pytest.fixture(scope="session")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``(cert.pem, key.pem)`` for 127.0.0.1, made once per test process: a 2048-bit RSA key
    takes tens of milliseconds of CPU, and the scripted TLS servers of the transport tests start
    about a hundred times. Read-only: servers load it, clients trust it (valid for two days)."""
    from scanner.emulator.cert import make_certificate

    return make_certificate(tmp_path_factory.mktemp("certificate"))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that serves an emulator is slow."""
    for item in items:
        if "serve" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True, scope="session")
def _no_user_state(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Tests never read the user's caches, configuration or Azure variables: user-level paths
    point at an empty temporary folder, and AZURE_* variables are removed."""
    home = tmp_path_factory.mktemp("home")
    for variable, folder in (("XDG_CACHE_HOME", "cache"), ("XDG_CONFIG_HOME", "config")):
        (home / folder).mkdir()
        os.environ[variable] = str(home / folder)
    for variable in [v for v in os.environ if v.startswith("AZURE_")]:
        del os.environ[variable]
