"""The ``azai`` command line.

Imports stay inside the commands: ``azai --version`` and ``azai --help`` load click and this
module only, never the Azure SDK or the rules.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING, Any

import click

from scanner import __version__
from scanner.cli.options import (
    expected_writer_option,
    live_options,
    policy_options,
    progress_wanted,
    report_options,
    request_fields,
)
from scanner.cli.targets import pair_outputs
from scanner.cli.view import View, view_options
from scanner.errors import InputError
from scanner.policy.gates import DRIFT_GATE, SCAN_GATE

if TYPE_CHECKING:
    from scanner.engine.results import ScanResult

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_ERROR = 2
EXIT_INCOMPLETE = 3
EXIT_INTERNAL = 70


def _stderr_line(kind: str, message: str) -> None:
    """One line on stderr: a message quoting input (a file name, a symbolic name with a newline,
    a tag with a terminal escape) has its control characters shown as escapes, so it stays one
    line and cannot rewrite the terminal."""
    from reports.escaping import visible

    click.echo(f"azai: {kind}: {visible(message)}", err=True)


class _Group(click.Group):
    """Turns input errors into one line and exit 2, and anything unexpected into exit 70."""

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except InputError as exc:
            _stderr_line("error", str(exc))
            sys.exit(EXIT_ERROR)
        except BrokenPipeError:  # a listing read by `head`: nothing went wrong
            _reader_gone()
            sys.exit(EXIT_OK)
        except (click.exceptions.Exit, click.ClickException, click.Abort, SystemExit):
            raise
        except Exception as exc:
            if os.environ.get("AZAI_DEBUG"):
                raise
            _stderr_line("internal error", f"{type(exc).__name__}: {exc} (rerun with AZAI_DEBUG=1 for details)")
            sys.exit(EXIT_INTERNAL)


def _reader_gone() -> None:
    """The reader of stdout went away (``azai scan plan.json | head``): send the rest nowhere, so
    that neither the next write nor Python's flush at exit fails."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


def run() -> None:
    """The console script and ``python -m scanner``: the CLI in a process of its own, which ends
    when the command does. The heap is frozen at exit, so the interpreter's last collection
    skips it: it would walk a 10,000-resource scan's whole heap (a quarter of a second) only to
    free it as the process ends. Not done by ``main``, which tests and embedding tools call in a
    process that goes on."""
    import atexit
    import gc

    atexit.register(gc.freeze)
    main()


@click.group(cls=_Group, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="azai")
def main() -> None:
    """Audit AI workloads on Azure against the Well-Architected AI principles.

    \b
    Exit codes:
      0  nothing fails the gate (--fail-on; suppressed and baselined findings never do)
      1  findings at or above the --fail-on severity
      2  usage, input or authentication error (one line on stderr)
      3  the scan was incomplete (a live scope or linked template it could not read;
         see its coverage section) and nothing failed the gate
      70 internal error (a bug; rerun with AZAI_DEBUG=1)
    """


def render(
    fmt: str,
    result: ScanResult,
    repo_root: str | None = None,
    compact: bool = False,
    colour: bool = False,
    max_bytes: int = 0,
) -> tuple[bytes | Iterable[bytes], list[str]]:
    """One report format's bytes (the JSON report as chunks, written as they are made), and
    warnings (such as output cut to fit GitHub's limits). SARIF URIs are relative to
    ``repo_root``, else to the git top level of the scanned files; ``compact`` and ``colour``
    shape the text report; markdown is cut to ``max_bytes`` (0: no limit)."""
    if fmt == "sarif":
        from reports import sarif
        from reports.repository import repository_root, scanned_files

        root, notes = repository_root(repo_root, scanned_files(result))
        data, warnings = sarif.render(result, root)
        return data, [*notes, *warnings]
    if fmt == "json":
        from reports import json_report

        return json_report.chunks(result), []
    if fmt == "markdown":
        from reports import markdown

        return markdown.render(result, max_bytes)
    if fmt == "junit":
        from reports import junit

        return junit.render(result), []
    if fmt == "html":
        from reports import html

        return html.render(result), []
    from reports import text

    return text.render(result, compact, colour), []


