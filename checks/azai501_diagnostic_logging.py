"""AZAI-501 diagnostic-logging."""

from __future__ import annotations

from collections.abc import Iterator

from checks._common import AZURE_POLICY, WAF_AI, rule_page, same_text
from scanner.engine.checkapi import CheckContext, PeerRule, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import azure_types as T
from scanner.model.needs import LiveRead
from scanner.model.resources import Resource
from scanner.model.unknown import known


@rule(
    id="AZAI-501",
    slug="diagnostic-logging",
    title="AML workspace or Azure OpenAI account sends no diagnostic logs to Log Analytics",
    pillar=Pillar.OPERATIONS,
    severity=Severity.MEDIUM,
    resource_types=(T.WORKSPACE, T.COGNITIVE_ACCOUNT),
    reads=(LiveRead.DIAGNOSTIC_SETTINGS,),
    kinds={T.COGNITIVE_ACCOUNT: T.OPENAI_KINDS},  # the accounts serving OpenAI models
    principle=Principle(
        "Enable diagnostic logging for AI services, so that usage, failures and abuse can be monitored and "
        "investigated.",
        WAF_AI + "design-principles#operational-excellence",
    ),
    remediation=Remediation(
        terraform="azurerm_monitor_diagnostic_setting { target_resource_id = <workspace or account>.id, "
        "log_analytics_workspace_id = azurerm_log_analytics_workspace.logs.id, enabled_log { category_group = "
        '"allLogs" } }',
        bicep="Microsoft.Insights/diagnosticSettings with scope: <workspace or account> and properties: "
        "{ workspaceId: logs.id, logs: [ { categoryGroup: 'allLogs', enabled: true } ] }",
        cli="az monitor diagnostic-settings create --resource ID -n to-logs --workspace LOGS_ID "
        '--logs \'[{"categoryGroup":"allLogs","enabled":true}]\'',
        terraform_code="""\
            resource "azurerm_monitor_diagnostic_setting" "ws" {
              name                       = "to-logs"
              target_resource_id         = azurerm_machine_learning_workspace.ws.id
              log_analytics_workspace_id = azurerm_log_analytics_workspace.logs.id

              enabled_log {
                category_group = "allLogs"
              }
            }
        """,
        bicep_code="""\
            resource diagnostics 'Microsoft.Insights/diagnosticSettings@2021-05-01-preview' = {
              name: 'to-logs'
              scope: workspace
              properties: {
                workspaceId: logs.id
                logs: [
                  {
                    categoryGroup: 'allLogs'
                    enabled: true
                  }
                ]
              }
            }
        """,
        cli_code="""\
            az monitor diagnostic-settings create --name to-logs --resource RESOURCE_ID --workspace LOGS_ID \\
              --logs '[{"categoryGroup":"allLogs","enabled":true}]'
        """,
        guide="https://learn.microsoft.com/azure/ai-services/openai/how-to/monitor-openai",
    ),
    help_uri=rule_page("AZAI-501"),
    peers=(
        PeerRule(
            AZURE_POLICY,
            "afe0c3be-ba3b-4544-ba52-0c99672a8ad6",
            "Resource logs in Azure Machine Learning Workspaces should be enabled",
            "azai requires a Log Analytics destination; the policy also accepts storage with retention.",
        ),
        PeerRule(
            AZURE_POLICY,
            "1b4d1c4e-934c-4703-944c-27c82c06bebb",
            "Diagnostic logs in Azure AI services resources should be enabled",
            "Accounts serving OpenAI models only.",
        ),
    ),
)
def diagnostic_logging(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """An AML workspace, or an Azure OpenAI / AI Services account, without a diagnostic setting
    that sends its logs to a Log Analytics workspace.

    ## What fails

    A workspace, or a Cognitive Services account of `kind` `OpenAI` or `AIServices`, with no
    `Microsoft.Insights/diagnosticSettings` extension resource whose `properties.workspaceId`
    is set. In IaC the setting must be declared in the scanned files (a Bicep `scope:` or a
    template `scope`, `azurerm_monitor_diagnostic_setting`, or an azapi resource whose
    `parent_id` is the target); a live scan reads each resource's diagnostic settings.

    ## What passes

    Resources with at least one diagnostic setting to Log Analytics, and other account kinds.

    ## Undetermined when

    The account kind or the setting's destination is unknown before deploy, or a live scan
    could not read the resource's diagnostic settings (a coverage gap says why).

    ## Why

    Without logs there is no record of who called a model, what failed, or which requests were
    throttled; abuse and data-exfiltration investigations start blind. Settings deployed by
    Azure Policy (DeployIfNotExists) after creation are seen by live scans, not by IaC scans.
    """
    if resource.type_key == T.COGNITIVE_ACCOUNT.lower() and not same_text(
        known(resource.body.get("kind", "")), *T.OPENAI_KINDS
    ):
        return
    # A live scan that could not read the settings leaves an Unknown here: no finding on a failed read.
    known(resource.body.get(LiveRead.DIAGNOSTIC_SETTINGS.value))
    settings = ctx.inventory.extensions(resource, T.DIAGNOSTIC_SETTING)
    if any(known(s.get("properties.workspaceId")) for s in settings):
        return
    label = "Workspace" if resource.type_key == T.WORKSPACE.lower() else "Account"
    yield Violation(
        f"{label} '{resource.name}' has no diagnostic setting sending logs to Log Analytics",
        "properties",
        len(settings),
        "a diagnostic setting with a Log Analytics workspaceId",
    )
