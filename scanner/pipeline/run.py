"""The steps every run shares, scan or drift: configuration, rule selection and options before
the run; severities, suppressions, baselines and the gate after it.

Both commands go through ``prepare`` and ``conclude`` so that a setting means the same thing in
each (before they were two copies, and drift ignored rule options).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from scanner.engine.checkapi import Check
from scanner.engine.registry import every_live_read, load_checks
from scanner.engine.results import Finding, ScanResult, sort_findings, sort_undetermined
from scanner.errors import InputError
from scanner.model.needs import LiveNeeds
from scanner.model.pricing import PriceBook
from scanner.pipeline.unread import read_types
from scanner.policy.baselines import BaselineEntry, compare_with_baseline, read_baseline, write_baseline
from scanner.policy.config import Config, load_config, select_checks
from scanner.policy.options import parse_fail_on, parse_rule_options
from scanner.policy.suppressions import apply_suppressions, override_severity
from scanner.sources.arm.parameters import ParameterFile, TemplateOptions, read_parameters
from scanner.sources.live.scope import LiveScope

if TYPE_CHECKING:  # a scan of files never imports the live reader
    from scanner.sources.live.clients import ClientFactory
    from scanner.sources.live.collect import LiveInventory

RUN_DATE_VARIABLE = "AZAI_RUN_DATE"


def run_date() -> dt.date:
    """The date a run judges by default (rules such as AZAI-504 compare with it, suppressions
    expire by it): today, or ``AZAI_RUN_DATE`` (YYYY-MM-DD) when set, so that a report can be
    reproduced as of a given day and tests do not change outcome as the calendar moves."""
    pinned = os.environ.get(RUN_DATE_VARIABLE)
    if not pinned:
        return dt.date.today()
    try:
        return dt.date.fromisoformat(pinned)
    except ValueError:
        raise InputError(f"{RUN_DATE_VARIABLE}={pinned!r} is not a date (YYYY-MM-DD)") from None


@dataclass(kw_only=True)
class RunRequest:
    """What a scan and a drift audit are both asked: the CLI fills it from options and config."""

    select: Sequence[str] = ()
    ignore: Sequence[str] = ()
    rule_options: Sequence[str] = ()
    fail_on: str | None = None
    config_file: str | None = None
    baseline: str | None = None
    write_baseline: str | None = None
    parameters_file: str | None = None
    source_root: str | None = None  # the .tf root module or .bicep folder, when not beside the input
    environ: Mapping[str, str] = field(default_factory=lambda: os.environ)  # azd placeholders
    live: LiveScope = field(default_factory=LiveScope)
    cloud: str = "AzureCloud"
    arm_endpoint: str | None = None
    timeout: float | None = None  # seconds for the live reads; the rest becomes a coverage gap
    save_inventory: str | None = None
    progress: bool = False
    prices_file: str | None = None
    owner_tag: str | None = None
    today: dt.date = field(default_factory=run_date)  # rules and suppressions judge dates as of it


@dataclass
class RunPolicy:
    """The configuration resolved once for a run."""

    config: Config
    checks: list[Check]  # every selected rule, drift rules included
    options: dict[str, dict[str, Any]]
    prices: PriceBook
    baseline: dict[str, BaselineEntry] | None  # read first, so a bad file fails before slow work
    every_read: LiveNeeds  # what a snapshot or a drift audit reads: what any installed rule does
    read_types: frozenset[str]  # the ARM types any installed rule reads (`unread.read_types`)

    @property
    def rule_checks(self) -> list[Check]:
        """The rules that judge resources (drift rules judge pairs, in ``azai drift``)."""
        return [c for c in self.checks if "drift" not in c.sources]

    @property
    def drift_checks(self) -> list[Check]:
        return [c for c in self.checks if "drift" in c.sources]


def prepare(request: RunRequest, default_gate: str) -> tuple[RunPolicy, ScanResult]:
    """Read the configuration, select rules and merge their options (the command line wins)."""
    every_check = load_checks()
    config = load_config(request.config_file, every_check)
    selected = select_checks(every_check, [*config.select, *request.select], [*config.ignore, *request.ignore])
    options = {rule: dict(values) for rule, values in config.options.items()}
    for rule, values in parse_rule_options(request.rule_options, every_check).items():
        options.setdefault(rule, {}).update(values)
    gate = parse_fail_on(request.fail_on or config.fail_on or default_gate)
    baseline = read_baseline(request.baseline) if request.baseline else None
    prices = PriceBook.load(request.prices_file)
    policy = RunPolicy(
        config, selected, options, prices, baseline, every_live_read(every_check), read_types(every_check)
    )
    result = ScanResult(fail_on=gate, owner_tag=request.owner_tag or config.owner_tag or "owner")
    return policy, result


def conclude(result: ScanResult, findings: list[Finding], policy: RunPolicy, request: RunRequest) -> ScanResult:
    """Apply severity overrides, suppressions and the baseline, then record a new baseline."""
    findings = override_severity(findings, policy.config.severities)
    findings, expired = apply_suppressions(findings, policy.config.suppressions, request.today)
    result.warnings.extend(expired)
    if policy.baseline is not None:
        findings, result.absent = compare_with_baseline(findings, policy.baseline)
        result.baseline_used = True
    result.findings = sort_findings(findings)
    result.undetermined = sort_undetermined(result.undetermined)
    if request.write_baseline:
        write_baseline(request.write_baseline, result.findings)
    return result


def template_options(request: RunRequest) -> TemplateOptions:
    """How templates are evaluated: the parameters file (azd placeholders resolved from the
    environment) and the cloud that ``environment()`` answers for."""
    parameters = (
        read_parameters(request.parameters_file, request.environ) if request.parameters_file else ParameterFile()
    )
    return TemplateOptions(parameters, request.cloud)


@contextlib.contextmanager
def live_client_factory(request: RunRequest) -> Iterator[ClientFactory]:
    """The client factory of one run's live reads, closed when the run is done with it: a scan
    closes it after the collection, a drift run after it has read the change records too."""
    from scanner.sources.live.clients import ClientFactory

    factory = ClientFactory(request.cloud, request.arm_endpoint, timeout=request.timeout)
    try:
        yield factory
    finally:
        factory.close()


def collect_live_inventory(request: RunRequest, needs: LiveNeeds) -> LiveInventory:
    """One live collection of what ``needs`` asks for."""
    from scanner.sources.live.collect import Progress, collect_live

    with live_client_factory(request) as factory:
        return collect_live(request.live, factory, Progress(request.progress), needs=needs)
