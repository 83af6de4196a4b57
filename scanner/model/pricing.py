"""Prices and the waste estimates rules attach to findings.

Prices come from tables of (item, region) rows, each with its source and date, one table per
meter family (`Meter`): VM sizes, provisioned throughput units, Container Apps serverless GPUs
and fine-tuned model hosting. Each is bundled (``data/*prices*.csv``, see docs/cost.md for
their public sources), and a user table (written by ``azai prices refresh`` to the user cache,
or named by ``--prices``) replaces the bundled rows of every region it names. A size or region
without a price gives a cost of *unknown* with the reason, never $0: a report that says "$0
wasted" because a price was missing would be worse than no report.

The bundled tables are read on the first look-up that needs them, so a scan that prices
nothing (and ``azai --version``) reads none of them.

Every estimate states its basis (what was multiplied), its assumptions, the price's source and
date, and a confidence. All prices are Linux pay-as-you-go retail in USD, without reservations
or savings plans, as Azure Advisor prices its recommendations.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from scanner.model.price_tables import Pair, WideTable, parse_keyed, parse_user_table
from scanner.model.price_tables import Price as Price  # rules name a price by this module
from scanner.model.resources import normalize_location
from scanner.model.tables import bundled_rows, bundled_text, user_table_text
from scanner.model.tokens import TokenBook

HOURS_PER_MONTH = 730.0
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
FINE_TUNE_BASIS = "hourly retail hosting price of a fine-tuned model deployment in USD; tokens are billed on top"
REFRESH_HINT = " (run: azai prices refresh --region {region})"
BUNDLED = "bundled price table"


@dataclass(frozen=True)
class Meter:
    """A meter family: the ``meter`` name its rows carry in a user table, and how a cost from it
    reads (its basis note, why an item without a known name or region has no price, the message
    for a pair the table lacks, with ``{item}``, ``{region}`` and ``{origin}``), and the unit
    counted (" PTU": "15 PTU x 730 h x $1/PTU-h"). `BUNDLED_TABLES` names its bundled table."""

    name: str
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
    "vm",
    BASIS,
    "the VM size or region is not known before deploy",
    "no price for {item} in {region} in the {origin}" + REFRESH_HINT,
)
PTU = Meter(
    "ptu",
    PTU_BASIS,
    "the deployment SKU or region is not known",
    "no PTU price for {item} in {region} in the {origin}",
    " PTU",
)
SERVERLESS_GPU = Meter(
    "serverless-gpu",
    SERVERLESS_GPU_BASIS,
    "the workload profile type or region is not known",
    "no serverless GPU price for {item} in {region} in the {origin}" + REFRESH_HINT,
    " GPU",
)
FINE_TUNE_HOSTING = Meter(
    "fine-tune-hosting",
    FINE_TUNE_BASIS,
    "the fine-tuned model's base model, deployment type or region is not known",
    "no hosting price for fine-tuned {item} in {region} in the {origin}",
    " deployment",
)
METERS = (VM, PTU, SERVERLESS_GPU, FINE_TUNE_HOSTING)


def fine_tune_item(model: str, sku: str) -> str:
    """How the fine-tune hosting table names a price: the base model and the deployment type."""
    return f"{model} {sku}"


@cache
def _bundled_vm() -> WideTable:
    return WideTable(lambda: bundled_text(PRICE_TABLE), f"bundled {PRICE_TABLE}")


@cache
def _bundled_hourly(file_name: str, keys: tuple[str, ...], value: str) -> dict[Pair, Price]:
    """A small bundled table of hourly prices by item and region, lower-cased for look-ups."""
    rows = parse_keyed(bundled_rows(file_name, [*keys, "region", value, "source", "as_of"]), list(keys), value)
    return {(item.lower(), region): price for (item, region), price in rows.items()}


# Each meter's bundled table, as a look-up of (item lower-cased, normalised region).
BUNDLED_TABLES: dict[Meter, Callable[[str, str], Price | None]] = {
    VM: lambda item, region: _bundled_vm().get(item, region),
    PTU: lambda item, region: _bundled_hourly("ptu_prices.csv", ("sku",), "usd_per_ptu_hour").get((item, region)),
    SERVERLESS_GPU: lambda item, region: _bundled_hourly(
        "serverless_gpu_prices.csv", ("profile",), "usd_per_gpu_hour"
    ).get((item, region)),
    FINE_TUNE_HOSTING: lambda item, region: _bundled_hourly(
        "fine_tune_hosting_prices.csv", ("model", "sku"), "usd_per_hour"
    ).get((item, region)),
}


class _Layer:
    """A user table's rows of one meter, which speak for every region they name."""

    def __init__(self, rows: Mapping[Pair, Price], origin: str) -> None:
        self.rows = {(item.lower(), region): price for (item, region), price in rows.items()}
        self.regions = {region for _, region in self.rows}
        self.origin = origin


class PriceBook:
    """Every meter's prices: a user table's rows for the regions it names, else the bundled
    rows (none at all for `empty`), and the token prices AZAI-209 compares."""

    def __init__(
        self,
        user: Mapping[str, Mapping[Pair, Price]] | None = None,
        origin: str = BUNDLED,
        bundled: bool = True,
    ) -> None:
        self.layers = {meter: _Layer((user or {}).get(meter.name, {}), origin) for meter in METERS}
        self.bundled = bundled
        self._tokens: TokenBook | None = None

    @property
    def tokens(self) -> TokenBook:
        """The token prices and PTU capacities, read on first use."""
        if self._tokens is None:
            self._tokens = TokenBook.bundled() if self.bundled else TokenBook({}, {})
        return self._tokens

    @classmethod
    def empty(cls) -> PriceBook:
        """No prices at all, read from no file: every cost is unknown."""
        return cls(origin="empty price table", bundled=False)

    @classmethod
    def parse(cls, text: str, origin: str) -> PriceBook:
        """The bundled prices under the user table ``text`` (read from ``origin``)."""
        return cls(parse_user_table(text, origin, {meter.name for meter in METERS}), origin)

    @classmethod
    def load(cls, path: str | None = None) -> PriceBook:
        """The bundled prices under ``path``, else under the refreshed table in the user cache."""
        found = user_table_text(PRICE_TABLE, "price table", path)
        return cls.parse(*found) if found else cls()

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
        deployment SKU), `SERVERLESS_GPU` (a Container Apps profile type) or `FINE_TUNE_HOSTING`
        (`fine_tune_item`). An item or region that is not a known string, or a pair the table
        lacks, is unknown with the reason, never $0."""
        meter = meter or VM
        notes = (*assumptions, meter.basis)
        if not isinstance(item, str) or not isinstance(region, str):
            return Cost(None, what, notes, confidence, unknown_reason=meter.unknown)
        price, origin = self._lookup(item, region, meter)
        place = normalize_location(region)
        if price is None:
            reason = meter.missing.format(item=item, region=place, origin=origin)
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
        return self._lookup(item, region, meter or VM)[0]

    def _lookup(self, item: str, region: str, meter: Meter) -> tuple[Price | None, str]:
        """The price and the table that spoke for the region: the user table where it names
        the region, else the bundled one."""
        key = (item.lower(), normalize_location(region))
        layer = self.layers[meter]
        if key[1] in layer.regions:
            return layer.rows.get(key), layer.origin
        if not self.bundled:
            return None, layer.origin
        return BUNDLED_TABLES[meter](*key), BUNDLED
