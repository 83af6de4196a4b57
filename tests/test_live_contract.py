"""azai's live reads against an emulator that answers as Azure does (`scanner.emulator.contract`):
metrics asked with the aggregation each publishes, per-metric error codes, names a resource does
not publish, continuation links that change the query, and management groups past Resource
Graph's subscription limit.

Each test drives a whole scan through the real azure-mgmt clients and asserts which resources
fail, pass and stay undetermined, the coverage it reports, and the requests it sent.
"""

from __future__ import annotations

import functools
from typing import Any
from urllib.parse import parse_qs

import pytest

from scanner.emulator import contract
from scanner.emulator.estate import Estate
from scanner.emulator.hostile import Answer
from scanner.emulator.server import Emulator, Faults
from scanner.engine.results import ScanResult
from scanner.model.needs import LiveNeeds
from scanner.model.resources import Resource
from scanner.sources.live import collect, metrics
from scanner.sources.live.clients import ClientFactory
from scanner.sources.live.collect import Collector, Progress
from scanner.sources.live.monitor import Ask
from tests.live_estates import live_scan, model_account, model_deployment, rule_outcomes

SUB = "00000000-0000-0000-0000-0000000000c5"
GROUP = f"/subscriptions/{SUB}/resourceGroups/rg-contract"
HOURS = 168
OLD_NAMES = [
    "AzureOpenAIProvisionedManagedUtilizationV2",
    "AzureOpenAIRequests",
    "ProcessedPromptTokens",
    "GeneratedTokens",
]
METRICS_SUFFIX = "/providers/microsoft.insights/metrics"

_account = functools.partial(model_account, GROUP)
_deployment = functools.partial(model_deployment, GROUP)


def _subscription(sub: str) -> dict[str, Any]:
    return {"id": f"/subscriptions/{sub}", "subscriptionId": sub, "displayName": sub, "state": "Enabled"}


def _metric_requests(emulator: Emulator) -> list[tuple[str, dict[str, list[str]], int]]:
    """Each metrics request of the scan: the resource's name, its query and the answer's status."""
    return [
        (r.path.lower().removesuffix(METRICS_SUFFIX).rsplit("/", 1)[-1], parse_qs(r.query), r.status)
        for r in list(emulator.log)
        if r.path.lower().endswith(METRICS_SUFFIX)
    ]


def _gaps(result: ScanResult) -> list[str]:
    return sorted(f"{g.scope} | {g.reason}" for g in result.coverage)


def test_every_metrics_request_asks_one_aggregation_each_named_metric_publishes(serve) -> None:  # type: ignore[no-untyped-def]
    oai = _account("oai", "OpenAI", "eastus")
    estate = Estate(
        [_subscription(SUB)],
        [
            oai,
            _deployment("oai", "ptu", "GlobalProvisionedManaged", 100),
            _deployment("oai", "chat", "GlobalStandard", 10),
        ],
        metrics={oai["id"].lower(): {"AzureOpenAIRequests": {"ptu": [5.0] * HOURS}}},
    )
    emulator = serve(estate)
    result = live_scan(emulator)
    requests = _metric_requests(emulator)
    assert [(name, q["aggregation"], q["metricnames"]) for name, q, _ in requests] == [
        ("oai", ["Average"], ["AzureOpenAIProvisionedManagedUtilizationV2,ProvisionedUtilization"]),
        (
            "oai",
            ["Total"],
            ["AzureOpenAIRequests,ModelRequests,ProcessedPromptTokens,GeneratedTokens,InputTokens,OutputTokens"],
        ),
    ]
    for _, query, status in requests:
        assert status == 200
        for name in query["metricnames"][0].split(","):
            assert contract.metric_error("Microsoft.CognitiveServices/accounts", name, query["aggregation"]) is None
    assert result.coverage == []


