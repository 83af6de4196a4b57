"""Options that ``scan`` and ``drift`` share, declared once so their names, help and meaning
cannot drift apart, and the step that turns them into the pipeline's request fields."""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

import click

FORMATS = ("text", "json", "sarif", "markdown", "junit", "html")
SEVERITY_CHOICES = ["critical", "high", "medium", "low", "none"]

Decorator = Callable[[Any], Any]


def _folder(option: str, value: str | None) -> str | None:
    """A folder option is checked as it is read, before any work or any report is written."""
    from pathlib import Path

    from scanner.errors import InputError

    if value is not None and not Path(value).is_dir():
        raise InputError(f"{option} {value}: not a folder")
    return value


def _max_bytes(value: str) -> int:
    """``--max-bytes``: 0 for no limit, else room at least for the counts and the last line."""
    from reports import MIN_MAX_BYTES
    from scanner.errors import InputError

    limit = int(value) if value.isdigit() else -1
    if limit != 0 and limit < MIN_MAX_BYTES:
        raise InputError(f"--max-bytes {value}: give 0 (no limit) or a whole number of at least {MIN_MAX_BYTES}")
    return limit


def rule_names(option: str, values: tuple[str, ...]) -> tuple[str, ...]:
    """``--select``/``--ignore`` entries, from repeated options, comma-separated lists or both:
    ``--select AZAI-207,AZAI-208`` is how Checkov and Trivy take theirs, so a newcomer's habit
    works instead of being told the pair "matches no rule id". No rule id, slug or pillar holds a
    comma. An empty entry (``AZAI-207,``, or ``--select "$RULES"`` with nothing in it) is refused:
    read as nothing, it would silently select every rule."""
    from scanner.errors import InputError

    names = [name.strip() for value in values for name in value.split(",")]
    if any(not name for name in names):
        empty = next(value for value in values if any(not name.strip() for name in value.split(",")))
        raise InputError(f"{option} {empty!r}: an empty entry; give rule ids, slugs or pillars, separated by commas")
    return tuple(names)


def _apply(options: list[Decorator]) -> Decorator:
    def decorate(command: Any) -> Any:
        for option in reversed(options):
            command = option(command)
        return command

    return decorate


report_options = _apply(
    [
        click.option(
            "--format",
            "formats",
            multiple=True,
            type=click.Choice(FORMATS),
            help="Report format [default: the --output extension (.sarif, .json, .md, .xml for junit, .html), "
            "else text]. Repeat, each with its --output, to write several reports from one run.",
        ),
        click.option(
            "--output",
            "-o",
            "outputs",
            multiple=True,
            metavar="FILE",
            help="Write the report of the matching --format (the n-th --output gets the n-th --format) to FILE, "
            "atomically, with the umask's permissions.",
        ),
        click.option(
            "--max-bytes",
            default="65536",
            metavar="N",
            callback=lambda _ctx, _param, value: _max_bytes(value),
            help="Cut the markdown report to at most N bytes (so N characters), keeping the counts and the most "
            "severe findings; 0: no limit. The default fits a GitHub pull-request comment (65,536 characters); "
            "a step summary holds 1 MiB. [default: 65536]",
        ),
        click.option(
            "--repo-root",
            metavar="DIR",
            callback=lambda _ctx, _param, value: _folder("--repo-root", value),
            help="Repository root that SARIF file URIs are relative to [default: the git top level of the "
            "scanned files, wherever azai runs; for files in no repository, of the current folder, else the "
            "current folder].",
        ),
    ]
)

