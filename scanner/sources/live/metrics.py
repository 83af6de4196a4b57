"""Utilization from Azure Monitor for the cost rules (AZAI-202, AZAI-206, AZAI-208, AZAI-209),
read only for the resources those rules judge, each metric with an aggregation it publishes
(`monitor`: how Azure Monitor answers, and how azai copes).

AML publishes GPU utilization on the *workspace*, in two shapes (Learn, supported metrics for
Microsoft.MachineLearningServices/workspaces): ``GpuUtilizationPercentage`` with dimension
``ComputeName`` (also RunId, InstanceId, DeviceId), and ``GpuUtilization`` with dimension
``ClusterName`` (also Scenario, runId, NodeId, DeviceId). One request per workspace asks for the
first, split by compute; only when a GPU cluster is missing from its answer does a second
request ask for the second, split by cluster. They are two requests because a ``$filter`` on a
dimension one of the named metrics lacks fails the whole request with a 400 ("does not support
requested dimension combination").

VMs and scale sets have no ARM GPU metric without in-guest monitoring (AMA/DCGM); for them
``Percentage CPU`` is used as a proxy, as Azure Advisor does, and the evidence says so with low
confidence.

Model deployments (Microsoft.CognitiveServices/accounts/deployments) are measured on their
*account*, split by ``ModelDeploymentName``: the provisioned utilization (Average: both its
older ``AzureOpenAIProvisionedManagedUtilizationV2`` and its Foundry ``ProvisionedUtilization``
name) in one request, only for an account holding a provisioned deployment, and the request
count and input and output tokens (Total: ``AzureOpenAIRequests``/``ModelRequests``,
``ProcessedPromptTokens``/``GeneratedTokens`` and ``InputTokens``/``OutputTokens``) in another.
An account publishes some of these names and not others; `monitor` asks only for those it does.

Container Apps held at one replica or more on a serverless GPU profile (AZAI-208) are measured
on the app itself: ``Requests`` (Total) and ``Replicas`` (Maximum), one request each. Their
findings stand on the app's configuration; the metrics only add whether it served anyone.

A metric that was not measured (not published, an ``errorCode``, a failed request) leaves the
resource out, or its field None, which makes the rule undetermined, never passing.
"""

from __future__ import annotations

import datetime as dt
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
from scanner.sources.live.monitor import Ask, MetricsReader, Series

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
DEPLOYMENT = "ModelDeploymentName"
WORKSPACE_GPU = Ask((GPU_METRIC,), "Average", ML_NAMESPACE, "ComputeName")
CLUSTER_GPU = Ask((CLUSTER_GPU_METRIC,), "Average", ML_NAMESPACE, "ClusterName")
MACHINE_CPU = Ask((CPU_METRIC,), "Average")
ACCOUNT_UTILIZATION = Ask(PTU_METRICS, "Average", ACCOUNT_NAMESPACE, DEPLOYMENT)
ACCOUNT_COUNTS = Ask(
    (*REQUEST_METRICS, *(name for pair in TOKEN_METRICS for name in pair)), "Total", ACCOUNT_NAMESPACE, DEPLOYMENT
)
APP_REQUESTS = Ask(("Requests",), "Total")
APP_REPLICAS = Ask(("Replicas",), "Maximum")


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


def timespan(now: dt.datetime) -> str:
    """The lookback window ending at ``now``'s hour, as Azure Monitor's ``timespan``."""
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


WINDOW = f"{LOOKBACK_DAYS} days (hourly)"


@dataclass
class Measured:
    """The resources a scan measures, grouped by what they are measured on."""

    by_workspace: dict[str, list[Resource]] = field(default_factory=lambda: defaultdict(list))
    by_account: dict[str, list[Resource]] = field(default_factory=lambda: defaultdict(list))
    machines: list[Resource] = field(default_factory=list)

    def add(self, resource: Resource, sizes: SizeCatalog) -> None:
        """A provisioned, fine-tuned or pay-per-token deployment goes under its account; a GPU
        cluster or compute instance under its workspace; a GPU VM or scale set on its own."""
        if resource.type_key == T.MODEL_DEPLOYMENT.lower():
            measured = is_provisioned(resource) or is_hosted_fine_tune(resource) or is_pay_per_token(resource)
            if resource.parent_id and measured:
                self.by_account[resource.parent_id].append(resource)
            return
        size = _size(resource)
        if not isinstance(size, str) or not sizes.is_gpu(size):
            return
        if resource.type_key == T.COMPUTE.lower():
            compute_type = str(resource.get("properties.computeType", "")).lower()
            if compute_type in ("amlcompute", "computeinstance") and resource.parent_id:
                self.by_workspace[resource.parent_id].append(resource)
        elif resource.type_key in (T.VIRTUAL_MACHINE.lower(), T.VM_SCALE_SET.lower()):
            self.machines.append(resource)


def collect_utilization(
    resources: list[Resource],
    sizes: SizeCatalog,
    reader: MetricsReader,
    pool: Executor,
    find: Callable[[Any], Resource | None],
) -> LiveUtilization:
    """The lookback window's hourly samples for every running GPU resource, provisioned,
    fine-tuned or pay-per-token deployment, and serverless GPU Container App among
    ``resources``, read through ``reader`` in ``pool`` (the scan's one executor for reads).
    ``find`` looks any collected resource up by id (an account or workspace a child is measured
    on; a Container App's environment, which says whether its profile has GPUs)."""
    measured = Measured()
    for resource in resources:
        measured.add(resource, sizes)
    apps = [r for r in resources if r.type_key == T.CONTAINER_APP.lower() and _holds_serverless_gpu(r, find)]
    found = LiveUtilization()
    list(pool.map(lambda item: _workspace(reader, find, item[0], item[1], found), measured.by_workspace.items()))
    list(pool.map(lambda item: _account(reader, find, item[0], item[1], found), measured.by_account.items()))
    list(pool.map(lambda machine: _machine(reader, machine, found), measured.machines))
    list(pool.map(lambda app: _app(reader, app, found), apps))
    return found


