"""Fuzzing: `azai scan` on structurally mutated fixtures never ends in an internal error.

Hypothesis takes the project's own plans, templates and what-if results
(tests/fuzz_mutations.py), changes one to three values (wrong types at any path, deletions,
renamed and inserted keys, huge and non-finite numbers, deep nesting, 100k-char strings, lone
surrogates and control characters, malformed ARM expressions) and runs the real command line
in this process. Whatever the input, it must hold that:

- the exit code is 0, 1, 2 or 3: never 70, the internal error;
- on exit 2, stderr is exactly one line, without control characters;
- on 0, 1 and 3 the report was written, and it parses: JSON (strict: no NaN) for json and
  sarif, XML for junit, and text, markdown and html hold no raw control characters but newline.

Besides mutations anywhere in a fixture, one test aims inside what-if autoscale settings (their
profiles, rules, metric triggers and scale actions), with values of the wrong JSON type half the
time: a ``metricTrigger`` of ``false`` there was the crash a 3,000-file campaign found (issue 37).

Profiles (``AZAI_FUZZ_PROFILE``):

- ``ci`` (the default): a fixed seed and 2,000 examples shared by the fixtures, so every run
  of the suite tries the same inputs (about 35 s of one core, split across the workers),
  and a tenth of that aimed at autoscale settings;
- ``long``: a fresh random seed and many more examples, for a local hunt:
  ``AZAI_FUZZ_PROFILE=long .venv/bin/python -m pytest -p no:cacheprovider tests/test_fuzz.py``.

Neither profile keeps an example database, and Hypothesis's own cache goes to the system's
temporary folder (``azai-hypothesis``): nothing is written into the checkout or the user's
files. A failure prints the shrunk input as the fixture and its mutations.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
import traceback
import xml.etree.ElementTree as ElementTree
from pathlib import Path
from typing import NoReturn

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis.configuration import set_hypothesis_home_dir

from scanner.cli.commands import main
from tests.conftest import ROOT
from tests.fuzz_mutations import FIXTURE_FILES, Case, autoscale_cases, cases

pytestmark = pytest.mark.slow

# Generating a case draws paths from a whole fixture, and some values are 100k characters:
# both are meant, so the health checks about slow or large data do not apply.
_SLOW_DATA = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.large_base_example]
settings.register_profile(
    "ci", max_examples=2000, derandomize=True, database=None, deadline=None, suppress_health_check=_SLOW_DATA
)
settings.register_profile("long", max_examples=20_000, database=None, deadline=None, suppress_health_check=_SLOW_DATA)
PROFILE = settings.get_profile(os.environ.get("AZAI_FUZZ_PROFILE", "ci"))
# Hypothesis caches what it learns of the code under test (its constants) in ``.hypothesis`` of
# the working directory, the checkout, as soon as the test is collected: keep it in the temp dir.
set_hypothesis_home_dir(Path(tempfile.gettempdir()) / "azai-hypothesis")

AZAI_PACKAGES = tuple(str(ROOT / package) + os.sep for package in ("scanner", "checks", "reports"))
# C0 controls but newline, DEL, C1 controls, and the Unicode line and paragraph separators.
CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029]")


class FuzzFailure(AssertionError):
    """A broken property, with the signature that tells it apart from other failures."""

    def __init__(self, signature: str, case: Case, detail: str) -> None:
        super().__init__(f"{signature}\n  input: {case.describe()}\n  {detail}")
        self.signature = signature
        self.case = case
        self.detail = detail


def fail(signature: str, case: Case, detail: str, cause: BaseException | None = None) -> NoReturn:
    """Raise a `FuzzFailure` from a code object named after its signature.

    Hypothesis tells failures apart by the place they are raised from. Raised here, every
    internal error would be one failure, shrunk to one input; raised from a place named after
    the signature, each distinct bug is shrunk and reported on its own.
    """
    failure = FuzzFailure(signature, case, detail)
    failure.__cause__ = cause
    exec(compile("raise failure", signature, "exec"), {"failure": failure})
    raise failure  # not reached: the line above raised it


def innermost_azai_frame(error: BaseException) -> str:
    """``path:line in function`` of the deepest frame in azai's own code."""
    frames = [f for f in traceback.extract_tb(error.__traceback__) if f.filename.startswith(AZAI_PACKAGES)]
    if not frames:
        return "outside azai"
    frame = frames[-1]
    return f"{Path(frame.filename).relative_to(ROOT)}:{frame.lineno} in {frame.name}"