def exit_code(result: ScanResult) -> int:
    """1 when the gate fails; else 3 when a live scan could not see everything; else 0."""
    if result.failing():
        return EXIT_FINDINGS
    return EXIT_OK if result.complete else EXIT_INCOMPLETE


def write_reports(
    result: ScanResult, targets: list[tuple[str, str | None]], repo_root: str | None, view: View, max_bytes: int = 0
) -> None:
    """Each report to its file or to stdout, showing what ``view`` asks for; ``--quiet`` drops
    the one for stdout; a markdown report is cut to ``max_bytes``."""
    from scanner.output import write_atomic

    shown = view.shown(result)
    for fmt, path in targets:
        if path is None and view.quiet:
            continue
        colour = path is None and view.colour(sys.stdout)
        data, warnings = render(fmt, shown, repo_root, view.compact, colour, max_bytes)
        for warning in warnings:
            _stderr_line("warning", warning)
        if path:
            write_atomic(path, data)
        else:
            try:
                for chunk in [data] if isinstance(data, bytes) else data:
                    sys.stdout.buffer.write(chunk)
                sys.stdout.flush()
            except BrokenPipeError:  # the reader stopped early; the scan's verdict still stands
                _reader_gone()


@contextlib.contextmanager
def _environment(variables: dict[str, str]) -> Iterator[None]:
    """Point DefaultAzureCredential and TLS trust at the demo's emulator while it runs, and put
    the caller's environment back afterwards."""
    saved = {key: os.environ.get(key) for key in variables}
    os.environ.update(variables)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextlib.contextmanager
def _collecting_garbage(live: bool) -> Iterator[None]:
    """A scan builds millions of small dicts, lists and strings that nearly all live to its end.
    Reading files makes no reference cycles (a test holds it to that), so while such a scan runs
    the collector is off: it would only walk a growing heap to free nothing, a fifth of a
    10,000-resource plan's SARIF run. The SDK clients of a live scan do leave cycles (azure-core's
    settings and serializers, about 20 KB per subscription), so a live scan keeps the collector,
    with the objects loaded before it frozen out and collections 30x rarer, as before. Either
    way the settings are put back afterwards, so a process that scans again (a test runner, an
    embedding tool) keeps its own."""
    import gc

    enabled, thresholds = gc.isenabled(), gc.get_threshold()
    if live:
        gc.freeze()
        gc.set_threshold(20_000, 20, 20)
    else:
        gc.disable()
    try:
        yield
    finally:
        if live:
            gc.set_threshold(*thresholds)
            gc.unfreeze()
        elif enabled:
            gc.enable()


@main.command()
@click.argument("paths", nargs=-1, required=False, metavar="[PATH]...")
@report_options
@policy_options(SCAN_GATE, "high and critical findings fail")
@live_options
@view_options
@click.option(
    "--skip-unknown",
    is_flag=True,
    help="Skip files that are not a plan, template or what-if result instead of failing; when no file is "
    "one, write no report to stdout, say nothing and exit 0.",
)
def scan(
    paths: tuple[str, ...],
    formats: tuple[str, ...],
    outputs: tuple[str, ...],
    repo_root: str | None,
    max_bytes: int,
    skip_unknown: bool,
    view: View,
    **shared: Any,
) -> None:
    """Scan IaC files and live subscriptions.

    PATH is a Terraform plan JSON, an ARM template (compiled Bicep included), a .bicep file
    (compiled with the Bicep CLI on PATH), an ARM what-if result, a directory of them (its
    *.json files; others are skipped; none at all is an error unless --skip-unknown), or - for
    stdin. The format is detected from the content. Findings point
    at the .tf or .bicep line that declares the resource when that source is found: beside the
    plan or compiled template, or under --source-root. --subscription, --management-group and --all-subscriptions scan
    deployed resources through the Azure SDK with DefaultAzureCredential (az login, managed
    identity, workload identity, service-principal variables); they combine with PATHs.
    """
    from scanner.pipeline.scan import ScanRequest, run_scan

    request = ScanRequest(paths=paths, skip_unknown=skip_unknown, **request_fields(shared))
    request.progress = request.progress and not view.quiet
    if not paths and not request.live.requested:
        raise click.UsageError(
            "give a PATH to scan, or a live scope (--subscription, --management-group, --all-subscriptions)"
        )
    targets = pair_outputs(formats, outputs)
    with _collecting_garbage(request.live.requested):
        result = run_scan(request)
        if not result.inputs:
            # Only --skip-unknown lets a scan of nothing get here: a pre-commit hook handed a
            # package.json. It asked for exactly this, so nothing is said on stdout or stderr;
            # report files are still written, for a pipeline step that uploads them.
            targets = [(fmt, path) for fmt, path in targets if path is not None]
        write_reports(result, targets, repo_root, view, max_bytes)
    sys.exit(exit_code(result))


