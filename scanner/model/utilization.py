"""Measured utilization: what a live scan read from Azure Monitor about a resource's GPUs.

Sources produce it, checks consult it through their context; IaC scans have none.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

from scanner.model.resources import Resource


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


class UtilizationSource(Protocol):
    """Supplies utilization metrics to checks; live scans provide one, IaC scans do not."""

    def gpu_utilization(self, resource: Resource) -> GpuUtilization | None: ...
