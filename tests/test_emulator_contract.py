"""The emulator's contract (`scanner.emulator.contract`): what Azure refuses, held against what
azai sends.

The api-versions, metric names, dimensions and aggregations are imported from the code that
sends them, so a changed constant is tested here before it reaches Azure; the SDK's own
versions are read from the requests the installed clients send to the emulator.
"""

from __future__ import annotations

import re
from typing import Any
from urllib.parse import parse_qs

import pytest

from scanner.cli import models
from scanner.emulator import contract
from scanner.emulator.estate import Estate, demo_estate_path
from scanner.model.resources import parse_resource_id
from scanner.sources.live import collect, metrics, monitor
from scanner.sources.live.clients import GRAPH_API, ClientFactory
from scanner.sources.live.monitor import Ask
from tests.conftest import ROOT
from tests.live_estates import live_scan

SUB = "00000000-0000-0000-0000-0000000000ec"
RG = f"/subscriptions/{SUB}/resourceGroups/rg"
WORKSPACE = f"{RG}/providers/Microsoft.MachineLearningServices/workspaces/mlw"
REGISTRY = f"{RG}/providers/Microsoft.MachineLearningServices/registries/reg"
ACCOUNT = f"{RG}/providers/Microsoft.CognitiveServices/accounts/oai"
APP = f"{RG}/providers/Microsoft.App/containerApps/app"
VM = f"{RG}/providers/Microsoft.Compute/virtualMachines/vm"
VMSS = f"{RG}/providers/Microsoft.Compute/virtualMachineScaleSets/vmss"
CLUSTER = f"{RG}/providers/Microsoft.ContainerService/managedClusters/aks"
INSIGHTS = "/providers/Microsoft.Insights"
ML_TYPE = "Microsoft.MachineLearningServices/workspaces"
ACCOUNT_TYPE = "Microsoft.CognitiveServices/accounts"
VM_TYPE = "Microsoft.Compute/virtualMachines"
VMSS_TYPE = "Microsoft.Compute/virtualMachineScaleSets"
APP_TYPE = "Microsoft.App/containerApps"
GUID = r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"

# Every request azai's code sends: the path of one instance, the type ARM names it by, and the
# api-version constant that sends it.
AZAI_SENDS = [
    ("GET", f"{WORKSPACE}/computes", "workspaces/computes", collect.ML_API),
    ("GET", f"{WORKSPACE}/onlineEndpoints", "workspaces/onlineEndpoints", collect.ML_API),
    ("GET", f"{WORKSPACE}/onlineEndpoints/ep/deployments", "workspaces/onlineEndpoints/deployments", collect.ML_API),
    ("GET", f"{WORKSPACE}/serverlessEndpoints", "workspaces/serverlessEndpoints", collect.ML_API),
    ("GET", f"{WORKSPACE}/connections", "workspaces/connections", collect.ML_API),
    ("GET", f"{WORKSPACE}/schedules", "workspaces/schedules", collect.ML_API),
    ("GET", f"{WORKSPACE}/jobs", "workspaces/jobs", collect.ML_API),
    ("GET", f"{WORKSPACE}/environments/env/versions/3", "workspaces/environments/versions", collect.ML_API),
    ("GET", f"{REGISTRY}/environments/env/versions/3", "registries/environments/versions", collect.ML_API),
    ("GET", f"{ACCOUNT}/deployments", "accounts/deployments", collect.COGNITIVE_API),
    ("GET", f"{ACCOUNT}/raiPolicies", "accounts/raiPolicies", collect.COGNITIVE_API),
    ("GET", f"{ACCOUNT}/projects", "accounts/projects", collect.COGNITIVE_API),
    ("GET", f"{ACCOUNT}/connections", "accounts/connections", collect.COGNITIVE_API),
    ("GET", f"{ACCOUNT}/projects/proj/connections", "accounts/projects/connections", collect.COGNITIVE_API),
    ("GET", f"{ACCOUNT}/models", "accounts/models", collect.COGNITIVE_API),
    (
        "GET",
        f"/subscriptions/{SUB}/providers/Microsoft.CognitiveServices/locations/eastus/models",
        "locations/models",
        models.MODELS_API,
    ),
    ("GET", f"{APP}/authConfigs", "containerApps/authConfigs", collect.APPS_API),
    ("GET", f"{WORKSPACE}{INSIGHTS}/diagnosticSettings", "diagnosticSettings", collect.DIAGNOSTICS_API),
    ("GET", f"{ACCOUNT}{INSIGHTS}/diagnosticSettings", "diagnosticSettings", collect.DIAGNOSTICS_API),
    ("GET", f"{ACCOUNT}/deployments/gpt{INSIGHTS}/diagnosticSettings", "diagnosticSettings", collect.DIAGNOSTICS_API),
    *[
        ("GET", f"{target}{INSIGHTS}/metrics", "metrics", monitor.METRICS_API)
        for target in (WORKSPACE, ACCOUNT, VM, VMSS, APP)
    ],
    ("POST", "/providers/Microsoft.ResourceGraph/resources", "resources", GRAPH_API),
    (
        "GET",
        "/providers/Microsoft.Management/managementGroups/mg-ai/descendants",
        "managementGroups/descendants",
        collect.MANAGEMENT_GROUPS_API,
    ),
]

