"""VM prices and the waste estimates rules attach to findings.

Prices come from a table of (size, region) rows, each with its source and date: the bundled
``data/vm_prices.csv`` (sourced figures for eastus) or a table written by ``azai prices
refresh`` from the public Retail Prices API. A size or region without a price gives a cost of
*unknown* with the reason, never $0: a report that says "$0 wasted" because a price was missing
would be worse than no report.

Every estimate states its basis (what was multiplied), its assumptions, the price's source and
date, and a confidence. All prices are Linux pay-as-you-go retail in USD, without reservations
or savings plans, as Azure Advisor prices its recommendations.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from scanner.errors import InputError
from scanner.model import vmsizes
from scanner.model.resources import normalize_location
from scanner.model.tables import bundled_rows, table_text
from scanner.model.tokens import TokenBook

HOURS_PER_MONTH = 730.0
PRICE_COLUMNS = ["size", "region", "usd_per_hour", "source", "as_of"]
BASIS = "Linux pay-as-you-go retail price in USD; no reservations or savings plans"
# What every report says of its totals: the prices differ by table (VM, PTU, GPU-second, token),
# and a rule option may name a reservation's rate, which the finding then states.
SUMMARY_BASIS = (
    "retail prices in USD as each estimate names them: pay-as-you-go, no reservations or savings plans, "
    "unless a rule option sets a reservation rate"
)
SERVERLESS_GPU_BASIS = (
    "pay-as-you-go retail GPU price in USD, billed per second; the replica's vCPU and memory are billed on "
    "top and not counted here"
)
PTU_BASIS = "hourly (no reservation) retail price per PTU in USD; an Azure reservation would bill less"


@dataclass(frozen=True)
class Price:
    usd_per_hour: float
    source: str
    as_of: str


@dataclass(frozen=True)
class Meter:
    """How a cost from one bundled hourly table reads: its basis note, why an item without a
    known name or region has no price, the message for a pair the table lacks (with ``{item}``,
    ``{region}`` and ``{origin}``), and the unit counted (" PTU": "15 PTU x 730 h x $1/PTU-h")."""

    basis: str
    unknown: str
    missing: str
    unit: str = ""


@dataclass(frozen=True)
class Cost:
    """A monthly waste estimate, or why there is none."""

    monthly_usd: float | None
    basis: str
    assumptions: tuple[str, ...]
    confidence: str
    price: Price | None = None
    unknown_reason: str | None = None
    currency: str = "USD"


PRICE_TABLE = "vm_prices.csv"
VM = Meter(
    BASIS,
    "the VM size or region is not known before deploy",
    "no price for {item} in {region} in the {origin} (run: azai prices refresh --region {region})",
)
PTU = Meter(
    PTU_BASIS,
    "the deployment SKU or region is not known",
    "no PTU price for {item} in {region} in the bundled PTU price table",
    " PTU",
)
SERVERLESS_GPU = Meter(
    SERVERLESS_GPU_BASIS,
    "the workload profile type or region is not known",
    "no serverless GPU price for {item} in {region} in the bundled serverless GPU price table",
    " GPU",
)


def _bundled_hourly(file_name: str, key: str, value: str) -> dict[tuple[str, str], Price]:
    """A bundled table of hourly prices by item and region, each row with its source and date.
    Such tables are bundled apart from the VM table, so ``azai prices refresh`` and ``--prices``
    (VM sizes) leave them as they are."""
    rows = bundled_rows(file_name, [key, "region", value, "source", "as_of"])
    return {
        (row[key].lower(), normalize_location(row["region"])): Price(float(row[value]), row["source"], row["as_of"])
        for row in rows
    }


def _bundled_ptu_prices() -> dict[tuple[str, str], Price]:
    """Hourly prices of one provisioned throughput unit by deployment SKU and region."""
    return _bundled_hourly("ptu_prices.csv", "sku", "usd_per_ptu_hour")


def _bundled_serverless_gpu_prices() -> dict[tuple[str, str], Price]:
    """Hourly prices of one Container Apps serverless GPU by workload profile type and region."""
    return _bundled_hourly("serverless_gpu_prices.csv", "profile", "usd_per_gpu_hour")


class PriceBook:
    def __init__(
        self,
        prices: dict[tuple[str, str], Price],
        origin: str,
        ptu: dict[tuple[str, str], Price] | None = None,
        serverless_gpu: dict[tuple[str, str], Price] | None = None,
        tokens: TokenBook | None = None,
    ) -> None:
        self.prices = prices
        self.origin = origin
        self.ptu = _bundled_ptu_prices() if ptu is None else ptu
        self.serverless_gpu = _bundled_serverless_gpu_prices() if serverless_gpu is None else serverless_gpu
        self.tokens = TokenBook.bundled() if tokens is None else tokens

    @classmethod
    def empty(cls) -> PriceBook:
        """No prices at all, read from no file: every cost is unknown."""
        return cls({}, "no price table", ptu={}, serverless_gpu={}, tokens=TokenBook({}, {}))

    @classmethod
    def parse(cls, text: str, origin: str) -> PriceBook:
        reader = csv.DictReader(io.StringIO(text), restval="")  # a short row reads as empty cells
        if reader.fieldnames is None or not set(PRICE_COLUMNS) <= set(reader.fieldnames):
            raise InputError(f"{origin}: not a price table (columns {', '.join(PRICE_COLUMNS)})")
        prices: dict[tuple[str, str], Price] = {}
        for row in reader:
            try:
                value = float(row["usd_per_hour"])
            except ValueError:
                raise InputError(f"{origin}: price {row['usd_per_hour']!r} for {row['size']} is not a number") from None
            prices[(row["size"].lower(), normalize_location(row["region"]))] = Price(value, row["source"], row["as_of"])
        return cls(prices, origin)

    @classmethod
    def load(cls, path: str | None = None) -> PriceBook:
        """``path``, else the refreshed table in the user cache, else the bundled one."""
        return cls.parse(*table_text(PRICE_TABLE, "price table", path))

    def rows(self) -> list[dict[str, Any]]:
        return [
            {"size": size, "region": region, "usd_per_hour": p.usd_per_hour, "source": p.source, "as_of": p.as_of}
            for (size, region), p in sorted(self.prices.items())
        ]

    def estimate(
        self,
        item: Any,
        region: Any,
        units: float,
        hours: float,
        what: str,
        assumptions: tuple[str, ...] = (),
        confidence: str = "high",
        meter: Meter | None = None,
    ) -> Cost:
        """``units`` x ``hours`` a month x the hourly price of ``item`` in ``region``, from the
        table ``meter`` names: by default the VM table (``item`` a size); `PTU` (a provisioned
        deployment SKU) or `SERVERLESS_GPU` (a Container Apps profile type). An item or region
        that is not a known string, or a pair the table lacks, is unknown with the reason, never
        $0."""
        meter = meter or VM
        notes = (*assumptions, meter.basis)
        if not isinstance(item, str) or not isinstance(region, str):
            return Cost(None, what, notes, confidence, unknown_reason=meter.unknown)
        price = self.price(item, region, meter)
        place = normalize_location(region)
        if price is None:
            reason = meter.missing.format(item=item, region=place, origin=self.origin)
            return Cost(None, what, notes, confidence, unknown_reason=reason)
        monthly = round(units * hours * price.usd_per_hour, 2)
        per = f"{meter.unit.strip()}-h" if meter.unit else "h"
        basis = f"{what}: {units:g}{meter.unit} x {hours:g} h/month x ${price.usd_per_hour:g}/{per} ({item}, {place})"
        return Cost(monthly, basis, notes, confidence, price)

    def price(self, item: Any, region: Any, meter: Meter | None = None) -> Price | None:
        """The hourly price of ``item`` in ``region`` in the table ``meter`` names (by default the
        VM table), compared case-insensitively and by normalised region; None when either is not
        a known string or the table lacks the pair."""
        if not isinstance(item, str) or not isinstance(region, str):
            return None
        table = {VM: self.prices, PTU: self.ptu, SERVERLESS_GPU: self.serverless_gpu}[meter or VM]
        return table.get((item.lower(), normalize_location(region)))


def render_prices(rows: Mapping[tuple[str, str], Price]) -> str:
    """The CSV text of a price table, sorted by size then region, sizes spelled as the size table."""
    names = {name.lower(): name for name in vmsizes.names()}
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=PRICE_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for (size, region), price in sorted(rows.items()):
        writer.writerow(
            {
                "size": names.get(size, size),
                "region": region,
                "usd_per_hour": f"{price.usd_per_hour:g}",
                "source": price.source,
                "as_of": price.as_of,
            }
        )
    return buffer.getvalue()
