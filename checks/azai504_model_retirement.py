"""AZAI-504 model-retirement."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from checks._common import WAF_AI, rule_page, same_text
from scanner.engine.checkapi import CheckContext, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import azure_types as T
from scanner.model.needs import LiveRead
from scanner.model.resources import Resource
from scanner.model.unknown import Unknown, UnknownValueError, known

NAME = "properties.model.name"
VERSION = "properties.model.version"
UPGRADE = "properties.versionUpgradeOption"
RETIREMENTS_DOC = "https://learn.microsoft.com/azure/ai-foundry/openai/concepts/model-retirements"
UPGRADE_DOC = "https://learn.microsoft.com/azure/ai-foundry/openai/how-to/working-with-models#model-deployment-upgrade-configuration"


@rule(
    id="AZAI-504",
    slug="model-retirement",
    title="Model deployment runs a model version that is retired or retires soon",
    pillar=Pillar.OPERATIONS,
    severity=Severity.HIGH,
    resource_types=(T.MODEL_DEPLOYMENT,),
    reads=(LiveRead.ACCOUNT_MODELS,),
    options={"warn_days": 90},
    principle=Principle(
        "Manage the lifecycle of the models you deploy: know when each version retires and move "
        "to its replacement, tested, before it does.",
        WAF_AI + "mlops-genaiops",
    ),
    remediation=Remediation(
        terraform="Set model.version to a current version (and test it), or let the deployment upgrade "
        'with version_upgrade_option = "OnceCurrentVersionExpired".',
        bicep="Set properties.model.version to a current version (and test it), or set "
        "versionUpgradeOption: 'OnceCurrentVersionExpired'.",
        cli="az cognitiveservices account deployment create -g RG -n ACCOUNT --deployment-name NAME "
        "--model-name MODEL --model-version CURRENT --model-format OpenAI ...",
        terraform_code="""\
            resource "azurerm_cognitive_deployment" "chat" {
              # ...
              model {
                format  = "OpenAI"
                name    = "gpt-4.1"
                version = "2025-04-14"
              }
              version_upgrade_option = "OnceCurrentVersionExpired"
            }
        """,
        bicep_code="""\
            resource chat 'Microsoft.CognitiveServices/accounts/deployments@2025-06-01' = {
              parent: account
              name: 'chat'
              properties: {
                model: { format: 'OpenAI', name: 'gpt-4.1', version: '2025-04-14' }
                versionUpgradeOption: 'OnceCurrentVersionExpired'
              }
            }
        """,
        cli_code="""\
            az cognitiveservices account deployment create --resource-group RG --name ACCOUNT \\
              --deployment-name chat --model-format OpenAI --model-name gpt-4.1 \\
              --model-version 2025-04-14 --sku-name GlobalStandard --sku-capacity 10
        """,
        guide=RETIREMENTS_DOC,
    ),
    help_uri=rule_page("AZAI-504"),
)
def model_retirement(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """A model deployment whose model version is past its retirement date, or retires within
    `warn_days` while nothing will move it off that version.

    ## What fails

    - A deployment whose model version's retirement date is on or before the run's date
      (high): "Azure OpenAI deployments of a retired model always return error responses"
      ([model retirements](https://learn.microsoft.com/azure/ai-foundry/openai/concepts/model-retirements)).
      In a live scan, also a model the account's models list reports as `Deprecated`, which
      the API defines as retired ("inference calls ... return 410 errors").
    - A date that has passed but was only a plan is medium, not high: a table row whose date
      was still ahead on its as-of date, or a live model whose `lifecycleStatus` is not
      `Deprecated`. Microsoft moves planned dates, so the finding asks to confirm with a live
      scan or `azai models refresh` rather than claiming calls fail.
    - A deployment whose version retires within `warn_days` and whose `versionUpgradeOption` is
      `NoAutoUpgrade` (high, on `versionUpgradeOption`): "Once the retirement date is reached
      the model deployment stops working"
      ([upgrade options](https://learn.microsoft.com/azure/ai-foundry/openai/how-to/working-with-models#model-deployment-upgrade-configuration)).
    - A deployment whose version retires within `warn_days` and that will be upgraded
      (`OnceNewDefaultVersionAvailable`, `OnceCurrentVersionExpired`, or no option, which the
      same page says "is equivalent to `OnceCurrentVersionExpired`") (medium): it keeps
      answering, but on a version nobody tested, and the declared version no longer matches.

    Each finding names the date, the table row's source and its as-of date (or the live models
    list it came from).

    ## What passes

    Deployments whose version retires after `warn_days`, whatever the upgrade option (pinning a
    version with `NoAutoUpgrade` is a legitimate choice for reproducibility until retirement
    nears), and versions with no known retirement date: a model or version the table does not
    list (a non-OpenAI model, a new version, a "no earlier than" date) is not a finding, since a
    missing date is not evidence of retirement. Update the table with `azai models refresh`.

    ## Undetermined when

    The model name or version is not known before deploy, or no `model.version` is declared
    (the version Azure deploys is then not in the template), and some version the table lists
    for the model (for an unknown name, some model the table lists with that version) would
    fail; otherwise the deployment passes whatever runs. The table's date depends on the
    deployment type (`sku.name`, e.g. `gpt-4o` `2024-08-06` on `Standard` or not) and that is
    not known; the upgrade option decides the outcome and is not known; or, in a live scan,
    the account's models list could not be read.

    ## Options

    `warn_days` (default 90): how far ahead a retirement counts as near. Microsoft gives "at
    least 60 days notice before model retirement for GA models"; 90 days starts the finding
    before that notice, leaving time to evaluate the replacement version and roll it out
    through the release pipeline before the date.

    ## Why

    Retirement dates are published in advance and enforced region by region; a deployment left
    on a retired version fails every call. IaC pins the version in code, so nothing warns the
    team until production errors. Dates come from the bundled table transcribed from Microsoft
    Learn (as of the date each finding states) or, live, from the account's models list; the
    run's date is the scan's, so reports are reproducible when it is pinned.
    """
    model, version = resource.get(NAME), resource.get(VERSION)
    if isinstance(model, str) and isinstance(version, str):
        yield from _judge(resource, ctx, model, version)
    elif isinstance(model, (str, Unknown)) and (version is None or isinstance(version, (str, Unknown))):
        _undecided(resource, ctx, model, version)


def _undecided(resource: Resource, ctx: CheckContext, model: Any, version: Any) -> None:
    """A deployment whose model name or version is not known before deploy, or that names no
    version (the one Azure deploys is not in the template): undetermined only when some model
    version it may run, among those the table lists, would fail. Any other version, and any
    model the table does not list, passes, so one the table has no failing row for passes."""
    why = model if isinstance(model, Unknown) else version
    if not isinstance(why, Unknown):  # a model named, and no version
        why = Unknown("the deployment names no model version: which one runs is decided at deploy", path=VERSION)
    for row in ctx.retirements.rows:
        if isinstance(model, str) and row.model.lower() != model.lower():
            continue
        if isinstance(version, str) and row.version and row.version.lower() != version.lower():
            continue
        try:
            fails = any(True for _ in _judge(resource, ctx, row.model, row.version))
        except UnknownValueError:
            fails = True
        if fails:
            raise UnknownValueError(why)


def _judge(resource: Resource, ctx: CheckContext, model: str, version: str) -> Iterator[Violation]:
    """The verdict on a deployment of ``model`` ``version``."""
    warn = dt.timedelta(days=int(ctx.options.get("warn_days", 90)))
    retirement = _retirement(resource, ctx, model, version)
    if retirement is None:
        return
    retires, basis = retirement.date, retirement.basis
    label = f"{model} {version}"
    if retires is not None and retires <= ctx.today and retirement.maybe_moved:
        yield Violation(
            f"Deployment '{resource.name}' runs {label}, scheduled to retire on {retires.isoformat()} ({basis}), "
            "a date that has passed; Microsoft moves these dates, so confirm with the account's models list "
            "(a live scan) or `azai models refresh`",
            VERSION,
            version,
            "a model version that is not retired",
            severity=Severity.MEDIUM,
        )
        return
    if retirement.retired or (retires is not None and retires <= ctx.today):
        when = f" on {retires.isoformat()}" if retires is not None else ""
        yield Violation(
            f"Deployment '{resource.name}' runs {label}, retired{when} ({basis}): calls to a retired "
            "model version return errors",
            VERSION,
            version,
            "a model version that is not retired",
        )
        return
    assert retires is not None
    if retires - ctx.today <= warn:
        yield _retiring_soon(resource, label, version, retires, basis, warn)


@dataclass(frozen=True)
class _Retirement:
    """When a deployment's model version retires, and on whose word."""

    date: dt.date | None  # None when the models list says retired and gives no date
    basis: str  # where the date comes from, as a finding names it
    retired: bool  # the models list's own status says retired (``Deprecated``)
    # The date may have moved: a table date that was a plan, or a live status that is not retired.
    maybe_moved: bool


def _retirement(resource: Resource, ctx: CheckContext, model: str, version: str) -> _Retirement | None:
    """The retirement the account's models list (a live scan) gives, else the table's; None when
    neither knows one, which is no evidence of retirement."""
    listed = resource.body.get(LiveRead.ACCOUNT_MODELS.value)
    retires, basis, status = _from_models_list(known(listed)) if listed is not None else (None, "", None)
    retired_status = status == "deprecated"
    # A date that has passed means retired only where nothing says otherwise: the models list's
    # own status is the platform's word, and a table date that was still ahead when the table
    # was written was a plan, which Microsoft moves (it is then a warning to refresh).
    planned = False
    if retires is None and not retired_status:
        retires, basis, planned = _from_table(resource, ctx, model, version)
    if retires is None and not retired_status:
        return None
    maybe_moved = (status is not None and not retired_status) or planned
    return _Retirement(retires, basis, retired_status, maybe_moved)


def _retiring_soon(
    resource: Resource, label: str, version: str, retires: dt.date, basis: str, warn: dt.timedelta
) -> Violation:
    """A version retiring within ``warn``: high when ``NoAutoUpgrade`` makes the deployment stop
    working on the date, medium when Azure will move it to another version nobody tested."""
    option = known(resource.get(UPGRADE))
    if same_text(option, "NoAutoUpgrade"):
        return Violation(
            f"Deployment '{resource.name}' runs {label}, which retires on {retires.isoformat()} ({basis}), "
            "and versionUpgradeOption NoAutoUpgrade makes it stop working then",
            UPGRADE,
            option,
            "OnceCurrentVersionExpired, or a version that does not retire soon",
        )
    return Violation(
        f"Deployment '{resource.name}' runs {label}, which retires on {retires.isoformat()} ({basis}); "
        "Azure will then move it to another version, untested",
        VERSION,
        version,
        f"a version that does not retire within {warn.days} days",
        severity=Severity.MEDIUM,
    )


def _from_models_list(entries: Any) -> tuple[dt.date | None, str, str | None]:
    """The retirement date and status the account's models list gives for the deployment's
    model: ``deprecation.inference`` (the API's date the model stops serving inference, its
    ``Deprecated`` state, which the API defines as retired), and its ``lifecycleStatus``,
    lower-cased (None when the list gives none). Nothing when the list does not have the model."""
    if not isinstance(entries, list):
        return None, "", None
    for entry in entries:
        if not isinstance(entry, dict):
            continue
        status = entry.get("lifecycleStatus")
        deprecation = entry.get("deprecation") or {}
        text = deprecation.get("inference") if isinstance(deprecation, dict) else None
        date = _parse(text)
        lowered = status.lower() if isinstance(status, str) else None
        if date is not None or lowered == "deprecated":
            return date, "the account's models list", lowered
    return None, "", None


def _from_table(resource: Resource, ctx: CheckContext, model: str, version: str) -> tuple[dt.date | None, str, bool]:
    """The table's date for this model version on this deployment type, and whether that date
    was still ahead on the row's as-of date (a plan, not a fact); an unknown SKU leaves it
    undetermined only where the table's dates differ by type."""
    table = ctx.retirements
    sku: Any = None
    if table.depends_on_sku(model, version):
        sku = known(resource.get("sku.name"))
        if not isinstance(sku, str):
            sku = ""
    row = table.lookup(model, version, sku)
    if row is None:
        return None, "", False
    as_of = _parse(row.as_of)
    planned = as_of is None or row.retirement > as_of
    return row.retirement, f"{table.origin}, source {row.source}, as of {row.as_of}", planned


def _parse(text: Any) -> dt.date | None:
    if not isinstance(text, str) or len(text) < 10:
        return None
    try:
        return dt.date.fromisoformat(text[:10])
    except ValueError:
        return None