# The metrics azai asks for, by the type it asks them of.
ASKS = [
    (ML_TYPE, metrics.WORKSPACE_GPU),
    (ML_TYPE, metrics.CLUSTER_GPU),
    (VM_TYPE, metrics.MACHINE_CPU),
    (VMSS_TYPE, metrics.MACHINE_CPU),
    (ACCOUNT_TYPE, metrics.ACCOUNT_UTILIZATION),
    (ACCOUNT_TYPE, metrics.ACCOUNT_COUNTS),
    (APP_TYPE, metrics.APP_REQUESTS),
    (APP_TYPE, metrics.APP_REPLICAS),
]


@pytest.mark.parametrize(("method", "path", "kind", "version"), AZAI_SENDS, ids=lambda v: str(v)[-40:])
def test_every_api_version_azai_sends_is_one_the_spec_defines(method: str, path: str, kind: str, version: str) -> None:
    route = contract.route_for(method, path)
    assert route is not None and route.type == kind
    assert contract.api_version_error(method, path, version) is None


def _instance(route: contract.Route) -> str:
    """A path of ``route`` with every placeholder filled (a workspace for ``{resourceUri}``)."""
    path = route.path.replace("{resourceUri}", WORKSPACE)
    return re.sub(r"\{[^}]+\}", "x1", path)


def test_a_wrong_api_version_is_refused_on_every_route_as_arm_refuses_it() -> None:
    answers = {
        (route.type, route.owner): contract.api_version_error(route.method, _instance(route), "2000-01-01")
        for route in contract.routes()
    }
    assert len(answers) == len(contract.routes()) == 25
    for (kind, owner), answer in answers.items():
        assert answer is not None, kind
        status, body = answer
        code = "InvalidApiVersionParameter" if owner == "arm" else "NoRegisteredProviderFound"
        assert (status, body["error"]["code"]) == (400, code), kind
        assert "'2000-01-01'" in body["error"]["message"], kind
    assert {kind for kind, owner in answers if owner == "arm"} == {"subscriptions"}


def test_a_mistyped_ml_version_is_refused_naming_the_versions_the_spec_defines() -> None:
    typo = collect.ML_API.replace("-01", "-10")  # 2025-12-01 -> 2025-12-10
    status, body = contract.api_version_error("GET", f"{WORKSPACE}/serverlessEndpoints", typo, location="eastus") or (
        0,
        {},
    )
    versions = ", ".join(contract.route_for("GET", f"{WORKSPACE}/serverlessEndpoints").versions)  # type: ignore[union-attr]
    assert status == 400
    assert body == {
        "error": {
            "code": "NoRegisteredProviderFound",
            "message": f"No registered resource provider found for location 'eastus' and API version '{typo}' for "
            f"type 'workspaces/serverlessEndpoints'. The supported api-versions are '{versions}'. "
            "The supported locations are 'eastus'.",
        }
    }
    assert versions.startswith("2023-08-01-preview, 2024-01-01-preview, 2024-04-01, ")
    assert "2023-10-01" not in versions  # a stable folder that does not define serverless endpoints


