"""Utilization from Azure Monitor for AZAI-202, fetched in batches and only for GPU resources.

AML publishes GPU utilization on the *workspace* (``GpuUtilizationPercentage``, dimension
``ComputeName``), so one request covers every GPU compute of a workspace. VMs and scale sets
have no ARM GPU metric without in-guest monitoring (AMA/DCGM); for them ``Percentage CPU`` is
used as a proxy, as Azure Advisor does, and the evidence says so with low confidence.
Missing metrics leave a resource out, which makes the rule undetermined, never passing.
"""

from __future__ import annotations

import datetime as dt
from collections import defaultdict
from concurrent.futures import Executor
from dataclasses import dataclass, field
from typing import Any

from scanner.model import azure_types as T
from scanner.model.resources import Resource
from scanner.model.utilization import GpuUtilization
from scanner.model.vmsizes import SizeCatalog
from scanner.sources.live.shapes import metric_series

METRICS_API = "2024-02-01"
LOOKBACK_DAYS = 7
GPU_METRIC = "GpuUtilizationPercentage"
CPU_METRIC = "Percentage CPU"
ML_NAMESPACE = "Microsoft.MachineLearningServices/workspaces"


@dataclass
class LiveUtilization:
    """Measured utilization by resource id, for the engine's `UtilizationSource`."""

    by_id: dict[str, GpuUtilization] = field(default_factory=dict)

    def gpu_utilization(self, resource: Resource) -> GpuUtilization | None:
        return self.by_id.get(resource.id.lower())


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
    resources: list[Resource], sizes: SizeCatalog, fetch: Any, pool: Executor, now: dt.datetime | None = None
) -> LiveUtilization:
    """Fetch the lookback window's hourly samples for every running GPU resource.

    ``fetch(url, params, read) -> Any | None`` is the collector's guarded GET, with
    `metric_series` reading the answer, so a failure or a sample that is not a finite number
    becomes a coverage gap and the resource stays undetermined. The requests run in ``pool``,
    the scan's one executor for reads.
    """
    timespan = _timespan(now or dt.datetime.now(dt.UTC))
    window = f"{LOOKBACK_DAYS} days (hourly)"
    by_workspace: dict[str, list[Resource]] = defaultdict(list)
    machines: list[Resource] = []
    for resource in resources:
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
        payload = fetch(
            f"{workspace_id}/providers/Microsoft.Insights/metrics",
            {
                "metricnames": GPU_METRIC,
                "aggregation": "Average",
                "interval": "PT1H",
                "timespan": timespan,
                "metricnamespace": ML_NAMESPACE,
                "$filter": "ComputeName eq '*'",
                "api-version": METRICS_API,
            },
            metric_series,
        )
        series = payload or {}
        for compute in computes:
            samples = series.get(compute.name.rsplit("/", 1)[-1].lower())
            if samples:
                found.by_id[compute.id.lower()] = GpuUtilization(
                    tuple(samples), 1.0, window, _nodes(compute), GPU_METRIC, "high"
                )

    def machine(resource: Resource) -> None:
        payload = fetch(
            f"{resource.id}/providers/Microsoft.Insights/metrics",
            {
                "metricnames": CPU_METRIC,
                "aggregation": "Average",
                "interval": "PT1H",
                "timespan": timespan,
                "api-version": METRICS_API,
            },
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

    list(pool.map(workspace, by_workspace.items()))
    list(pool.map(machine, machines))
    return found
