"""The ``azai`` command line.

Imports stay inside the commands: ``azai --version`` and ``azai --help`` load click and this
module only, never the Azure SDK or the rules.
"""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from scanner import __version__
from scanner.errors import InputError

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
      0  nothing at or above the --fail-on severity
      1  findings at or above the --fail-on severity
      2  usage or input error (one line on stderr)
      70 internal error (a bug; rerun with AZAI_DEBUG=1)
    """


@main.command()
@click.argument("paths", nargs=-1, required=True, metavar="PATH...")
@click.option("--parameters", "parameters_file", metavar="FILE", help="ARM parameters file for the templates scanned.")
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
@click.option("--output", "-o", metavar="FILE", help="Write the report to FILE (atomically) instead of stdout.")
@click.option(
    "--fail-on",
    type=click.Choice(SEVERITY_CHOICES, case_sensitive=False),
    default="high",
    show_default=True,
    help="Exit 1 when a finding has this severity or higher; 'none' never fails.",
)
@click.option(
    "--rule-option",
    "rule_options",
    multiple=True,
    metavar="RULE:KEY=VALUE",
    help="Set a rule option, e.g. AZAI-201:max_idle_before_shutdown=PT2H (see 'azai rules RULE'). Repeatable.",
)
def scan(
    paths: tuple[str, ...],
    parameters_file: str | None,
    output_format: str,
    output: str | None,
    fail_on: str,
    rule_options: tuple[str, ...],
) -> None:
    """Scan Terraform plan JSON, ARM templates (compiled Bicep included) and what-if output.

    PATH is a file or a directory (its *.json files are scanned; files that are not a plan,
    template or what-if result are skipped). The format is detected from the content.
    """
    from scanner.checkapi import Severity
    from scanner.output import write_atomic
    from scanner.scan import scan_paths

    threshold = None if fail_on.lower() == "none" else Severity.parse(fail_on)
    result = scan_paths(list(paths), parameters_file, rule_options)
    if output_format == "json":
        from reports import json_report

        data = json_report.render(result, threshold)
    else:
        from reports import text

        data = text.render(result, threshold)
    if output:
        write_atomic(output, data)
    else:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
    sys.exit(EXIT_FINDINGS if result.at_or_above(threshold) else EXIT_OK)


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