def test_arm_s_own_route_lists_its_versions_newest_first() -> None:
    assert contract.api_version_error("GET", "/subscriptions", "2022-12-10") == (
        400,
        {
            "error": {
                "code": "InvalidApiVersionParameter",
                "message": "The api-version '2022-12-10' is invalid. The supported versions are "
                "'2022-12-01,2021-01-01,2020-01-01,2019-11-01,2019-06-01,2018-06-01,2016-06-01,2015-11-01'.",
            }
        },
    )


def test_a_route_azai_does_not_send_is_left_to_the_server() -> None:
    assert contract.route_for("GET", f"/subscriptions/{SUB}/resourcegroups") is None
    assert contract.api_version_error("GET", f"/subscriptions/{SUB}/resources", "1999-01-01") is None
    assert contract.api_version_error("GET", WORKSPACE, "1999-01-01") is None  # a top-level resource by id
    assert contract.api_version_error("PUT", f"{WORKSPACE}/computes", "1999-01-01") is None


def _versions_sent(log: list[Any]) -> dict[str, set[str]]:
    """The api-versions of the logged ARM requests, by the type of their contract route."""
    sent: dict[str, set[str]] = {}
    for request in log:
        version = parse_qs(request.query).get("api-version")
        if request.path == "/msi/token" or not version:
            continue
        route = contract.route_for(request.method, request.path)
        assert route is not None, f"{request.method} {request.path} is sent but not in the contract"
        assert contract.api_version_error(request.method, request.path, version[0]) is None, request.path
        sent.setdefault(route.type, set()).update(version)
    return sent


def test_the_sdk_calls_azai_makes_send_versions_the_spec_defines(serve) -> None:  # type: ignore[no-untyped-def]
    cluster = {"id": CLUSTER, "name": "aks", "type": "Microsoft.ContainerService/managedClusters", "location": "eastus"}
    subscription = {"id": f"/subscriptions/{SUB}", "subscriptionId": SUB, "displayName": "ai", "state": "Enabled"}
    emulator = serve(Estate([subscription], [cluster]))
    factory = ClientFactory(arm_endpoint=emulator.endpoint)
    try:
        assert [s.subscription_id for s in factory.subscriptions().subscriptions.list()] == [SUB]
        assert list(factory.compute(SUB).resource_skus.list(filter="location eq 'eastus'")) == []
        assert list(factory.containers(SUB).agent_pools.list("rg", "aks")) == []
    finally:
        factory.close()
    assert set(_versions_sent(emulator.log)) == {"subscriptions", "skus", "managedClusters/agentPools"}


def test_a_live_scan_of_the_demo_estate_sends_only_what_azure_accepts(serve) -> None:  # type: ignore[no-untyped-def]
    emulator = serve(Estate.load(demo_estate_path()))
    result = live_scan(emulator)
    assert result.coverage == []
    sent = _versions_sent(emulator.log)
    assert sorted(sent) == [
        "accounts/deployments",
        "accounts/models",
        "containerApps/authConfigs",
        "diagnosticSettings",
        "managedClusters/agentPools",
        "metrics",
        "resources",
        "subscriptions",
        "workspaces/computes",
        "workspaces/connections",
        "workspaces/jobs",
        "workspaces/onlineEndpoints",
        "workspaces/onlineEndpoints/deployments",
        "workspaces/schedules",
        "workspaces/serverlessEndpoints",
    ]
    asked = [
        (r.path[: -len("/providers/microsoft.insights/metrics")], parse_qs(r.query))
        for r in emulator.log
        if r.path.lower().endswith("/providers/microsoft.insights/metrics")
    ]
    assert asked
    for target, query in asked:
        kind = parse_resource_id(target).resource_type or ""
        names = query["metricnames"][0]
        assert contract.metrics_request_error(kind, names, query.get("$filter", [""])[0]) is None, (kind, names)
        for name in names.split(","):
            assert contract.metric_error(kind, name, query["aggregation"]) is None, (kind, name)


