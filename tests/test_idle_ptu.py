"""Idle model capacity (AZAI-206) and both shapes of AML's GPU metric (AZAI-202), measured live.

Each test drives a whole scan through the real azure-mgmt clients against the project's ARM
emulator, which serves Azure Monitor answers in the metrics API's shape, and asserts which
resources fail, pass and stay undetermined, the dollars, and how many metrics requests it took.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any
from urllib.parse import parse_qs

from scanner.emulator.estate import Estate
from scanner.emulator.server import Emulator
from scanner.pipeline.scan import ScanRequest, ScanResult, run_scan
from scanner.sources.live.scope import LiveScope
from tests.live_estates import model_account, model_deployment, rule_outcomes

SUB = "00000000-0000-0000-0000-0000000000d6"
GROUP = f"/subscriptions/{SUB}/resourceGroups/rg-models"
HOURS = 168  # 7 days of hourly samples


_account = functools.partial(model_account, GROUP)
_deployment = functools.partial(model_deployment, GROUP)


def _estate(
    resources: list[dict[str, Any]], metrics: dict[str, Any], published: dict[str, list[str]] | None = None
) -> Estate:
    """An estate whose resources publish what Learn's tables say, unless ``published`` narrows it."""
    return Estate(
        [{"id": f"/subscriptions/{SUB}", "subscriptionId": SUB, "displayName": "models", "state": "Enabled"}],
        resources,
        metrics={k.lower(): v for k, v in metrics.items()},
        published_metrics={k.lower(): v for k, v in (published or {}).items()},
    )


def _scan(serve: Callable[..., Emulator], estate: Estate) -> tuple[ScanResult, list[tuple[str, dict[str, list[str]]]]]:
    emulator = serve(estate)
    result = run_scan(
        ScanRequest(paths=(), live=LiveScope(all_subscriptions=True), arm_endpoint=emulator.endpoint, fail_on="none")
    )
    metrics = [
        (r.path.lower().removesuffix("/providers/microsoft.insights/metrics"), parse_qs(r.query))
        for r in list(emulator.log)
        if r.path.lower().endswith("/providers/microsoft.insights/metrics")
    ]
    return result, metrics


def model_estate() -> Estate:
    oai = _account("oai", "OpenAI", "eastus")
    silent = _account("silent", "AIServices", "eastus")
    foundry = _account("foundry", "AIServices", "westeurope")
    plain = _account("plain", "OpenAI", "eastus")
    resources = [
        oai,
        _deployment("oai", "idle-ptu", "GlobalProvisionedManaged", 100),
        _deployment("oai", "unused-ptu", "DataZoneProvisionedManaged", 50),
        _deployment("oai", "busy-ptu", "ProvisionedManaged", 100),
        _deployment("oai", "no-util-ptu", "GlobalProvisionedManaged", 15),
        _deployment("oai", "standard", "Standard", 10),
        _deployment("oai", "ft-unused", "Standard", 1, "gpt-4o-mini-2024-07-18.ft-0123456789abcdef"),
        _deployment("oai", "ft-dev", "Developer", 1, "gpt-4o-mini-2024-07-18.ft-fedcba9876543210"),
        silent,
        _deployment("silent", "dark-ptu", "GlobalProvisionedManaged", 20),
        foundry,
        _deployment("foundry", "new-names-ptu", "GlobalProvisionedManaged", 30),
        plain,
        _deployment("plain", "chat", "GlobalStandard", 50),
    ]
    metrics = {
        # `unused-ptu` and both fine-tuned deployments have no series: they took no requests.
        oai["id"]: {
            "AzureOpenAIProvisionedManagedUtilizationV2": {
                "idle-ptu": [2.0] * (HOURS - 8) + [20.0] * 8,
                "busy-ptu": [60.0] * HOURS,
            },
            "AzureOpenAIRequests": {
                "idle-ptu": [5.0] * HOURS,
                "busy-ptu": [900.0] * HOURS,
                "no-util-ptu": [1.0] * HOURS,
            },
        },
        # An account on the Foundry metric names.
        foundry["id"]: {
            "ProvisionedUtilization": {"new-names-ptu": [1.0] * HOURS},
            "ModelRequests": {"new-names-ptu": [2.0] * HOURS},
        },
    }
    return _estate(resources, metrics, {silent["id"]: []})  # `silent` publishes no metric at all


