"""The ``azai`` command line.

Imports stay inside the commands: ``azai --version`` and ``azai --help`` load click and this
module only, never the Azure SDK or the rules.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING, Any

import click

from scanner import __version__
from scanner.errors import InputError

if TYPE_CHECKING:
    from scanner.engine import ScanResult

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2
EXIT_INTERNAL = 70

SEVERITY_CHOICES = ["critical", "high", "medium", "low", "none"]


class _Group(click.Group):
    """Turns input errors into one line and exit 2, and anything unexpected into exit 70."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except InputError as exc:
            click.echo(f"azai: error: {exc}", err=True)
            sys.exit(EXIT_ERROR)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except Exception as exc:
            if os.environ.get("AZAI_DEBUG"):
                raise
            click.echo(
                f"azai: internal error: {type(exc).__name__}: {exc} (rerun with AZAI_DEBUG=1 for details)",
                err=True,
            )
            sys.exit(EXIT_INTERNAL)


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="azai")
def main() -> None:
    """Audit AI workloads on Azure against the Well-Architected AI principles.

    \b
    Exit codes:
      0  nothing fails the gate (--fail-on; suppressed and baselined findings never do)
      1  findings at or above the --fail-on severity
      2  usage or input error (one line on stderr)
      70 internal error (a bug; rerun with AZAI_DEBUG=1)
    """


FORMATS = ("text", "json", "sarif", "markdown", "junit")


def pair_outputs(formats: tuple[str, ...], outputs: tuple[str, ...]) -> list[tuple[str, str | None]]:
    """Match each ``--format`` with the ``--output`` in the same position; the rest go to stdout.

    ``--format sarif --output r.sarif --format markdown --output r.md`` writes two files from
    one scan. At most one format may go to stdout.
    """
    chosen = formats or ("text",)
    if len(outputs) > len(chosen):
        raise InputError("more --output than --format options: give one --format per --output")
    targets = [(fmt, outputs[i] if i < len(outputs) else None) for i, fmt in enumerate(chosen)]
    if sum(1 for _, path in targets if path is None) > 1:
        raise InputError("only one report can go to stdout: give an --output for each further --format")
    return targets


def render(fmt: str, result: ScanResult) -> tuple[bytes, list[str]]:
    """One report format's bytes, and warnings (such as output cut to fit GitHub's limits)."""
    if fmt == "sarif":
        from reports import sarif

        return sarif.render(result)
    if fmt == "json":
        from reports import json_report

        return json_report.render(result), []
    if fmt == "markdown":
        from reports import markdown

        return markdown.render(result), []
    if fmt == "junit":
        from reports import junit

        return junit.render(result), []
    from reports import text

    return text.render(result), []


@main.command()
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option("--parameters", "parameters_file", metavar="FILE", help="ARM parameters file for the templates scanned.")
@click.option(
    "--format",
    "formats",
    multiple=True,
    type=click.Choice(FORMATS),
    help="Report format (default text). Repeat, each with its --output, to write several reports from one scan.",
)
@click.option(
    "--output",
    "-o",
    "outputs",
    multiple=True,
    metavar="FILE",
    help="Write the report of the matching --format to FILE.",
)
@click.option(
    "--fail-on",
    type=click.Choice(SEVERITY_CHOICES, case_sensitive=False),
    default=None,
    help="Exit 1 when an unsuppressed (and, with --baseline, new) finding has this severity or higher; "
    "'none' never fails. [default: config file, else high]",
)
@click.option("--select", multiple=True, metavar="RULE", help="Run only these rules (id, slug or pillar). Repeatable.")
@click.option(
    "--ignore", multiple=True, metavar="RULE", help="Do not run these rules (id, slug or pillar). Repeatable."
)
@click.option(
    "--rule-option",
    "rule_options",
    multiple=True,
    metavar="RULE:KEY=VALUE",
    help="Set a rule option, e.g. AZAI-201:max_idle_before_shutdown=PT2H (see 'azai rules RULE'). Repeatable.",
)
@click.option(
    "--config", "config_file", metavar="FILE", help="Configuration file [default: nearest azai.toml or pyproject.toml]."
)
@click.option(
    "--baseline", metavar="FILE", help="Fail only on findings not in this baseline; mark them new or unchanged."
)
@click.option("--write-baseline", metavar="FILE", help="Record the current findings as a baseline (atomically).")
@click.option(
    "--skip-unknown",
    is_flag=True,
    help="Skip files that are not a plan, template or what-if result instead of failing.",
)
def scan(
    paths: tuple[str, ...],
    parameters_file: str | None,
    formats: tuple[str, ...],
    outputs: tuple[str, ...],
    fail_on: str | None,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    rule_options: tuple[str, ...],
    config_file: str | None,
    baseline: str | None,
    write_baseline: str | None,
    skip_unknown: bool,
) -> None:
    """Scan Terraform plan JSON, ARM templates (compiled Bicep included) and what-if output.

    PATH is a file or a directory (its *.json files are scanned; files that are not a plan,
    template or what-if result are skipped). The format is detected from the content.
    """
    from scanner.output import write_atomic
    from scanner.scan import ScanRequest, run_scan

    targets = pair_outputs(formats, outputs)
    request = ScanRequest(
        paths=paths,
        parameters_file=parameters_file,
        rule_options=rule_options,
        select=select,
        ignore=ignore,
        fail_on=fail_on,
        config_file=config_file,
        baseline=baseline,
        write_baseline=write_baseline,
        skip_unknown=skip_unknown,
    )
    result = run_scan(request)
    for fmt, path in targets:
        data, warnings = render(fmt, result)
        for warning in warnings:
            click.echo(f"azai: warning: {warning}", err=True)
        if path:
            write_atomic(path, data)
        else:
            sys.stdout.buffer.write(data)
            sys.stdout.flush()
    sys.exit(EXIT_FINDINGS if result.failing() else EXIT_OK)


@main.command()
@click.argument("rule_id", required=False, metavar="[RULE]")
def rules(rule_id: str | None) -> None:
    """List the rules, or print one rule's documentation (by id or slug)."""
    from scanner.docgen import rule_markdown
    from scanner.registry import find_check, load_checks

    checks = load_checks()
    if rule_id:
        check = find_check(checks, rule_id)
        if check is None:
            raise InputError(f"no rule {rule_id!r} (see 'azai rules')")
        click.echo(rule_markdown(check), nl=False)
        return
    width = max(len(c.slug) for c in checks)
    for check in checks:
        click.echo(f"{check.id}  {check.slug:<{width}}  {check.severity.label:<8}  {check.pillar:<24}  {check.title}")