live_options = _apply(
    [
        click.option(
            "--subscription",
            "subscriptions",
            multiple=True,
            metavar="ID",
            help="Read this subscription live. Repeatable.",
        ),
        click.option(
            "--management-group",
            "management_groups",
            multiple=True,
            metavar="ID",
            help="Read every subscription under it.",
        ),
        click.option("--all-subscriptions", is_flag=True, help="Read every subscription the identity can list."),
        click.option(
            "--cloud",
            type=click.Choice(["AzureCloud", "AzureUSGovernment", "AzureChinaCloud"]),
            default="AzureCloud",
            show_default=True,
            help="The cloud to read live, and that templates' environment() answers for.",
        ),
        click.option(
            "--arm-endpoint", metavar="URL", help="Send every management-plane call (Resource Graph included) to URL."
        ),
        click.option(
            "--timeout",
            type=click.FloatRange(min=0, min_open=True),
            metavar="SECONDS",
            help="End the live reads after SECONDS: what was not read by then is reported as a coverage gap "
            "(exit 3). [default: no limit; each request still times out]",
        ),
        click.option(
            "--save-inventory",
            metavar="FILE",
            help="Write the resources read as a snapshot: a later 'azai drift' BASE, and what SARIF results "
            "on live resources point at.",
        ),
        click.option(
            "--parameters",
            "parameters_file",
            metavar="FILE",
            help="ARM parameters file for the templates read; azd ${NAME=default} placeholders are resolved.",
        ),
        click.option(
            "--source-root",
            metavar="DIR",
            callback=lambda _ctx, _param, value: _folder("--source-root", value),
            help="Folder of the Terraform root module, or of the .bicep files, that findings point into "
            "[default: the folder of the plan (or of the current directory) when it is the plan's root module; "
            "the .bicep beside a compiled template].",
        ),
    ]
)


# The drift command's own: who deploys through the reviewed path (docs/drift.md, "Who changed it").
expected_writer_option = click.option(
    "--expected-writer",
    "expected_writers",
    multiple=True,
    metavar="ID",
    help="A service principal or managed identity that deploys through the reviewed path, as Resource Graph's "
    "change records name it (changedBy): a live drift it made is reported at low severity as deployed outside "
    "the IaC under review. Repeatable; adds to the configuration file's expected-writers.",
)


def policy_options(default_gate: str, gate_meaning: str) -> Decorator:
    """Rule selection, rule options, configuration, baselines, the gate, and cost settings."""
    return _apply(
        [
            click.option(
                "--fail-on",
                type=click.Choice(SEVERITY_CHOICES, case_sensitive=False),
                default=None,
                help="Exit 1 when an unsuppressed (and, with --baseline, new) finding has this severity or "
                f"higher; 'none' never fails. [default: config file, else {default_gate}: {gate_meaning}]",
            ),
            click.option(
                "--select",
                multiple=True,
                metavar="RULE",
                callback=lambda _ctx, _param, values: rule_names("--select", values),
                help="Run only these rules (id, slug or pillar). Repeatable, or comma-separated: "
                "--select AZAI-207,AZAI-208.",
            ),
            click.option(
                "--ignore",
                multiple=True,
                metavar="RULE",
                callback=lambda _ctx, _param, values: rule_names("--ignore", values),
                help="Do not run these rules (id, slug or pillar). Repeatable, or comma-separated.",
            ),
            click.option(
                "--rule-option",
                "rule_options",
                multiple=True,
                metavar="RULE:KEY=VALUE",
                help="Set a rule option (see 'azai rules RULE'), e.g. AZAI-201:max_idle_before_shutdown=PT2H. "
                'VALUE is read as azai.toml reads it (a list ["eastus"], a number, true, a "string"); '
                "bare text is a string, or a comma-separated list where the option is a list. Repeatable.",
            ),
            click.option(
                "--config",
                "config_file",
                metavar="FILE",
                help="Configuration file [default: nearest azai.toml or pyproject.toml].",
            ),
            click.option(
                "--baseline",
                metavar="FILE",
                help="Fail only on findings not in this baseline; mark them new or unchanged.",
            ),
            click.option(
                "--write-baseline", metavar="FILE", help="Record the current findings as a baseline (atomically)."
            ),
            click.option(
                "--prices",
                "prices_file",
                metavar="FILE",
                help="Price table whose regions replace the bundled prices [default: the refreshed cache].",
            ),
            click.option(
                "--owner-tag", metavar="KEY", help="Tag that names a resource's owner in cost totals [default: owner]."
            ),
        ]
    )


def request_fields(given: dict[str, Any]) -> dict[str, Any]:
    """The shared options as ``RunRequest`` fields: the live scope gathered into one value."""
    from scanner.sources.live.scope import LiveScope

    fields = dict(given)
    fields["live"] = LiveScope(
        list(fields.pop("subscriptions")), list(fields.pop("management_groups")), fields.pop("all_subscriptions")
    )
    fields["progress"] = progress_wanted()
    return fields


def progress_wanted() -> bool:
    """Progress lines only for a person at a terminal, never in CI logs."""
    return sys.stderr.isatty() and not os.environ.get("CI")