def check(case: Case) -> None:
    """Scan the mutated fixture and check the properties in the module docstring."""
    with tempfile.TemporaryDirectory(prefix="azai-fuzz-") as folder:
        source = Path(folder) / Path(case.fixture).name
        source.write_text(case.text(), encoding="utf-8", errors="surrogatepass")
        report = Path(folder) / f"report.{case.fmt}"
        # AZAI_DEBUG lets the exception that would end in exit 70 reach us with its traceback.
        result = CliRunner().invoke(
            main, ["scan", str(source), "--format", case.fmt, "--output", str(report)], env={"AZAI_DEBUG": "1"}
        )
        error = result.exception
        if error is not None and not isinstance(error, SystemExit):
            fail(f"{type(error).__name__} at {innermost_azai_frame(error)}", case, f"{error!r}"[:500], error)
        if result.exit_code not in (0, 1, 2, 3):
            fail(f"exit {result.exit_code}", case, result.stderr[:500])
        if result.exit_code == 2:
            check_one_line(case, result.stderr)
        else:
            check_report(case, report)


def check_one_line(case: Case, stderr: str) -> None:
    if stderr.count("\n") != 1 or not stderr.endswith("\n"):
        fail("exit 2 with stderr not one line", case, repr(stderr[:500]))
    if CONTROL.search(stderr[:-1]):
        fail("exit 2 with a control character in the stderr line", case, repr(stderr[:500]))


def check_report(case: Case, report: Path) -> None:
    if not report.is_file():
        fail(f"report not written: {case.fmt}", case, "")
    problem = report_problem(case.fmt, report.read_bytes())
    if problem is not None:
        fail(f"report does not parse: {case.fmt}", case, str(problem)[:500], problem)


def report_problem(fmt: str, data: bytes) -> Exception | None:
    """Why a report does not parse, or None. Caught here and raised by the caller, outside this
    ``except``, so that the parser's own frame does not split one signature into several."""
    try:
        text = data.decode("utf-8")
        if fmt in ("json", "sarif"):
            json.loads(text, parse_constant=_reject_constant)
        elif fmt == "junit":
            ElementTree.fromstring(data)
        elif found := CONTROL.search(text.replace("\t", " ") if fmt == "html" else text):
            raise ValueError(f"raw control character {found.group()!r} at offset {found.start()}")
    except (ValueError, ElementTree.ParseError) as exc:
        return exc
    return None


def _reject_constant(token: str) -> None:
    raise ValueError(f"{token} is not JSON")


# One test per fixture, each with its share of the profile's examples, so that the suite's
# workers (pytest -n) share the fuzzing instead of one of them running all of it.
PER_FIXTURE = settings(PROFILE, max_examples=max(1, PROFILE.max_examples // len(FIXTURE_FILES)))


@pytest.mark.parametrize("fixture", FIXTURE_FILES)
def test_scan_of_mutated_fixture_ends_cleanly(fixture: str) -> None:
    @PER_FIXTURE
    @given(case=cases((fixture,)))
    def scan_ends_cleanly(case: Case) -> None:
        check(case)

    scan_ends_cleanly()


AIMED = settings(PROFILE, max_examples=max(1, PROFILE.max_examples // 10))


def test_scan_of_whatif_autoscale_settings_mutated_inside_ends_cleanly() -> None:
    @AIMED
    @given(case=autoscale_cases())
    def scan_ends_cleanly(case: Case) -> None:
        check(case)

    scan_ends_cleanly()
