"""Measured utilization: what a live scan read from Azure Monitor about a resource's GPUs, and
about the provisioned and fine-tuned model deployments that bill by the hour, and about the
Container Apps that keep serverless GPUs running.

Sources produce it, checks consult it through their context; IaC scans have none.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

from scanner.model.resources import Resource

PROVISIONED_SKUS = frozenset({"provisionedmanaged", "globalprovisionedmanaged", "datazoneprovisionedmanaged"})
# How far back a live scan measures: Azure Monitor's samples and a workspace's jobs.
LOOKBACK_DAYS = 7
LOOKBACK_HOURS = LOOKBACK_DAYS * 24
# Deployments billed per token, and the provisioned SKU that serves the same traffic.
PROVISIONED_FOR = {
    "globalstandard": "GlobalProvisionedManaged",
    "datazonestandard": "DataZoneProvisionedManaged",
    "standard": "ProvisionedManaged",
}
PAY_PER_TOKEN_SKUS = frozenset(PROVISIONED_FOR)
# A fine-tuned OpenAI model's name carries its job's suffix (gpt-4o-mini-2024-07-18.ft-<id>).
FINE_TUNED_MARK = ".ft-"
# Fine-tuned deployments on the Developer tier bill no hosting fee.
UNHOSTED_SKUS = frozenset({"developer"})


def is_provisioned(deployment: Resource) -> bool:
    """A deployment billed per PTU-hour (sku ProvisionedManaged, GlobalProvisionedManaged or
    DataZoneProvisionedManaged)."""
    sku = deployment.get("sku.name")
    return isinstance(sku, str) and sku.lower() in PROVISIONED_SKUS


def is_pay_per_token(deployment: Resource) -> bool:
    """A deployment billed per token (sku Standard, GlobalStandard or DataZoneStandard)."""
    sku = deployment.get("sku.name")
    return isinstance(sku, str) and sku.lower() in PAY_PER_TOKEN_SKUS


def is_hosted_fine_tune(deployment: Resource) -> bool:
    """A deployment of a fine-tuned model that bills an hourly hosting fee (any tier but Developer)."""
    model = deployment.get("properties.model.name")
    sku = deployment.get("sku.name")
    return (
        isinstance(model, str)
        and FINE_TUNED_MARK in model.lower()
        and not (isinstance(sku, str) and sku.lower() in UNHOSTED_SKUS)
    )


@dataclass(frozen=True, slots=True)
class GpuUtilization:
    """Measured utilization of one GPU resource over a lookback window, one sample per interval."""

    samples: tuple[float, ...]
    interval_hours: float
    window: str
    nodes: float
    metric: str
    confidence: str

    @property
    def measured(self) -> bool:
        """Whether there are samples and every one is a finite number: NaN compares false with
        any threshold, so a window holding one would look neither idle nor busy."""
        return bool(self.samples) and all(math.isfinite(s) for s in self.samples)

    @property
    def average_percent(self) -> float:
        return sum(self.samples) / len(self.samples) if self.samples else 0.0

    @property
    def maximum_percent(self) -> float:
        return max(self.samples, default=0.0)

    @property
    def hours(self) -> float:
        return len(self.samples) * self.interval_hours

    @property
    def node_hours(self) -> float:
        return self.hours * self.nodes

    def idle_share(self, below_percent: float) -> float:
        """The share of intervals whose utilization stayed below ``below_percent``."""
        return sum(1 for s in self.samples if s < below_percent) / len(self.samples) if self.samples else 0.0


@dataclass(frozen=True, slots=True)
class DeploymentUsage:
    """What Azure Monitor measured of one model deployment (Foundry / Azure OpenAI) over a window.

    ``utilization`` holds the hourly average provisioned utilization (PTUs consumed / PTUs
    deployed, in percent), empty when the account published none for the deployment.
    ``requests`` is the number of calls in the window, None when the account published no
    request metric at all: a published metric without a series for the deployment means it took
    no requests, since Azure Monitor splits a metric only by the dimension values that have data.
    ``input_tokens`` and ``output_tokens`` are hourly totals (hours without data left out),
    empty when the deployment took none; ``tokens_metric`` names the pair read, and is empty when
    the account published no token metric at all.
    """

    utilization: tuple[float, ...]
    utilization_metric: str
    requests: float | None
    requests_metric: str
    window: str
    input_tokens: tuple[float, ...] = ()
    output_tokens: tuple[float, ...] = ()
    tokens_metric: str = ""

    @property
    def measured(self) -> bool:
        """Whether there is a utilization sample and every one is a finite number."""
        return bool(self.utilization) and all(math.isfinite(s) for s in self.utilization)

    @property
    def average_percent(self) -> float:
        return sum(self.utilization) / len(self.utilization) if self.utilization else 0.0

    @property
    def maximum_percent(self) -> float:
        return max(self.utilization, default=0.0)


@dataclass(frozen=True, slots=True)
class AppUsage:
    """What Azure Monitor measured of one Container App over a window: ``requests`` is the
    ``Requests`` total (None when the app published no such metric), ``replicas`` the hourly
    maximum of ``Replicas``."""

    requests: float | None
    replicas: tuple[float, ...]
    window: str


class UtilizationSource(Protocol):
    """Supplies utilization metrics to checks; live scans provide one, IaC scans do not."""

    def gpu_utilization(self, resource: Resource) -> GpuUtilization | None: ...

    def deployment_usage(self, resource: Resource) -> DeploymentUsage | None: ...

    def app_usage(self, resource: Resource) -> AppUsage | None: ...