@main.command()
@click.argument("snapshots", nargs=-1, metavar="[BASE [CURRENT]]")
@click.option(
    "--iac",
    "iac_paths",
    multiple=True,
    metavar="PATH",
    help="Plan, template or what-if to compare with live. Repeatable.",
)
@report_options
@policy_options(DRIFT_GATE, "any drift fails")
@live_options
@expected_writer_option
@view_options
def drift(
    snapshots: tuple[str, ...],
    iac_paths: tuple[str, ...],
    formats: tuple[str, ...],
    outputs: tuple[str, ...],
    repo_root: str | None,
    max_bytes: int,
    view: View,
    **shared: Any,
) -> None:
    """Audit drift: between two scans, between IaC and live, or in a plan's resource_drift.

    \b
      azai drift BASE CURRENT                      two snapshots (--save-inventory files)
      azai drift BASE --subscription ID            a snapshot against live
      azai drift --iac plan.json --subscription ID IaC against live
      azai drift --iac plan.json                   Terraform's own resource_drift

    Against live, each drift says who made it, when and through what, from Resource Graph's
    change records (14 days); --expected-writer names the pipeline's own identities.

    --select and --ignore choose the drift rules (AZAI-901 to 903) and, between two scans, the
    rules whose findings are compared; --rule-option and the config file's options apply to both.

    \b
    Exit codes, in the spirit of terraform plan -detailed-exitcode:
      0  no drift (nothing at or above --fail-on that is not suppressed or baselined)
      1  drift found
      2  usage, input or authentication error
      3  a live read was incomplete and no drift was found in what could be read
    """
    from scanner.pipeline.drift import DriftRequest, run_drift

    if len(snapshots) > 2:
        raise click.UsageError("give at most BASE and CURRENT")
    fields = request_fields(shared)
    fields["progress"] = fields["progress"] and not view.quiet
    if len(snapshots) == 2 and fields["live"].requested:
        raise click.UsageError("give CURRENT or a live scope, not both")
    targets = pair_outputs(formats, outputs)
    request = DriftRequest(
        base=snapshots[0] if snapshots and not iac_paths else None,
        current=snapshots[1] if len(snapshots) == 2 else (snapshots[0] if snapshots and iac_paths else None),
        iac=iac_paths,
        **fields,
    )
    result = run_drift(request)
    write_reports(result, targets, repo_root, view, max_bytes)
    sys.exit(exit_code(result))


@main.command()
@click.option("--format", "output_format", type=click.Choice(["text", "json"]), default="text", show_default=True)
def version(output_format: str) -> None:
    """Print the version: as 'azai --version' does, or as {"version": "..."} for scripts."""
    if output_format == "json":
        import json

        click.echo(json.dumps({"version": __version__}))
    else:
        click.echo(f"azai, version {__version__}")


@main.group()
def prices() -> None:
    """The price tables that waste estimates use."""


