"""``azai prices refresh``: current pay-as-you-go prices from the Azure Retail Prices API.

The API is public and paged (``NextPageLink``). For each region it is asked, per meter family,
for the ``Consumption`` rows of one service, and azai keeps:

- **VM sizes** (serviceName ``Virtual Machines``): for every size, the Linux on-demand row:
  unit ``1 Hour``, no "Windows" in the product name, no "Spot" or "Low Priority" in the SKU or
  meter name, the primary meter region first.
- **Container Apps serverless GPUs** (serviceName ``Azure Container Apps``): the per-second
  meters ``Standard NC A100 v4 GPU Usage`` and ``Standard NC T4 v3 GPU Usage`` (skuName
  ``Standard``, unit ``1 Second``), priced per GPU-hour (x 3600) for the workload profile types
  ``Consumption-GPU-NC24-A100`` and ``Consumption-GPU-NC8as-T4``. No public copy of the API
  holds these outside East US (docs/cost.md), so this is how other regions get them.

The user table it writes replaces the bundled rows of each family in each region it fetched
(scans read it first); a region for which the API lists no meter of a family keeps the rows it
had, so an empty answer never erases prices. The table is written atomically and only after
every region and family was fetched, so a failed refresh leaves the old table as it was. The
service is also checked on each row, not only asked for in the filter.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scanner.errors import InputError
from scanner.model import vmsizes
from scanner.model.price_tables import Pair, Price, parse_user_table, render_user_table
from scanner.model.pricing import METERS, PRICE_TABLE, SERVERLESS_GPU, VM, Meter
from scanner.model.resources import normalize_location
from scanner.model.tables import user_table_text
from scanner.output import write_atomic

RETAIL_ENDPOINT = "https://prices.azure.com"
MAX_PAGES = 500
SECONDS_PER_HOUR = 3600
# Container Apps bills a serverless GPU per second under a meter named after the GPU; the
# workload profile type names the same GPU (Container Apps billing and serverless GPU docs).
SERVERLESS_GPU_METERS = {
    "Standard NC A100 v4 GPU Usage": "Consumption-GPU-NC24-A100",
    "Standard NC T4 v3 GPU Usage": "Consumption-GPU-NC8as-T4",
}


def _is_linux_on_demand(item: dict[str, Any]) -> bool:
    names = f"{item.get('skuName', '')} {item.get('meterName', '')}".lower()
    return (
        item.get("unitOfMeasure") == "1 Hour"
        and "windows" not in str(item.get("productName", "")).lower()
        and "spot" not in names
        and "low priority" not in names
    )


def _vm_size(item: dict[str, Any]) -> str | None:
    size = str(item.get("armSkuName") or "").strip()
    return size if size and _is_linux_on_demand(item) else None


def _serverless_gpu_profile(item: dict[str, Any]) -> str | None:
    if item.get("skuName") != "Standard" or item.get("unitOfMeasure") != "1 Second":
        return None
    return SERVERLESS_GPU_METERS.get(str(item.get("meterName")))


@dataclass(frozen=True)
class Family:
    """What one meter family asks the API for and keeps from its rows."""

    meter: Meter
    service: str
    item: Callable[[dict[str, Any]], str | None]  # the table's item a row prices, or None
    per_hour: float  # the row's unit in hours: 1 for an hourly meter, 3600 for a per-second one
    expected: Callable[[], Iterable[str]]  # items whose absence in a region is worth saying


FAMILIES = (
    Family(VM, "Virtual Machines", _vm_size, 1, vmsizes.names),
    Family(
        SERVERLESS_GPU,
        "Azure Container Apps",
        _serverless_gpu_profile,
        SECONDS_PER_HOUR,
        lambda: SERVERLESS_GPU_METERS.values(),
    ),
)


def _items(endpoint: str, region: str, service: str) -> Iterator[dict[str, Any]]:
    import requests

    url: str | None = f"{endpoint.rstrip('/')}/api/retail/prices"
    params: dict[str, str] | None = {
        "$filter": f"serviceName eq '{service}' and armRegionName eq '{region}' and priceType eq 'Consumption'"
    }
    for _ in range(MAX_PAGES):
        if not url:
            return
        try:
            response = requests.get(url, params=params, timeout=60)
        except requests.RequestException as exc:
            raise InputError(f"prices refresh: {region}: {type(exc).__name__}: the old price table was kept") from None
        if response.status_code != 200:
            raise InputError(f"prices refresh: {region}: HTTP {response.status_code}: the old price table was kept")
        try:
            page = response.json()
        except ValueError:
            raise InputError(
                f"prices refresh: {region}: the API answered with invalid JSON: the old price table was kept"
            ) from None
        yield from page.get("Items") or []
        url, params = page.get("NextPageLink"), None
    raise InputError(f"prices refresh: {region}: more than {MAX_PAGES} pages: the old price table was kept")


def fetch_region(endpoint: str, region: str, family: Family) -> dict[str, Price]:
    """The family's prices in ``region`` by item as Azure spells it."""
    chosen: dict[str, dict[str, Any]] = {}
    for row in _items(endpoint, region, family.service):
        item = family.item(row) if row.get("serviceName") == family.service else None
        if item is None or row.get("type") != "Consumption":
            continue
        current = chosen.get(item)
        if current is None or (row.get("isPrimaryMeterRegion") and not current.get("isPrimaryMeterRegion")):
            chosen[item] = row
    today = dt.date.today().isoformat()
    return {
        item: Price(
            round(float(row["retailPrice"]) * family.per_hour, 6),
            f"Azure Retail Prices API ({endpoint}), meter '{row.get('meterName', '')}'",
            str(row.get("effectiveStartDate") or today)[:10],
        )
        for item, row in chosen.items()
    }