def _parent(find: Callable[[Any], Resource | None], parent_id: str, child: Resource) -> Resource:
    """The resource a child is measured on; when it was not collected, a bare one with its id
    and type (the metrics request needs only those)."""
    parent = find(parent_id)
    if parent is not None:
        return parent
    parent_type = child.type.rsplit("/", 1)[0]
    return Resource(id=parent_id, type=parent_type, name=parent_id.rsplit("/", 1)[-1], body={}, origin=child.origin)


def _workspace(
    reader: MetricsReader,
    find: Callable[[Any], Resource | None],
    workspace_id: str,
    computes: list[Resource],
    found: LiveUtilization,
) -> None:
    """A workspace's GPU computes, by compute; the clusters missing from that, by cluster."""
    workspace = _parent(find, workspace_id, computes[0])
    missing = _gpu_series(reader.read(workspace, WORKSPACE_GPU), computes, GPU_METRIC, found)
    clusters = [c for c in missing if str(c.get("properties.computeType", "")).lower() == "amlcompute"]
    if clusters:  # a workspace that publishes the per-cluster shape instead
        _gpu_series(reader.read(workspace, CLUSTER_GPU), clusters, CLUSTER_GPU_METRIC, found)


def _gpu_series(
    answer: dict[str, Series] | None, computes: list[Resource], metric: str, found: LiveUtilization
) -> list[Resource]:
    """Record the computes ``metric`` has samples for; return those it has none for."""
    series = (answer or {}).get(metric.lower(), {})
    missing = []
    for compute in computes:
        samples = series.get(compute.name.rsplit("/", 1)[-1].lower())
        if samples:
            utilization = GpuUtilization(tuple(samples), 1.0, WINDOW, _nodes(compute), metric, "high")
            found.by_id[compute.id.lower()] = utilization
        else:
            missing.append(compute)
    return missing


def _account(
    reader: MetricsReader,
    find: Callable[[Any], Resource | None],
    account_id: str,
    deployments: list[Resource],
    found: LiveUtilization,
) -> None:
    """An account's deployments: utilization only when one is provisioned, and the counts.
    When the counts could not be read at all, the deployments stay unmeasured (undetermined)."""
    account = _parent(find, account_id, deployments[0])
    utilization = reader.read(account, ACCOUNT_UTILIZATION) if any(map(is_provisioned, deployments)) else {}
    counts = reader.read(account, ACCOUNT_COUNTS)
    if counts is None:
        return
    for deployment in deployments:
        name = deployment.name.rsplit("/", 1)[-1].lower()
        found.deployments[deployment.id.lower()] = deployment_usage(name, utilization or {}, counts)


def deployment_usage(name: str, utilization: dict[str, Series], counts: dict[str, Series]) -> DeploymentUsage:
    """What the account's measured metrics say of deployment ``name``. A metric measured
    (errorCode Success) without a series for the deployment counts zero for it, since Azure
    Monitor splits only by dimension values that had data; a metric not measured counts
    nothing: with no request metric measured, ``requests`` is None (undetermined)."""
    usage_metric, samples = next(
        ((m, utilization[m.lower()][name]) for m in PTU_METRICS if utilization.get(m.lower(), {}).get(name)),
        (PTU_METRICS[0], []),
    )
    measured = [m for m in REQUEST_METRICS if m.lower() in counts]
    requests = max((sum(counts[m.lower()].get(name, [])) for m in measured), default=None)
    pairs = [p for p in TOKEN_METRICS if p[0].lower() in counts and p[1].lower() in counts]
    pair = next((p for p in pairs if counts[p[0].lower()].get(name)), next(iter(pairs), None))
    return DeploymentUsage(
        tuple(samples),
        usage_metric,
        requests,
        " / ".join(measured) if measured else REQUEST_METRICS[0],
        WINDOW,
        tuple(counts[pair[0].lower()].get(name, [])) if pair else (),
        tuple(counts[pair[1].lower()].get(name, [])) if pair else (),
        " + ".join(pair) if pair else "",
    )


def _machine(reader: MetricsReader, resource: Resource, found: LiveUtilization) -> None:
    samples = (reader.read(resource, MACHINE_CPU) or {}).get(CPU_METRIC.lower(), {}).get("")
    if samples:
        found.by_id[resource.id.lower()] = GpuUtilization(
            tuple(samples),
            1.0,
            WINDOW,
            _nodes(resource),
            f"{CPU_METRIC} (proxy: no GPU metric without in-guest monitoring)",
            "low",
        )


def _app(reader: MetricsReader, resource: Resource, found: LiveUtilization) -> None:
    """An app's requests and replicas; requests None when they were not measured."""
    requests = reader.read(resource, APP_REQUESTS)
    if requests is None:
        return
    replicas = (reader.read(resource, APP_REPLICAS) or {}).get("replicas", {}).get("", [])
    total = requests.get("requests")
    count = sum(total.get("", [])) if total is not None else None
    found.apps[resource.id.lower()] = AppUsage(count, tuple(replicas), WINDOW)


def _holds_serverless_gpu(app: Resource, find: Callable[[Any], Resource | None]) -> bool:
    """A Container App that keeps a replica on a serverless GPU profile (what AZAI-208 judges);
    one that cannot be told is not measured, and the rule is undetermined there anyway."""
    try:
        return min_replicas(app) >= 1 and serverless_gpu_profile(app, find) is not None
    except UnknownValueError:
        return False