def _errored_estate() -> Estate:
    """An account that publishes only the Azure OpenAI names, whose request metric Azure Monitor
    could not measure this time, with a busy provisioned deployment and a fine-tuned one."""
    oai = _account("oai", "OpenAI", "eastus")
    key = oai["id"].lower()
    return Estate(
        [_subscription(SUB)],
        [
            oai,
            _deployment("oai", "busy-ptu", "GlobalProvisionedManaged", 100),
            _deployment("oai", "tuned", "Standard", 1, "gpt-4o-mini-2024-07-18.ft-0123456789abcdef"),
        ],
        metrics={key: {"AzureOpenAIProvisionedManagedUtilizationV2": {"busy-ptu": [60.0] * HOURS}}},
        published_metrics={key: OLD_NAMES},
        metric_errors={key: {"azureopenairequests": ("TimeOut", "The metric query timed out.")}},
    )


def test_a_metric_answered_with_an_error_code_is_undetermined_never_idle(serve) -> None:  # type: ignore[no-untyped-def]
    emulator = serve(_errored_estate())
    result = live_scan(emulator, select=("AZAI-206",))
    failed, passed, undetermined = rule_outcomes(result, "AZAI-206")
    # Read as zero requests, both would be "took no requests": the whole PTU cost booked as waste.
    assert failed == {}
    assert passed == {"oai/busy-ptu"}  # its utilization was measured: 60 % is busy
    assert undetermined == {"oai/tuned"}
    scope = f"{GROUP}/providers/Microsoft.CognitiveServices/accounts/oai/providers/Microsoft.Insights/metrics"
    assert _gaps(result) == [
        f"{scope} | metric AzureOpenAIRequests was not measured: TimeOut: The metric query timed out."
    ]


def test_a_name_an_account_does_not_publish_costs_one_request_and_the_others_are_read(serve) -> None:  # type: ignore[no-untyped-def]
    legacy = _account("legacy", "OpenAI", "eastus")
    twin = _account("twin", "OpenAI", "eastus")
    foundry = _account("foundry", "AIServices", "swedencentral")
    idle = {
        "AzureOpenAIProvisionedManagedUtilizationV2": {"ptu": [2.0] * HOURS},
        "AzureOpenAIRequests": {"ptu": [5.0] * HOURS},
    }
    estate = Estate(
        [_subscription(SUB)],
        [
            legacy,
            _deployment("legacy", "ptu", "GlobalProvisionedManaged", 100),
            twin,
            _deployment("twin", "ptu", "GlobalProvisionedManaged", 100),
            foundry,
            _deployment("foundry", "ptu", "GlobalProvisionedManaged", 100),
        ],
        metrics={
            legacy["id"].lower(): idle,
            twin["id"].lower(): idle,
            foundry["id"].lower(): {
                "ProvisionedUtilization": {"ptu": [70.0] * HOURS},
                "ModelRequests": {"ptu": [900.0] * HOURS},
            },
        },
        published_metrics={
            legacy["id"].lower(): OLD_NAMES,
            twin["id"].lower(): OLD_NAMES,
            foundry["id"].lower(): ["ProvisionedUtilization", "ModelRequests", "InputTokens", "OutputTokens"],
        },
    )
    emulator = serve(estate)
    result = live_scan(emulator, select=("AZAI-206",))
    failed, passed, undetermined = rule_outcomes(result, "AZAI-206")
    assert set(failed) == {"legacy/ptu", "twin/ptu"}
    assert failed["legacy/ptu"].violation.observed["requests"] == 5.0 * HOURS
    assert passed == {"foundry/ptu"} and undetermined == set()
    assert result.coverage == []
    statuses: dict[str, list[int]] = {}
    for name, _, status in _metric_requests(emulator):
        statuses.setdefault(name, []).append(status)
    # The first account of its type, kind and region answers 400 once and teaches the names;
    # the second, in the same region, asks only for those.
    assert sorted(statuses["legacy"] + statuses["twin"]) == [200, 200, 200, 200, 400]
    assert sorted(statuses["foundry"]) == [200, 200, 400]


