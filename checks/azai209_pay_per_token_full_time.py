"""AZAI-209 pay-per-token-full-time."""

from __future__ import annotations

from collections.abc import Iterator

from checks._common import WAF_AI, measured_deployment, rule_page
from scanner.engine.checkapi import CheckContext, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import azure_types as T
from scanner.model.needs import LiveRead
from scanner.model.pricing import HOURS_PER_MONTH, PTU, Cost, Price
from scanner.model.resources import Resource
from scanner.model.unknown import Unknown, UnknownValueError, known
from scanner.model.utilization import LOOKBACK_HOURS, PROVISIONED_FOR, DeploymentUsage, is_pay_per_token

PTU_GUIDE = "https://learn.microsoft.com/azure/foundry/openai/how-to/provisioned-throughput-sizing"


@rule(
    id="AZAI-209",
    slug="pay-per-token-full-time",
    title="A pay-per-token model deployment runs at a steady volume provisioned throughput would carry for less",
    pillar=Pillar.COST,
    severity=Severity.LOW,
    resource_types=(T.MODEL_DEPLOYMENT,),
    reads=(LiveRead.METRICS, T.COGNITIVE_ACCOUNT),  # tokens per hour; the account's region prices them
    principle=Principle(
        "Serverless, pay-per-use billing suits variable load; steady, around-the-clock volume is cheaper on "
        "capacity bought for it.",
        WAF_AI + "design-principles#cost-optimization",
    ),
    remediation=Remediation(
        terraform=(
            "Move the traffic to an azurerm_cognitive_deployment with a provisioned sku sized to the peak, "
            "covered by a provisioned throughput reservation."
        ),
        bicep="A deployment with sku.name GlobalProvisionedManaged (sized to the peak) and a PTU reservation.",
        cli=(
            "az cognitiveservices account deployment create -g RG -n ACCOUNT --deployment-name NAME "
            "--sku-name GlobalProvisionedManaged --sku-capacity PTUS ..."
        ),
        terraform_code="""\
            resource "azurerm_cognitive_deployment" "chat_ptu" {
              # ...
              sku {
                name     = "GlobalProvisionedManaged"
                capacity = 15 # sized to the measured peak; buy a reservation for it
              }
            }
        """,
        bicep_code="""\
            resource chatPtu 'Microsoft.CognitiveServices/accounts/deployments@2025-06-01' = {
              parent: account
              name: 'chat-ptu'
              sku: {
                name: 'GlobalProvisionedManaged'
                capacity: 15 // sized to the measured peak; buy a reservation for it
              }
              // ...
            }
        """,
        cli_code="""\
            az cognitiveservices account deployment create --resource-group RG --name ACCOUNT \\
              --deployment-name chat-ptu --model-name gpt-4o --model-version 2024-11-20 --model-format OpenAI \\
              --sku-name GlobalProvisionedManaged --sku-capacity 15
        """,
        guide=PTU_GUIDE,
    ),
    help_uri=rule_page("AZAI-209"),
    options={"min_quiet_share": 0.5, "ptu_usd_per_hour": 0.0},
    sources=("live",),
)
def pay_per_token_full_time(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """A Standard, Global Standard or Data Zone Standard model deployment whose token volume
    over 7 days is steady around the clock and costs more a month than provisioned throughput
    sized to its busiest hour.

    ## What fails

    A pay-per-token deployment (`sku.name` `Standard`, `GlobalStandard` or `DataZoneStandard`)
    whose input tokens arrived in at least 95% of the last 168 hours, whose quietest hour with
    tokens carried at least `min_quiet_share` of the average hour with tokens (a short
    maintenance window does not make steady traffic bursty), and whose monthly token spend
    (7 days of input and output tokens x 730/168 x the model's price per million tokens for
    that deployment type) exceeds the monthly price of the provisioned deployment that would
    carry its busiest hour: (peak input tokens per minute + output weight x peak output tokens
    per minute) / the model's input tokens per minute per PTU, rounded up to the deployment
    type's step and never below its minimum, x 730 hours x the price of one PTU-hour of the
    matching provisioned type (`GlobalProvisionedManaged`, `DataZoneProvisionedManaged`,
    `ProvisionedManaged`).

    Tokens are Azure Monitor's `ProcessedPromptTokens` and `GeneratedTokens` (or, on accounts
    that publish the Foundry names, `InputTokens` and `OutputTokens`), hourly totals split by
    `ModelDeploymentName`, read in the same request per account as AZAI-206's metrics.

    ## What passes

    Bursty or part-time deployments (tokens in fewer than 95% of the hours, or a quiet hour
    below `min_quiet_share` of the average), steady ones whose token spend stays under the
    provisioned price, and every provisioned deployment (AZAI-206 judges those). A published
    token metric without a series for the deployment means it took no tokens.

    At the bundled hourly (no reservation) PTU prices, provisioned throughput costs more than
    pay-per-token for every model in the table even at full use: one fully used PTU-hour
    carries about $0.17 to $0.38 of tokens at Global Standard prices against $1.00 an hour
    (docs/serverless.md shows the arithmetic). So with the defaults this rule passes every
    deployment; it fires when `ptu_usd_per_hour` is set to the effective hourly rate of a
    reservation the organisation holds or is offered.

    ## Undetermined when

    The account's metrics could not be read, or no token metric of it was measured (it
    publishes none, or Azure Monitor answered each with an error code: a coverage gap says
    which), or a steady deployment's model, deployment type or region has no bundled token
    price or PTU capacity. Prices and capacities are by model name: every version of a model is
    priced alike (the table's rows name the versions their meters cover).

    ## Options

    - `min_quiet_share` (default 0.5): how busy the quietest hour with tokens must be, against
      the average hour with tokens, for the volume to count as steady. A PTU deployment is bought for its peak, so
      volume that falls away at night pays for idle PTUs.
    - `ptu_usd_per_hour` (default 0: use the bundled hourly retail price): the effective price
      of one PTU-hour under a reservation. Microsoft publishes no reservation price that azai
      could bundle; the finding names this option as the price's source.

    ## Waste estimate

    The monthly token spend minus the provisioned deployment's monthly price: what the move
    would save at the stated PTU price. Both figures and their sources are in the finding. The
    input price is applied to every input token (cached prompt tokens bill less, and Azure
    Monitor does not count them apart), hourly totals hide minute peaks, and sizing to the
    busiest input hour plus the busiest output hour overstates the PTUs needed: the estimate
    is low confidence.

    ## Why

    Pay-per-token billing is the serverless form of model inference: ideal for variable load,
    and the wrong meter for traffic that never stops. Nothing in Azure Advisor or a peer tool
    compares a deployment's measured volume with provisioned throughput.
    """
    if not is_pay_per_token(resource):
        return
    usage = measured_deployment(resource, ctx)
    if not usage.tokens_metric:
        raise UnknownValueError(Unknown("no token metric of the account was measured (unpublished, or an error code)"))
    if not _steady(usage, float(ctx.options.get("min_quiet_share", 0.5))):
        return
    model = known(resource.get("properties.model.name"))
    sku = str(known(resource.get("sku.name")))
    account = ctx.inventory.parent(resource)
    region = account.location if account is not None else None
    price = ctx.prices.tokens.price(model, sku, region)
    capacity = ctx.prices.tokens.capacity(model)
    if price is None or capacity is None:
        raise UnknownValueError(Unknown(f"no bundled token price or PTU capacity for {model} ({sku}, {region})"))
    scale = HOURS_PER_MONTH / LOOKBACK_HOURS  # an hour without a sample took no tokens
    spend = (
        (sum(usage.input_tokens) * price.usd_per_1m_input + sum(usage.output_tokens) * price.usd_per_1m_output)
        * scale
        / 1e6
    )
    regional = sku.lower() == "standard"
    ptus = capacity.ptus_for(max(usage.input_tokens) / 60, max(usage.output_tokens, default=0.0) / 60, regional)
    provisioned = PROVISIONED_FOR[sku.lower()]
    ptu_price = _ptu_price(ctx, provisioned, region)
    rate = ptu_price.usd_per_hour
    ptu_monthly = ptus * HOURS_PER_MONTH * rate
    if ptu_monthly >= spend:
        return
    saving = round(spend - ptu_monthly, 2)
    cost = Cost(
        saving,
        f"pay-per-token ${spend:,.2f} a month less {ptus} PTU {provisioned} x 730 h x ${rate:g}/PTU-h "
        f"(${ptu_monthly:,.2f})",
        (
            f"{sum(usage.input_tokens):,.0f} input and {sum(usage.output_tokens):,.0f} output tokens "
            f"({usage.tokens_metric}) in {usage.window}, x 730/{LOOKBACK_HOURS} h",
            f"token prices: ${price.usd_per_1m_input:g}/${price.usd_per_1m_output:g} per 1M ({price.source}, "
            f"{price.as_of})",
            f"{capacity.input_tpm_per_ptu:g} input tokens/min per PTU, output x{capacity.output_weight:g} "
            f"({capacity.source})",
            "cached prompt tokens are priced as input; hourly totals hide minute peaks",
        ),
        "low",
        ptu_price,
    )
    yield Violation(
        f"Deployment '{resource.name}' ({sku}) spends ${spend:,.0f} a month on a steady token volume that "
        f"{ptus} PTU of {provisioned} would carry for ${ptu_monthly:,.0f}",
        "sku.name",
        {
            "monthly_token_spend": round(spend, 2),
            "provisioned_monthly": round(ptu_monthly, 2),
            "ptus": ptus,
            "window": usage.window,
            "metric": usage.tokens_metric,
        },
        f"{provisioned}, when a reservation makes it cheaper than tokens at this volume",
        cost=cost,
    )


def _steady(usage: DeploymentUsage, quiet_share: float) -> bool:
    """Tokens in at least 95% of the window's hours, and the quietest of those hours at least
    ``quiet_share`` of their average."""
    hours = [h for h in usage.input_tokens if h > 0]
    if len(hours) < 0.95 * LOOKBACK_HOURS:
        return False
    return min(hours) >= quiet_share * (sum(hours) / len(hours))


def _ptu_price(ctx: CheckContext, provisioned: str, region: object) -> Price:
    """The PTU-hour price: the option's reservation rate, else the bundled hourly retail price."""
    override = float(ctx.options.get("ptu_usd_per_hour", 0.0))
    if override > 0:
        return Price(override, "option ptu_usd_per_hour (a reservation's effective rate)", ctx.today.isoformat())
    listed = ctx.prices.price(provisioned, region, PTU)
    if listed is None:
        raise UnknownValueError(Unknown(f"no PTU price for {provisioned} in {region}"))
    return listed
