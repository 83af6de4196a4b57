"""Utilization from Azure Monitor for AZAI-202 and AZAI-206, fetched in batches and only for
the resources those rules judge.

AML publishes GPU utilization on the *workspace*, in two shapes (Azure Monitor's supported
metrics for Microsoft.MachineLearningServices/workspaces): ``GpuUtilizationPercentage`` with
dimension ``ComputeName`` (also RunId, InstanceId, DeviceId), and ``GpuUtilization`` with
dimension ``ClusterName`` (also Scenario, runId, NodeId, DeviceId). One request per workspace
asks for the first, split by compute; only when a GPU cluster is missing from its answer does a
second request ask for the second, split by cluster. They are two requests because a
``$filter`` on a dimension one of the metrics lacks is reported to be refused (unverified).

VMs and scale sets have no ARM GPU metric without in-guest monitoring (AMA/DCGM); for them
``Percentage CPU`` is used as a proxy, as Azure Advisor does, and the evidence says so with low
confidence.

Model deployments (Microsoft.CognitiveServices/accounts/deployments) are measured on their
*account*, split by ``ModelDeploymentName``: one request per account holding a provisioned,
fine-tuned or pay-per-token deployment asks for the provisioned utilization, the request count
and the input and output tokens, each under its older (``AzureOpenAI...``,
``ProcessedPromptTokens``/``GeneratedTokens``) and newer (Foundry "Models":
``InputTokens``/``OutputTokens``) name, since an account may publish either (supported metrics
for Microsoft.CognitiveServices/accounts, 2026-07-31).

Container Apps held at one replica or more on a serverless GPU profile (AZAI-208) are measured
on the app itself: one request asks for ``Requests`` (Count, Total) and ``Replicas`` (Count,
Maximum), the names Azure Monitor's supported metrics for Microsoft.App/containerApps give.
Their findings stand on the app's configuration; the metrics only add whether it served anyone.

Missing metrics leave a resource out, which makes the rule undetermined, never passing.
"""

from __future__ import annotations

import datetime as dt
import functools
from collections import defaultdict
from collections.abc import Callable
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any

from scanner.model import azure_types as T
from scanner.model.containerapps import min_replicas, serverless_gpu_profile
from scanner.model.resources import Resource
from scanner.model.unknown import UnknownValueError
from scanner.model.utilization import (
    LOOKBACK_DAYS,
    AppUsage,
    DeploymentUsage,
    GpuUtilization,
    is_hosted_fine_tune,
    is_pay_per_token,
    is_provisioned,
)
from scanner.model.vmsizes import SizeCatalog
from scanner.sources.live.shapes import metric_series, metric_series_by_name

METRICS_API = "2024-02-01"
# Series per request: the API returns 10 dimension values unless told otherwise, which would
# silently drop the eleventh compute or deployment of a workspace or account.
METRICS_TOP = "1000"
GPU_METRIC = "GpuUtilizationPercentage"  # dimension ComputeName: clusters and compute instances
CLUSTER_GPU_METRIC = "GpuUtilization"  # dimension ClusterName: clusters
CPU_METRIC = "Percentage CPU"
ML_NAMESPACE = "Microsoft.MachineLearningServices/workspaces"
ACCOUNT_NAMESPACE = "Microsoft.CognitiveServices/accounts"
# Provisioned utilization (percent, Average) and calls (Count, Total), each by ModelDeploymentName.
PTU_METRICS = ("AzureOpenAIProvisionedManagedUtilizationV2", "ProvisionedUtilization")
REQUEST_METRICS = ("AzureOpenAIRequests", "ModelRequests")
# Tokens (Count, Total) by ModelDeploymentName: (input, output), older names first.
TOKEN_METRICS = (("ProcessedPromptTokens", "GeneratedTokens"), ("InputTokens", "OutputTokens"))
APP_METRICS = {"requests": "total", "replicas": "maximum"}


@dataclass
class LiveUtilization:
    """Measured utilization by resource id, for the engine's `UtilizationSource`."""

    by_id: dict[str, GpuUtilization] = field(default_factory=dict)
    deployments: dict[str, DeploymentUsage] = field(default_factory=dict)
    apps: dict[str, AppUsage] = field(default_factory=dict)

    def gpu_utilization(self, resource: Resource) -> GpuUtilization | None:
        return self.by_id.get(resource.id.lower())

    def deployment_usage(self, resource: Resource) -> DeploymentUsage | None:
        return self.deployments.get(resource.id.lower())

    def app_usage(self, resource: Resource) -> AppUsage | None:
        return self.apps.get(resource.id.lower())