@pytest.mark.parametrize(("kind", "ask"), ASKS, ids=lambda v: v if isinstance(v, str) else ",".join(v.names))
def test_every_metric_azai_asks_for_is_published_with_its_split_and_aggregation(kind: str, ask: Ask) -> None:
    table = contract.metric_tables()[kind.lower()]
    for name in ask.names:
        metric = table.find(name)
        assert metric is not None, name
        assert ask.aggregation in metric.aggregations, name
        assert ask.split_by is None or ask.split_by in metric.dimensions, name
    split = f"{ask.split_by} eq '*'" if ask.split_by else None
    assert contract.metrics_request_error(kind, ask.names, split) is None
    assert [contract.metric_error(kind, name, ask.aggregation) for name in ask.names] == [None] * len(ask.names)


def test_the_account_request_that_mixed_average_and_total_asked_each_metric_one_it_lacks() -> None:
    """azai asked ``aggregation=Average,Total`` of all eight names at once (before the request
    was split by aggregation): each of them supports only one of the two."""
    names = [*metrics.PTU_METRICS, *metrics.REQUEST_METRICS, *(n for pair in metrics.TOKEN_METRICS for n in pair)]
    answers = {name: contract.metric_error(ACCOUNT_TYPE, name, "Average,Total") for name in names}
    lacking = {name: "Total" if name in metrics.PTU_METRICS else "Average" for name in names}
    assert answers == {
        name: ("InvalidSamplingType", f"Sampling type is not found. Metric:{name}, SamplingType:Nullable{aggregation}.")
        for name, aggregation in lacking.items()
    }
    assert len(answers) == 8


def test_an_unknown_metric_name_is_a_400_listing_the_names_the_resource_publishes() -> None:
    published = ["AzureOpenAIRequests", "ProcessedPromptTokens"]
    asked = ["AzureOpenAIRequests", "ModelRequests"]
    assert contract.metrics_request_error(ACCOUNT_TYPE, asked, None, published) == (
        400,
        {
            "code": "BadRequest",
            "message": "Failed to find metric configuration for provider: Microsoft.CognitiveServices, resource Type: "
            "accounts, metric: ModelRequests, Valid metrics: AzureOpenAIRequests,ProcessedPromptTokens",
        },
    )
    status, body = contract.metrics_request_error(ML_TYPE, "GpuUtilisationPercentage", None) or (0, {})
    assert status == 400 and body["code"] == "BadRequest"
    assert body["message"].startswith(
        "Failed to find metric configuration for provider: Microsoft.MachineLearningServices, resource Type: "
        "workspaces, metric: GpuUtilisationPercentage, Valid metrics: Agents,IndexedFiles,Messages,"
    )
    assert body["message"].endswith(",Starting Runs,Warnings")
    assert contract.metrics_request_error(ML_TYPE, "gpuutilizationpercentage", "computename eq '*'") is None


def test_a_dimension_a_named_metric_lacks_is_a_400_naming_the_metric_and_its_dimensions() -> None:
    status, body = contract.metrics_request_error(ML_TYPE, [metrics.GPU_METRIC], "ClusterName eq '*'") or (0, {})
    assert status == 400 and set(body) == {"code", "message"} and body["code"] == "BadRequest"
    assert re.fullmatch(
        "Metric: GpuUtilizationPercentage does not support requested dimension combination: clustername, "
        r"supported ones are: RunId,InstanceId,DeviceId,ComputeName, TraceId: \{" + GUID + r"\}",
        body["message"],
    )
    status, body = contract.metrics_request_error(VM_TYPE, "Percentage CPU", "LUN eq '0'") or (0, {})
    assert status == 400
    assert body["message"].startswith(
        "Metric: Percentage CPU does not support requested dimension combination: lun, supported ones are: , "
    )
    assert contract.metrics_request_error(VMSS_TYPE, "Percentage CPU", "VMName eq '*'") is None