@prices.command("refresh")
@click.option(
    "--region", "regions", multiple=True, metavar="REGION", help="Region to fetch (repeatable) [default: eastus]."
)
@click.option(
    "--output", "-o", metavar="FILE", help="Table to write [default: the user cache, which scans read first]."
)
@click.option("--endpoint", default="https://prices.azure.com", show_default=True, help="Retail Prices API base URL.")
def prices_refresh(regions: tuple[str, ...], output: str | None, endpoint: str) -> None:
    """Fetch current pay-as-you-go prices from the public Azure Retail Prices API: Linux VM sizes
    and Container Apps serverless GPUs.

    Spot, Low Priority, Windows and Dev/Test prices are excluded. The regions fetched replace
    the bundled prices there. The table is written atomically; if any region fails, the old
    table is kept and the command exits 2.
    """
    from pathlib import Path

    from scanner.cli.prices import refresh
    from scanner.model.pricing import PRICE_TABLE
    from scanner.model.tables import cache_path

    target = Path(output) if output else cache_path(PRICE_TABLE)
    count, missing = refresh(regions or ("eastus",), target, endpoint)
    click.echo(f"wrote {count} prices to {target}")
    if missing:
        click.echo(f"no price for {len(missing)} item/region pair(s): their costs stay unknown", err=True)


@main.group()
def models() -> None:
    """The model retirement table that AZAI-504 reads."""


@models.command("refresh")
@click.option("--subscription", required=True, metavar="ID", help="Subscription whose model list is read.")
@click.option("--location", "region", required=True, metavar="REGION", help="Region whose models are read.")
@click.option(
    "--output", "-o", metavar="FILE", help="Table to write [default: the user cache, which scans read first]."
)
@click.option("--arm-endpoint", metavar="URL", help="ARM endpoint (an emulator, a sovereign cloud).")
def models_refresh(subscription: str, region: str, output: str | None, arm_endpoint: str | None) -> None:
    """Read model retirement dates from the Models - List API of one subscription and region.

    Read-only, through the same pipeline as a live scan. Rows the API gives a date for replace
    the table's; the table's other rows are kept. Written atomically: on any failure the old
    table is kept and the command exits 2 with one line.
    """
    from pathlib import Path

    from scanner.cli.models import refresh
    from scanner.model.retirements import RETIREMENT_TABLE
    from scanner.model.tables import cache_path
    from scanner.sources.live.sdk import require_live_sdk

    require_live_sdk("azai models refresh")
    target = Path(output) if output else cache_path(RETIREMENT_TABLE)
    count = refresh(subscription, region, target, arm_endpoint)
    click.echo(f"wrote {count} model retirement rows to {target}")


# AZAI-209 compares tokens with provisioned throughput at the PTU price a team pays. At the
# bundled hourly list price it never fires (docs/serverless.md), and no reservation price is published
# to bundle, so the demo states an example reservation rate, which its finding names as such.
DEMO_RULE_OPTIONS = ("AZAI-209:ptu_usd_per_hour=0.30",)


@main.command()
@report_options
@view_options
@click.option("--save-inventory", metavar="FILE", help="Also write the collected inventory as a snapshot.")
@click.option(
    "--estate",
    "variant",
    type=click.Choice(["demo", "drifted"]),
    default="demo",
    show_default=True,
    help="'drifted' is the demo estate after portal edits.",
)
@click.option("--drift-from", metavar="SNAPSHOT", help="Report drift from this snapshot instead of scanning.")
def demo(
    formats: tuple[str, ...],
    outputs: tuple[str, ...],
    repo_root: str | None,
    max_bytes: int,
    view: View,
    save_inventory: str | None,
    variant: str,
    drift_from: str | None,
) -> None:
    """Scan the bundled demo estate live, through the real Azure SDK, against a local emulator.

    Starts the HTTPS ARM emulator on 127.0.0.1 with the demo estate, points an unchanged
    DefaultAzureCredential at its managed-identity endpoint, scans every subscription, shows
    the report and stops the emulator. Nothing leaves this machine.
    """
    from scanner.sources.live.sdk import require_live_sdk

    require_live_sdk("azai demo")
    from scanner.emulator.estate import Estate, demo_estate_path
    from scanner.emulator.server import Emulator
    from scanner.pipeline.scan import ScanRequest, run_scan
    from scanner.sources.live.scope import LiveScope

    targets = pair_outputs(formats, outputs)
    with Emulator(Estate.load(demo_estate_path(variant))) as server, _environment(server.environment()):
        click.echo(f"azai demo: emulator at {server.endpoint}, scanning the {variant} estate live", err=True)
        if drift_from:
            from scanner.pipeline.drift import DriftRequest, run_drift

            result = run_drift(
                DriftRequest(base=drift_from, live=LiveScope(all_subscriptions=True), arm_endpoint=server.endpoint)
            )
            write_reports(result, targets, repo_root, view, max_bytes)
            sys.exit(exit_code(result))
        result = run_scan(
            ScanRequest(
                paths=(),
                live=LiveScope(all_subscriptions=True),
                arm_endpoint=server.endpoint,
                fail_on="none",
                save_inventory=save_inventory,
                progress=progress_wanted() and not view.quiet,
                rule_options=DEMO_RULE_OPTIONS,
            )
        )
        writes = server.writes()
    write_reports(result, targets, repo_root, view, max_bytes)
    click.echo(f"azai demo: {result.live_requests} read requests, {len(writes)} writes", err=True)
    sys.exit(EXIT_OK if result.complete and not writes else EXIT_INCOMPLETE)


