"""Pay-per-token prices of Azure OpenAI models and what one provisioned throughput unit (PTU)
carries, for comparing a pay-per-token deployment with its provisioned alternative.

Both tables are bundled with their source and date: ``data/token_prices.csv`` (USD per million
input and output tokens, by model, deployment SKU and region; ``*`` where the snapshot holds one
price for every region) and ``data/ptu_capacity.csv`` (input tokens per minute per PTU, how many
input tokens one output token counts as, and the smallest deployment and its step, from
Microsoft's PTU sizing guide). A model, SKU or region the tables lack has no price, and a rule
that needs one is undetermined, never priced at $0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from scanner.model.resources import normalize_location
from scanner.model.tables import bundled_rows

ANY_REGION = "*"
TOKEN_COLUMNS = ["model", "sku", "region", "usd_per_1m_input", "usd_per_1m_output", "source", "as_of"]
CAPACITY_COLUMNS = [
    "model",
    "input_tpm_per_ptu",
    "output_weight",
    "global_min_ptu",
    "global_increment",
    "regional_min_ptu",
    "regional_increment",
    "source",
    "as_of",
]


@dataclass(frozen=True, slots=True)
class TokenPrice:
    usd_per_1m_input: float
    usd_per_1m_output: float
    source: str
    as_of: str


@dataclass(frozen=True, slots=True)
class PtuCapacity:
    input_tpm_per_ptu: float
    output_weight: float  # one output token counts as this many input tokens
    global_minimum: int  # smallest Global or Data Zone deployment, and its step
    global_step: int
    regional_minimum: int  # smallest Regional deployment, and its step
    regional_step: int
    source: str
    as_of: str

    def ptus_for(self, input_tpm: float, output_tpm: float, regional: bool) -> int:
        """The smallest deployment that carries this load: the normalized tokens per minute over
        one PTU's, rounded up to the step, and never below the minimum."""
        needed = (input_tpm + self.output_weight * output_tpm) / self.input_tpm_per_ptu
        step, least = (
            (self.regional_step, self.regional_minimum) if regional else (self.global_step, self.global_minimum)
        )
        return max(least, math.ceil(needed / step) * step)


class TokenBook:
    """The bundled token prices and PTU capacities."""

    def __init__(self, prices: dict[tuple[str, str, str], TokenPrice], capacities: dict[str, PtuCapacity]) -> None:
        self.prices = prices
        self.capacities = capacities

    @classmethod
    def bundled(cls) -> TokenBook:
        prices = {
            (row["model"].lower(), row["sku"].lower(), _region(row["region"])): TokenPrice(
                float(row["usd_per_1m_input"]), float(row["usd_per_1m_output"]), row["source"], row["as_of"]
            )
            for row in bundled_rows("token_prices.csv", TOKEN_COLUMNS)
        }
        capacities = {
            row["model"].lower(): PtuCapacity(
                float(row["input_tpm_per_ptu"]),
                float(row["output_weight"]),
                int(row["global_min_ptu"]),
                int(row["global_increment"]),
                int(row["regional_min_ptu"]),
                int(row["regional_increment"]),
                row["source"],
                row["as_of"],
            )
            for row in bundled_rows("ptu_capacity.csv", CAPACITY_COLUMNS)
        }
        return cls(prices, capacities)

    def price(self, model: Any, sku: Any, region: Any) -> TokenPrice | None:
        if not all(isinstance(v, str) for v in (model, sku, region)):
            return None
        key = (model.lower(), sku.lower())
        return self.prices.get((*key, normalize_location(region))) or self.prices.get((*key, ANY_REGION))

    def capacity(self, model: Any) -> PtuCapacity | None:
        return self.capacities.get(model.lower()) if isinstance(model, str) else None


def _region(text: str) -> str:
    return ANY_REGION if text == ANY_REGION else str(normalize_location(text))