def test_an_aggregation_a_metric_lacks_is_its_invalid_sampling_type() -> None:
    assert contract.metric_error(VM_TYPE, "Percentage CPU", "Maximum") == (
        "InvalidSamplingType",
        "Sampling type is not found. Metric:Percentage CPU, SamplingType:NullableMaximum.",
    )
    assert contract.metric_error(VM_TYPE, "percentage cpu", ["Average"]) is None
    assert contract.metric_error("Microsoft.Storage/storageAccounts", "Transactions", "Total") is None  # no table


def test_graph_pages_hold_at_most_1000_rows_and_a_larger_top_is_cut_not_refused() -> None:
    body = {"subscriptions": [SUB], "query": "resources", "options": {"$top": 5000}}
    assert contract.graph_request_error(body) is None
    assert [contract.graph_page_size(o) for o in ({"$top": 5000}, {"$top": 300}, {}, None)] == [1000, 300, 1000, 1000]
    assert contract.graph_page_size({"$top": collect.PAGE_SIZE}) == collect.PAGE_SIZE


def test_graph_refuses_more_subscriptions_than_one_request_takes() -> None:
    batch = [f"00000000-0000-0000-0000-{i:012x}" for i in range(1001)]
    assert contract.graph_request_error({"subscriptions": batch[: collect.SUBSCRIPTIONS_PER_QUERY]}) is None
    assert contract.graph_request_error({"subscriptions": batch[:1000]}) is None
    status, body = contract.graph_request_error({"subscriptions": batch}) or (0, {})
    assert status == 400 and set(body["error"]) == {"code", "message"} and body["error"]["code"] == "BadRequest"
    assert re.fullmatch(
        r"Please provide below info when asking for support: timestamp = \d{4}-\d\d-\d\dT[\d:.]+Z, "
        f"correlationId = {GUID}\\.",
        body["error"]["message"],
    )


def test_a_tenant_or_group_query_evaluates_the_first_10000_subscriptions_and_says_so() -> None:
    partial = {"query": "resources", "options": {"allowPartialScopes": True}}
    whole = {"query": "resources", "options": {}}
    assert contract.tenant_scope(10_000) == (10_000, {})
    assert contract.tenant_scope(10_001) == (10_000, {"x-ms-tenant-subscription-limit-hit": "true"})
    assert contract.graph_request_error(partial, 25_000) is None
    assert contract.graph_request_error(whole, 10_000) is None
    status, body = contract.graph_request_error(whole, 10_001) or (0, {})
    assert status == 400 and body["error"]["code"] == "BadRequest"
    assert body["error"]["details"] == [
        {
            "code": "TooManySubscriptionsUnderScope",
            "message": "The number of subscriptions under provided tenant or management groups in the request has "
            "exceeded the allowed limit 10000. Please select a more granular scope or allow partial scopes results "
            "by passing AllowPartialScopes flag in the query options.",
        }
    ]


def test_the_tables_are_well_formed() -> None:
    """Versions sorted and unique, every row sourced, metric names unique per type."""
    for route in contract.routes():
        assert list(route.versions) == sorted(set(route.versions)), route.path
        assert route.source and route.sender and route.owner in ("arm", "provider"), route.path
    counts = {t.resource_type: len(t.metrics) for t in contract.metric_tables().values()}
    assert counts == {ML_TYPE: 65, ACCOUNT_TYPE: 110, VM_TYPE: 64, VMSS_TYPE: 64, APP_TYPE: 31}
    for table in contract.metric_tables().values():
        assert len({m.name.lower() for m in table.metrics}) == len(table.metrics), table.resource_type


def test_the_contract_doc_is_up_to_date() -> None:
    """Regenerate with: python -m scanner.emulator.contract > docs/emulator-contract.md"""
    doc = (ROOT / "docs" / "emulator-contract.md").read_text(encoding="utf-8")
    assert doc == contract.markdown(), "docs/emulator-contract.md is stale"
