"""AZAI-501 diagnostic-logging."""

from __future__ import annotations

import functools
from collections.abc import Iterator

from checks._common import AZURE_POLICY, WAF_AI, either, rule_page
from scanner.engine.checkapi import CheckContext, PeerRule, Pillar, Principle, Remediation, Severity, Violation, rule
from scanner.model import azure_types as T
from scanner.model.needs import LiveRead
from scanner.model.resources import Resource
from scanner.model.unknown import Unknown, known

# How a finding names the resource, by lower-case type.
LABELS = {
    T.WORKSPACE.lower(): "Workspace",
    T.COGNITIVE_ACCOUNT.lower(): "Account",
    T.SEARCH_SERVICE.lower(): "Search service",
}


@rule(
    id="AZAI-501",
    slug="diagnostic-logging",
    title="AML workspace, AI services account or AI Search service sends no diagnostic logs to Log Analytics",
    pillar=Pillar.OPERATIONS,
    severity=Severity.MEDIUM,
    # Azure Policy 1b4d1c4e names Cognitive Services accounts of every kind and Search services.
    resource_types=(T.WORKSPACE, T.COGNITIVE_ACCOUNT, T.SEARCH_SERVICE),
    reads=(LiveRead.DIAGNOSTIC_SETTINGS,),
    principle=Principle(
        "Enable diagnostic logging for AI services, so that usage, failures and abuse can be monitored and "
        "investigated.",
        WAF_AI + "design-principles#operational-excellence",
    ),
    remediation=Remediation(
        terraform="azurerm_monitor_diagnostic_setting { target_resource_id = "
        "<workspace, account or search service>.id, log_analytics_workspace_id = "
        "azurerm_log_analytics_workspace.logs.id, enabled_log { category_group = "
        '"allLogs" } }',
        bicep="Microsoft.Insights/diagnosticSettings with scope: <workspace, account or search service> and "
        "properties: { workspaceId: logs.id, logs: [ { categoryGroup: 'allLogs', enabled: true } ] }",
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
            "azai requires a Log Analytics destination; the policy accepts any setting with logs enabled, to storage "
            "too unless it keeps them for 1 to 364 days (Azure/azure-policy "
            "built-in-policies/policyDefinitions/Machine Learning/AuditDiagnosticLog_Audit.json@f4a50bac). Both "
            "judge every workspace.",
        ),
        PeerRule(
            AZURE_POLICY,
            "1b4d1c4e-934c-4703-944c-27c82c06bebb",
            "Diagnostic logs in Azure AI services resources should be enabled",
            "azai requires a Log Analytics destination and an enabled log; the policy accepts any setting that lists "
            "logs, whatever their destination or state (Azure/azure-policy built-in-policies/policyDefinitions/Azure "
            "Ai Services/DiagnosticLogs_Audit.json@f4a50bac). Both judge every Cognitive Services account and Search "
            "service.",
        ),
        PeerRule(
            AZURE_POLICY,
            "b4330a05-a843-4bc8-bf9a-cacce50c67f4",
            "Resource logs in Search services should be enabled",
            "azai requires a Log Analytics destination; the policy accepts any setting with logs enabled, to storage "
            "too unless it keeps them for 1 to 364 days (Azure/azure-policy "
            "built-in-policies/policyDefinitions/Search/AuditDiagnosticLog_Audit.json@f4a50bac). Both judge every "
            "Search service.",
        ),
    ),
)
def diagnostic_logging(resource: Resource, ctx: CheckContext) -> Iterator[Violation]:
    """An AML workspace, an AI services (Cognitive Services) account of any kind, or an AI Search
    service without a diagnostic setting that sends its logs to a Log Analytics workspace.

    ## What fails

    A workspace, a Cognitive Services account of any `kind` (OpenAI, AIServices, Speech,
    Vision, ...), or a Search service, with no `Microsoft.Insights/diagnosticSettings`
    extension resource whose `properties.workspaceId` is set and that enables at least one log
    category or category group (`properties.logs[*].enabled`). In IaC the setting must be
    declared in the scanned files (a Bicep `scope:`, a template `scope`, the older nested
    form `<type>/providers/diagnosticSettings` named `<resource>/Microsoft.Insights/<name>`,
    `azurerm_monitor_diagnostic_setting` with `enabled_log` blocks, or an azapi resource whose
    `parent_id` is the target); a live scan reads each resource's diagnostic settings.

    ## What passes

    Resources with at least one diagnostic setting that sends logs to Log Analytics. A setting
    that sends logs only to storage or an event hub, or only metrics, does not pass.

    ## Undetermined when

    No setting is known to send logs to Log Analytics, and one's logs are unknown before deploy,
    or whether its destination is set at all is (`if(c, id, null())`; an id known only at deploy
    counts as set); or a live scan could not read the resource's diagnostic settings (a coverage
    gap says why).

    ## Why

    Without logs there is no record of who called a model or a search index, what failed, or
    which requests were throttled; abuse and data-exfiltration investigations start blind.
    Azure Policy audits the same resources: every Cognitive Services account and Search
    service (1b4d1c4e), and Search services again (b4330a05). Settings deployed by Azure
    Policy (DeployIfNotExists) after creation are seen by live scans, not by IaC scans.
    """
    # A live scan that could not read the settings leaves an Unknown here: no finding on a failed read.
    known(resource.body.get(LiveRead.DIAGNOSTIC_SETTINGS.value))
    settings = ctx.inventory.extensions(resource, T.DIAGNOSTIC_SETTING)
    if either(*[functools.partial(_sends_logs_to_log_analytics, s) for s in settings]):
        return
    label = LABELS.get(resource.type_key, "Resource")
    yield Violation(
        f"{label} '{resource.name}' has no diagnostic setting sending logs to Log Analytics",
        "properties",
        len(settings),
        "a diagnostic setting with a Log Analytics workspaceId",
    )


def _sends_logs_to_log_analytics(setting: Resource) -> bool:
    """Whether one setting sends at least one enabled log category (or category group) to a
    Log Analytics workspace: a setting with metrics only records no calls, and Azure Policy
    1b4d1c4e and b4330a05 fail it too."""
    workspace = setting.get("properties.workspaceId")
    if isinstance(workspace, Unknown) and workspace.may_be_null:
        known(workspace)  # if(c, id, null()): whether it is set at all is not known
    if not isinstance(workspace, Unknown) and not workspace:  # an id known only at deploy is set
        return False
    logs = known(setting.get("properties.logs"))
    return isinstance(logs, list) and any(isinstance(e, dict) and known(e.get("enabled")) is True for e in logs)