def _workspace_estate(schedules: int = 0) -> tuple[Estate, str]:
    workspace = f"{GROUP}/providers/Microsoft.MachineLearningServices/workspaces/mlw"
    storage = f"{GROUP}/providers/Microsoft.Storage/storageAccounts/stml"
    computes = [
        {
            "id": f"{workspace}/computes/gpu{i}",
            "name": f"gpu{i}",
            "type": "Microsoft.MachineLearningServices/workspaces/computes",
            "location": "eastus",
            "properties": {
                "computeType": "AmlCompute",
                "properties": {
                    "vmSize": "Standard_NC24ads_A100_v4",
                    "scaleSettings": {"minNodeCount": i % 2, "maxNodeCount": 2},
                },
            },
        }
        for i in range(4)
    ]
    return (
        Estate(
            [_subscription(SUB)],
            [
                {"id": storage, "name": "stml", "type": "Microsoft.Storage/storageAccounts", "location": "eastus"},
                {
                    "id": workspace,
                    "name": "mlw",
                    "type": "Microsoft.MachineLearningServices/workspaces",
                    "location": "eastus",
                    "properties": {"storageAccount": storage},
                },
                *computes,
                *[_schedule(workspace, i) for i in range(schedules)],
            ],
        ),
        workspace,
    )


def _schedule(workspace: str, index: int) -> dict[str, Any]:
    """An AML schedule starting an hour-long serverless A100 job every 30 minutes (48 instance-hours
    a day); the third one disabled."""
    return {
        "id": f"{workspace}/schedules/every-30m-{index}",
        "name": f"every-30m-{index}",
        "type": "Microsoft.MachineLearningServices/workspaces/schedules",
        "properties": {
            "isEnabled": index != 2,
            "trigger": {"triggerType": "Recurrence", "frequency": "Minute", "interval": 30},
            "action": {
                "actionType": "CreateJob",
                "jobDefinition": {
                    "jobType": "Command",
                    "resources": {"instanceType": "Standard_NC24ads_A100_v4", "instanceCount": 1},
                    "limits": {"jobLimitsType": "Command", "timeout": "PT1H"},
                },
            },
        },
    }


def _findings(result: ScanResult) -> set[tuple[str, str]]:
    return {(f.check.id, f.resource.id.lower()) for f in result.findings}


def test_a_next_link_with_another_api_version_is_followed_with_azai_s_own(serve) -> None:  # type: ignore[no-untyped-def]
    estate, workspace = _workspace_estate()
    whole = live_scan(serve(estate), select=("AZAI-201",))
    # The service's link names a version the spec does not define for computes (the strict
    # emulator refuses it, as Azure would); followed as it is, the second page would be a gap.
    link = f"{{endpoint}}{workspace}/computes?api-version=2017-01-01&$skiptoken=1"
    assert contract.api_version_error("GET", f"{workspace}/computes", "2017-01-01") is not None
    emulator = serve(estate, Faults(page_size=1, next_links={"/computes": link}))
    paged = live_scan(emulator, select=("AZAI-201",))
    assert paged.coverage == []
    assert (
        _findings(paged)
        == _findings(whole)
        == {
            ("AZAI-201", f"{workspace}/computes/gpu1".lower()),
            ("AZAI-201", f"{workspace}/computes/gpu3".lower()),
        }
    )
    pages = [parse_qs(r.query) for r in emulator.log if r.path.lower().endswith("/computes")]
    assert [p["api-version"] for p in pages] == [[collect.ML_API]] * 4
    assert [p.get("$skiptoken") for p in pages] == [None, ["1"], ["2"], ["3"]]


def test_a_next_link_that_drops_the_view_keeps_disabled_schedules(serve) -> None:  # type: ignore[no-untyped-def]
    estate, _ = _workspace_estate(schedules=3)
    emulator = serve(estate, Faults(page_size=2))  # the emulator's links keep only api-version and $skiptoken
    result = live_scan(emulator, select=("AZAI-207",))
    failed, passed, undetermined = rule_outcomes(result, "AZAI-207")
    assert set(failed) == {"mlw/every-30m-0", "mlw/every-30m-1"}
    assert passed == {"mlw/every-30m-2"}  # disabled, on the second page: read, and judged
    assert undetermined == set()
    pages = [parse_qs(r.query) for r in emulator.log if r.path.lower().endswith("/schedules")]
    assert [p["listViewType"] for p in pages] == [["All"], ["All"]]


