"""What the reports show, apart from what fails the run: ``--quiet``, ``--compact``,
``--severity`` and colour. The gate (``--fail-on``) and the exit code never depend on them."""

from __future__ import annotations

import dataclasses
import functools
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

import click

from scanner.errors import InputError

if TYPE_CHECKING:
    from scanner.engine.results import ScanResult

SHOWN_CHOICES = ["critical", "high", "medium", "low"]


@dataclass(frozen=True)
class View:
    """How the reports of one run are shown."""

    quiet: bool = False  # no report on stdout: files from --output only, and the exit code
    compact: bool = False  # the text report: a line per finding, then one closing line
    severity: str | None = None  # the lowest severity of the findings shown
    no_color: bool = False

    def colour(self, stream: TextIO) -> bool:
        """Colour only for a person at a terminal: never into a file or a pipe, and never when
        ``NO_COLOR`` is set to anything (https://no-color.org) or ``--no-color`` is given."""
        return not self.no_color and not os.environ.get("NO_COLOR") and stream.isatty()

    def shown(self, result: ScanResult) -> ScanResult:
        """The result with the findings below ``--severity`` left out.

        A report must never hide a finding that fails the run, or its verdict would contradict
        the exit code, so a ``--severity`` above the gate is refused.
        """
        if self.severity is None:
            return result
        from scanner.engine.checkapi import Severity

        lowest = Severity.parse(self.severity)
        if result.fail_on is not None and lowest > result.fail_on:
            raise InputError(
                f"--severity {self.severity} would hide findings that fail the run (--fail-on "
                f"{result.fail_on.label}): give a --fail-on of {self.severity} or higher, or a lower --severity"
            )
        return dataclasses.replace(result, findings=[f for f in result.findings if f.severity >= lowest])


_OPTIONS = [
    click.option(
        "--quiet",
        "-q",
        is_flag=True,
        help="Write no report to stdout and no progress: the exit code gives the verdict, and reports "
        "named with --output are still written. Errors and warnings still go to stderr.",
    ),
    click.option(
        "--compact",
        is_flag=True,
        help="Text report: one line per finding and per undetermined check, then one closing line with the "
        "counts and the verdict; no headings or cost breakdown.",
    ),
    click.option(
        "--severity",
        type=click.Choice(SHOWN_CHOICES, case_sensitive=False),
        help="Show only findings of this severity or higher, in every report. The gate is --fail-on, "
        "which may not be lower (a report never hides what fails the run).",
    ),
    click.option(
        "--no-color",
        is_flag=True,
        help="No colour in the text report. Colour is used only on a terminal, and never when NO_COLOR is set.",
    ),
]


def view_options(command: Any) -> Any:
    """Adds the view options to a command, which receives them as one ``view`` argument."""

    @functools.wraps(command)
    def wrapper(*args: Any, quiet: bool, compact: bool, severity: str | None, no_color: bool, **kwargs: Any) -> Any:
        return command(*args, view=View(quiet, compact, severity and severity.lower(), no_color), **kwargs)

    for option in reversed(_OPTIONS):
        wrapper = option(wrapper)
    return wrapper