def test_idle_and_unused_provisioned_throughput_fail_with_their_waste(serve) -> None:  # type: ignore[no-untyped-def]
    result, metrics = _scan(serve, model_estate())
    failed, passed, undetermined = rule_outcomes(result, "AZAI-206")
    assert set(failed) == {"oai/idle-ptu", "oai/unused-ptu", "oai/ft-unused", "foundry/new-names-ptu"}
    assert {"oai/busy-ptu", "oai/standard", "oai/ft-dev", "plain/chat"} <= passed
    # requests but no utilization series; an account that publishes no metric at all
    assert undetermined == {"oai/no-util-ptu", "silent/dark-ptu"}

    idle = failed["oai/idle-ptu"]
    assert idle.violation.observed == {
        "average_percent": round((2.0 * (HOURS - 8) + 20.0 * 8) / HOURS, 2),
        "maximum_percent": 20.0,
        "ptus": 100.0,
        "window": "7 days (hourly)",
        "metric": "AzureOpenAIProvisionedManagedUtilizationV2",
        "requests": 5.0 * HOURS,
    }
    # 80 PTU no hour needed x 730 h x $1.00 (Global, eastus)
    assert idle.cost is not None and idle.cost.monthly_usd == 58_400.00
    assert idle.cost.price is not None and idle.cost.price.as_of == "2026-09-23"
    # every PTU of a deployment without requests: 50 x 730 h x $1.10 (Data Zone, eastus)
    unused = failed["oai/unused-ptu"]
    assert unused.cost is not None and unused.cost.monthly_usd == 40_150.00
    assert unused.violation.observed["requests"] == 0
    # westeurope's Global PTU price is bundled too: 29.7 PTU no hour needed x 730 h x $1.00
    new_names = failed["foundry/new-names-ptu"].cost
    assert new_names is not None and new_names.monthly_usd == 21_681.00
    # a Standard (regional) gpt-4o-mini fine-tune has no hosting meter in eastus: unknown, never $0
    hosting = failed["oai/ft-unused"].cost
    assert hosting is not None and hosting.monthly_usd is None
    assert hosting.unknown_reason == (
        "no hosting price for fine-tuned gpt-4o-mini Standard in eastus in the bundled price table"
    )
    assert failed["foundry/new-names-ptu"].violation.observed["metric"] == "ProvisionedUtilization"

    # Per account holding a provisioned, fine-tuned or (for AZAI-209) pay-per-token deployment:
    # the utilization (Average) when one is provisioned, and the counts (Total). `silent` answers
    # its first request with a 400 that lists no metric, and is asked nothing more.
    accounts = sorted(path.rsplit("/", 1)[-1] for path, query in metrics if "/accounts/" in path)
    assert accounts == ["foundry", "foundry", "oai", "oai", "plain", "silent"]
    asked = [(q["aggregation"], q["metricnames"]) for path, q in metrics if path.endswith("/accounts/oai")]
    assert asked == [
        (["Average"], ["AzureOpenAIProvisionedManagedUtilizationV2,ProvisionedUtilization"]),
        (
            ["Total"],
            ["AzureOpenAIRequests,ModelRequests,ProcessedPromptTokens,GeneratedTokens,InputTokens,OutputTokens"],
        ),
    ]
    assert {q["$filter"][0] for path, q in metrics if "/accounts/" in path} == {"ModelDeploymentName eq '*'"}