def _tenant(subscriptions: int) -> Estate:
    """Subscriptions each holding one Azure OpenAI account that allows key auth (AZAI-101)."""
    subs = [f"00000000-0000-0000-0000-{i:012x}" for i in range(1, subscriptions + 1)]
    accounts = []
    for sub in subs:
        account = model_account(f"/subscriptions/{sub}/resourceGroups/rg", "oai", "OpenAI", "eastus")
        account["properties"]["disableLocalAuth"] = False
        accounts.append(account)
    return Estate([_subscription(s) for s in subs], accounts, management_groups={"mg-big": subs})


def _scanned(result: ScanResult) -> set[str]:
    return {f.resource.id.split("/")[2] for f in result.findings if f.check.id == "AZAI-101"}


def test_a_management_group_past_the_subscription_limit_is_read_whole(serve) -> None:  # type: ignore[no-untyped-def]
    estate = _tenant(5)
    emulator = serve(estate, Faults(tenant_subscription_limit=2))
    result = live_scan(emulator, management_groups=["mg-big"], select=("AZAI-101",))
    assert _scanned(result) == set(estate.subscription_ids())
    assert result.coverage == []
    descendants = [r for r in emulator.log if r.path.lower().endswith("/descendants")]
    assert [parse_qs(r.query)["api-version"] for r in descendants] == [[collect.MANAGEMENT_GROUPS_API]]


def test_a_management_group_past_the_limit_whose_descendants_fail_is_a_named_gap(serve) -> None:  # type: ignore[no-untyped-def]
    estate = _tenant(5)
    denied = Answer(status=403, body={"error": {"code": "AuthorizationFailed", "message": "no access"}})
    emulator = serve(estate, Faults(tenant_subscription_limit=2, answers={"/descendants": denied}))
    result = live_scan(emulator, management_groups=["mg-big"], select=("AZAI-101",))
    assert _scanned(result) == set(estate.subscription_ids()[:2])
    group = "/providers/Microsoft.Management/managementGroups/mg-big"
    assert _gaps(result) == [
        f"{group} | Resource Graph evaluated only 2 of the management group's subscriptions "
        "(x-ms-tenant-subscription-limit-hit) and its descendants could not be listed: the rest were not scanned",
        f"{group}/descendants | AuthorizationFailed: no access",
    ]


def test_a_mistyped_api_version_fails_against_the_strict_emulator(serve, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    estate, workspace = _workspace_estate()
    monkeypatch.setattr(collect, "ML_API", "2025-12-10")  # a typo of 2025-12-01
    result = live_scan(serve(estate), select=("AZAI-201",))
    assert _findings(result) == set()
    assert [(g.scope, g.status) for g in result.coverage] == [(f"{workspace}/computes", 400)]
    # ARM answers a provider's route with NoRegisteredProviderFound (`contract`)
    assert result.coverage[0].reason.startswith("NoRegisteredProviderFound")


def test_a_split_by_a_dimension_the_metric_lacks_is_a_gap_naming_it(serve) -> None:  # type: ignore[no-untyped-def]
    estate, workspace = _workspace_estate()
    emulator = serve(estate)
    factory = ClientFactory(arm_endpoint=emulator.endpoint)
    try:
        collector = Collector(factory, Progress(False), LiveNeeds(frozenset(), every_type=True))
        reader = collector.metrics_reader()
        wrong = Ask((metrics.GPU_METRIC,), "Average", metrics.ML_NAMESPACE, "ClusterName")
        body = next(r for r in estate.resources if r["id"] == workspace)
        resource = Resource(id=workspace, type=body["type"], name="mlw", body=body, origin=collect.LIVE_ORIGIN)
        assert reader.read(resource, wrong) is None
        assert reader.read(resource, metrics.WORKSPACE_GPU) == {"gpuutilizationpercentage": {}}
    finally:
        factory.close()
    [gap] = collector.coverage
    assert (gap.scope, gap.status) == (f"{workspace}/providers/Microsoft.Insights/metrics", 400)
    assert gap.reason.startswith(
        "BadRequest: Metric: GpuUtilizationPercentage does not support requested dimension combination: clustername"
    )