@main.command()
@click.option("--estate", "estate_file", metavar="FILE", help="Estate JSON to serve [default: the demo estate].")
def emulator(estate_file: str | None) -> None:
    """Serve an estate on 127.0.0.1 over HTTPS until interrupted, for --arm-endpoint.

    Prints the endpoint and the environment variables that make DefaultAzureCredential and TLS
    trust the emulator.
    """
    import time
    from pathlib import Path

    from scanner.sources.live.sdk import require_live_sdk

    require_live_sdk("azai emulator")
    from scanner.emulator.estate import Estate, demo_estate_path
    from scanner.emulator.server import Emulator

    path = Path(estate_file) if estate_file else demo_estate_path()
    try:
        estate = Estate.load(path)
    except (OSError, ValueError, KeyError) as exc:
        raise InputError(f"{path}: not an estate file ({exc})") from None
    with Emulator(estate) as server:
        for key, value in server.environment().items():
            click.echo(f"export {key}={value}")
        subscription = estate.subscription_ids()[0] if estate.subscriptions else "SUBSCRIPTION"
        click.echo(f"# then: azai scan --subscription {subscription} --arm-endpoint {server.endpoint}", nl=True)
        sys.stdout.flush()
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


@main.command()
@click.argument("rule_id", required=False, metavar="[RULE]")
@click.option(
    "--pillar", metavar="PILLAR", help="Only rules of this Well-Architected pillar, by name or first word, e.g. cost."
)
@click.option(
    "--format", "output_format", type=click.Choice(["text", "markdown", "json"]), default="text", show_default=True
)
def rules(rule_id: str | None, pillar: str | None, output_format: str) -> None:
    """List the rules, or print one rule's documentation (by id or slug)."""
    from scanner.engine.registry import find_check, load_checks
    from scanner.engine.ruledocs import catalog_markdown, compliance_json, rule_markdown

    checks = load_checks()
    if pillar:
        checks = [c for c in checks if c.pillar.named(pillar)]
        if not checks:
            raise InputError(
                f"no rules in pillar {pillar!r} (pillars: Security, Cost Optimization, Reliability, "
                "Operational Excellence, Performance Efficiency)"
            )
    if output_format == "markdown" and not rule_id:
        click.echo(catalog_markdown(checks, link=False), nl=False)
        return
    if output_format == "json" and not rule_id:
        click.echo(compliance_json(checks), nl=False)
        return
    if rule_id:
        check = find_check(checks, rule_id)
        if check is None:
            raise InputError(f"no rule {rule_id!r} (see 'azai rules')")
        click.echo(rule_markdown(check), nl=False)
        return
    width = max(len(c.slug) for c in checks)
    for check in checks:
        click.echo(f"{check.id}  {check.slug:<{width}}  {check.severity.label:<8}  {check.pillar:<24}  {check.title}")