def _query(
    timespan: str, metrics: str, aggregation: str, namespace: str | None = None, split_by: str | None = None
) -> dict[str, str]:
    """The parameters of one metrics request over the window, hourly: ``split_by`` asks for one
    series per value of that dimension, every one of them (``top``) rather than the API's 10."""
    params = {"metricnames": metrics, "aggregation": aggregation, "interval": "PT1H", "timespan": timespan}
    if namespace:
        params["metricnamespace"] = namespace
    if split_by:
        params |= {"$filter": f"{split_by} eq '*'", "top": METRICS_TOP}
    return params | {"api-version": METRICS_API}


def _timespan(now: dt.datetime) -> str:
    start = now - dt.timedelta(days=LOOKBACK_DAYS)
    return f"{start.strftime('%Y-%m-%dT%H:00:00Z')}/{now.strftime('%Y-%m-%dT%H:00:00Z')}"


def _size(resource: Resource) -> Any:
    if resource.type_key == T.VIRTUAL_MACHINE.lower():
        return resource.get("properties.hardwareProfile.vmSize")
    if resource.type_key == T.VM_SCALE_SET.lower():
        return resource.get("sku.name")
    return resource.get("properties.properties.vmSize")


def _nodes(resource: Resource) -> float:
    if resource.type_key == T.VM_SCALE_SET.lower():
        capacity = resource.get("sku.capacity")
        return float(capacity) if isinstance(capacity, (int, float)) else 1.0
    current = resource.get("properties.properties.currentNodeCount")
    if isinstance(current, (int, float)) and current > 0:
        return float(current)
    minimum = resource.get("properties.properties.scaleSettings.minNodeCount")
    return float(minimum) if isinstance(minimum, (int, float)) and minimum > 0 else 1.0