def refresh(regions: Iterable[str], output: Path, endpoint: str = RETAIL_ENDPOINT) -> tuple[int, list[str]]:
    """Fetch every family's prices in ``regions`` and rewrite the user table ``output``
    (keeping its other rows).

    Returns the number of prices written and the items of each family that had no price in
    some region ("Standard_NC6 (eastus)").
    """
    tables = _user_tables(output)
    wanted = [normalize_location(r) for r in regions]
    missing: list[str] = []
    for family in FAMILIES:
        fetched = {region: fetch_region(endpoint, region, family) for region in wanted}
        table = tables.setdefault(family.meter.name, {})
        _replace_regions(table, {region: prices for region, prices in fetched.items() if prices})
        missing += _unpriced(family, fetched)
    write_atomic(str(output), render_user_table({k: v for k, v in tables.items() if v}).encode("utf-8"))
    return sum(len(rows) for rows in tables.values()), missing


def _user_tables(output: Path) -> dict[str, dict[Pair, Price]]:
    """The rows the user table ``output`` holds already, by meter family (none when there is no
    such file): a refresh replaces only the regions it fetched and must keep the others."""
    found = user_table_text(PRICE_TABLE, "price table", str(output)) if output.is_file() else None
    return parse_user_table(*found, {meter.name for meter in METERS}) if found else {}


def _unpriced(family: Family, fetched: dict[str, dict[str, Price]]) -> list[str]:
    """The family's expected items the API gave no price in a fetched region, as "item (region)":
    their costs stay unknown, and ``azai prices refresh`` says so rather than passing quietly."""
    missing: list[str] = []
    for region, prices in fetched.items():
        have = {item.lower() for item in prices}
        missing += [f"{item} ({region})" for item in sorted(family.expected()) if item.lower() not in have]
    return missing


def _replace_regions(table: dict[Pair, Price], fetched: dict[str, dict[str, Price]]) -> None:
    """Every row of the regions in ``fetched`` replaced by what was fetched there."""
    for key in [key for key in table if key[1] in fetched]:
        del table[key]
    table.update({(item, region): price for region, prices in fetched.items() for item, price in prices.items()})