def test_a_deployment_is_not_idle_by_default_options_when_its_peak_is_high(serve) -> None:  # type: ignore[no-untyped-def]
    oai = _account("oai", "OpenAI", "eastus")
    estate = _estate(
        [oai, _deployment("oai", "bursty", "GlobalProvisionedManaged", 100)],
        {
            oai["id"]: {
                "AzureOpenAIProvisionedManagedUtilizationV2": {"bursty": [1.0] * (HOURS - 2) + [95.0] * 2},
                "AzureOpenAIRequests": {"bursty": [3.0] * HOURS},
            }
        },
    )
    result, _ = _scan(serve, estate)
    failed, passed, undetermined = rule_outcomes(result, "AZAI-206")
    assert not failed and not undetermined and "oai/bursty" in passed


def _workspace_estate() -> Estate:
    storage = f"{GROUP}/providers/Microsoft.Storage/storageAccounts/stml"
    workspace = f"{GROUP}/providers/Microsoft.MachineLearningServices/workspaces/mlw"

    def compute(name: str, kind: str = "AmlCompute") -> dict[str, Any]:
        return {
            "id": f"{workspace}/computes/{name}",
            "name": name,
            "type": "Microsoft.MachineLearningServices/workspaces/computes",
            "location": "eastus",
            "properties": {
                "computeType": kind,
                "properties": {
                    "vmSize": "Standard_NC24ads_A100_v4",
                    "scaleSettings": {"minNodeCount": 0, "maxNodeCount": 2},
                    "currentNodeCount": 1,
                },
            },
        }

    resources = [
        {"id": storage, "name": "stml", "type": "Microsoft.Storage/storageAccounts", "location": "eastus"},
        {
            "id": workspace,
            "name": "mlw",
            "type": "Microsoft.MachineLearningServices/workspaces",
            "location": "eastus",
            "properties": {"storageAccount": storage},
        },
        compute("by-compute"),
        compute("by-cluster"),
        compute("busy-cluster"),
        compute("dark"),
        compute("notebook", "ComputeInstance"),
    ]
    metrics = {
        workspace: {
            "GpuUtilizationPercentage": {"by-compute": [1.0] * HOURS, "notebook": [70.0] * HOURS},
            "GpuUtilization": {"by-cluster": [2.0] * HOURS, "busy-cluster": [50.0] * HOURS},
        }
    }
    return _estate(resources, metrics)


def test_idle_gpu_reads_both_shapes_of_the_aml_workspace_metric(serve) -> None:  # type: ignore[no-untyped-def]
    result, metrics = _scan(serve, _workspace_estate())
    failed, passed, undetermined = rule_outcomes(result, "AZAI-202")
    assert set(failed) == {"mlw/by-compute", "mlw/by-cluster"}
    assert failed["mlw/by-compute"].violation.observed["metric"] == "GpuUtilizationPercentage"
    assert failed["mlw/by-cluster"].violation.observed["metric"] == "GpuUtilization"
    # 1 node idle in every hour: 730 h x $3.673 (NC24ads A100 v4, eastus)
    for name in failed:
        assert failed[name].cost is not None and failed[name].cost.monthly_usd == round(730 * 3.673, 2)
    assert {"mlw/busy-cluster", "mlw/notebook"} <= passed
    assert undetermined == {"mlw/dark"}  # in neither metric
    # by compute first; by cluster only for the clusters the first answer lacked
    assert [q["$filter"] for _, q in metrics] == [["ComputeName eq '*'"], ["ClusterName eq '*'"]]
    assert [q["metricnames"] for _, q in metrics] == [["GpuUtilizationPercentage"], ["GpuUtilization"]]


def test_a_workspace_that_covers_every_compute_by_name_costs_one_metrics_request(serve) -> None:  # type: ignore[no-untyped-def]
    estate = _workspace_estate()
    workspace = next(k for k in estate.metrics)
    estate.metrics[workspace]["GpuUtilizationPercentage"].update(
        {"by-cluster": [2.0] * HOURS, "busy-cluster": [50.0] * HOURS, "dark": [40.0] * HOURS}
    )
    result, metrics = _scan(serve, estate)
    failed, _, undetermined = rule_outcomes(result, "AZAI-202")
    assert set(failed) == {"mlw/by-compute", "mlw/by-cluster"} and not undetermined
    assert len(metrics) == 1