def collect_utilization(
    resources: list[Resource],
    sizes: SizeCatalog,
    fetch: Any,
    pool: Executor,
    find: Callable[[Any], Resource | None],
    now: dt.datetime | None = None,
) -> LiveUtilization:
    """Fetch the lookback window's hourly samples for every running GPU resource.

    ``fetch(url, params, read) -> Any | None`` is the collector's guarded GET, with
    `metric_series` reading the answer, so a failure or a sample that is not a finite number
    becomes a coverage gap and the resource stays undetermined. The requests run in ``pool``,
    the scan's one executor for reads. ``find`` looks any collected resource up by id (a
    Container App's environment, which says whether its profile has GPUs).
    """
    timespan = _timespan(now or dt.datetime.now(dt.UTC))
    window = f"{LOOKBACK_DAYS} days (hourly)"
    by_workspace: dict[str, list[Resource]] = defaultdict(list)
    by_account: dict[str, list[Resource]] = defaultdict(list)
    machines: list[Resource] = []
    apps = [r for r in resources if r.type_key == T.CONTAINER_APP.lower() and _holds_serverless_gpu(r, find)]
    for resource in resources:
        if resource.type_key == T.MODEL_DEPLOYMENT.lower():
            measured = is_provisioned(resource) or is_hosted_fine_tune(resource) or is_pay_per_token(resource)
            if resource.parent_id and measured:
                by_account[resource.parent_id].append(resource)
            continue
        size = _size(resource)
        if not isinstance(size, str) or not sizes.is_gpu(size):
            continue
        if resource.type_key == T.COMPUTE.lower():
            compute_type = str(resource.get("properties.computeType", "")).lower()
            if compute_type in ("amlcompute", "computeinstance") and resource.parent_id:
                by_workspace[resource.parent_id].append(resource)
        elif resource.type_key in (T.VIRTUAL_MACHINE.lower(), T.VM_SCALE_SET.lower()):
            machines.append(resource)
    found = LiveUtilization()

    def workspace(item: tuple[str, list[Resource]]) -> None:
        workspace_id, computes = item
        missing = _workspace_metric(workspace_id, computes, GPU_METRIC, "ComputeName")
        clusters = [c for c in missing if str(c.get("properties.computeType", "")).lower() == "amlcompute"]
        if clusters:  # a workspace that publishes the per-cluster shape instead
            _workspace_metric(workspace_id, clusters, CLUSTER_GPU_METRIC, "ClusterName")

    def _workspace_metric(workspace_id: str, computes: list[Resource], metric: str, dimension: str) -> list[Resource]:
        """Read ``metric`` split by ``dimension``; the computes it has no samples for."""
        payload = fetch(
            f"{workspace_id}/providers/Microsoft.Insights/metrics",
            _query(timespan, metric, "Average", ML_NAMESPACE, dimension),
            metric_series,
        )
        series = payload or {}
        missing = []
        for compute in computes:
            samples = series.get(compute.name.rsplit("/", 1)[-1].lower())
            if samples:
                found.by_id[compute.id.lower()] = GpuUtilization(
                    tuple(samples), 1.0, window, _nodes(compute), metric, "high"
                )
            else:
                missing.append(compute)
        return missing

    def account(item: tuple[str, list[Resource]]) -> None:
        account_id, deployments = item
        tokens = [name for pair in TOKEN_METRICS for name in pair]
        fields = {m.lower(): "average" for m in PTU_METRICS} | {m.lower(): "total" for m in (*REQUEST_METRICS, *tokens)}
        payload = fetch(
            f"{account_id}/providers/Microsoft.Insights/metrics",
            _query(
                timespan,
                ",".join((*PTU_METRICS, *REQUEST_METRICS, *tokens)),
                "Average,Total",
                ACCOUNT_NAMESPACE,
                "ModelDeploymentName",
            ),
            functools.partial(metric_series_by_name, fields=fields),
        )
        if payload is None:  # not read: a coverage gap, and the deployments stay undetermined
            return
        for deployment in deployments:
            name = deployment.name.rsplit("/", 1)[-1].lower()
            usage_metric, samples = next(
                ((m, payload[m.lower()][name]) for m in PTU_METRICS if payload.get(m.lower(), {}).get(name)),
                (PTU_METRICS[0], []),
            )
            published = [m for m in REQUEST_METRICS if m.lower() in payload]
            requests = max((sum(payload[m.lower()].get(name, [])) for m in published), default=None)
            published_tokens = [p for p in TOKEN_METRICS if p[0].lower() in payload]
            pair = next((p for p in published_tokens if payload[p[0].lower()].get(name)), None)
            pair = pair or next(iter(published_tokens), None)
            found.deployments[deployment.id.lower()] = DeploymentUsage(
                tuple(samples),
                usage_metric,
                requests,
                " / ".join(published) if published else REQUEST_METRICS[0],
                window,
                tuple(payload.get(pair[0].lower(), {}).get(name, [])) if pair else (),
                tuple(payload.get(pair[1].lower(), {}).get(name, [])) if pair else (),
                " + ".join(pair) if pair else "",
            )

    def machine(resource: Resource) -> None:
        payload = fetch(
            f"{resource.id}/providers/Microsoft.Insights/metrics",
            _query(timespan, CPU_METRIC, "Average"),
            metric_series,
        )
        samples = (payload or {}).get("")
        if samples:
            found.by_id[resource.id.lower()] = GpuUtilization(
                tuple(samples),
                1.0,
                window,
                _nodes(resource),
                f"{CPU_METRIC} (proxy: no GPU metric without in-guest monitoring)",
                "low",
            )

    def app(resource: Resource) -> None:
        payload = fetch(
            f"{resource.id}/providers/Microsoft.Insights/metrics",
            _query(timespan, "Requests,Replicas", "Total,Maximum"),
            functools.partial(metric_series_by_name, fields=APP_METRICS),
        )
        if payload is not None:
            requests = payload.get("requests")
            found.apps[resource.id.lower()] = AppUsage(
                sum(requests.get("", [])) if requests is not None else None,
                tuple(payload.get("replicas", {}).get("", [])),
                window,
            )

    list(pool.map(workspace, by_workspace.items()))
    list(pool.map(account, by_account.items()))
    list(pool.map(machine, machines))
    list(pool.map(app, apps))
    return found


def _holds_serverless_gpu(app: Resource, find: Callable[[Any], Resource | None]) -> bool:
    """A Container App that keeps a replica on a serverless GPU profile (what AZAI-208 judges);
    one that cannot be told is not measured, and the rule is undetermined there anyway."""
    try:
        return min_replicas(app) >= 1 and serverless_gpu_profile(app, find) is not None
    except UnknownValueError:
        return False
