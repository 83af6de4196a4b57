"""``azai prices refresh``: current Linux pay-as-you-go prices from the Azure Retail Prices API.

The API is public and paged (``NextPageLink``). For each region it returns every VM meter;
azai keeps, for the sizes in its table, the row that is the Linux on-demand price: type
``Consumption``, unit ``1 Hour``, no "Windows" in the product name, no "Spot" or "Low Priority"
in the SKU or meter name, the primary meter region first. The table is written atomically and
only after every region was fetched, so a failed refresh leaves the old table as it was.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from scanner.errors import InputError
from scanner.model import vmsizes
from scanner.model.pricing import Price, PriceBook, render_prices
from scanner.model.resources import normalize_location
from scanner.output import write_atomic

RETAIL_ENDPOINT = "https://prices.azure.com"
MAX_PAGES = 500


def _items(endpoint: str, region: str) -> Iterator[dict[str, Any]]:
    import requests

    url: str | None = f"{endpoint.rstrip('/')}/api/retail/prices"
    params: dict[str, str] | None = {
        "$filter": f"serviceName eq 'Virtual Machines' and armRegionName eq '{region}' and priceType eq 'Consumption'"
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


def _is_linux_on_demand(item: dict[str, Any]) -> bool:
    names = f"{item.get('skuName', '')} {item.get('meterName', '')}".lower()
    return (
        item.get("type") == "Consumption"
        and item.get("unitOfMeasure") == "1 Hour"
        and "windows" not in str(item.get("productName", "")).lower()
        and "spot" not in names
        and "low priority" not in names
    )


def fetch_region(endpoint: str, region: str, sizes: set[str]) -> dict[str, Price]:
    chosen: dict[str, dict[str, Any]] = {}
    for item in _items(endpoint, region):
        size = str(item.get("armSkuName", "")).lower()
        if size in sizes and _is_linux_on_demand(item):
            current = chosen.get(size)
            if current is None or (item.get("isPrimaryMeterRegion") and not current.get("isPrimaryMeterRegion")):
                chosen[size] = item
    today = dt.date.today().isoformat()
    return {
        size: Price(
            float(item["retailPrice"]),
            f"Azure Retail Prices API ({endpoint})",
            str(item.get("effectiveStartDate") or today)[:10],
        )
        for size, item in chosen.items()
    }


def refresh(regions: Iterable[str], output: Path, endpoint: str = RETAIL_ENDPOINT) -> tuple[int, list[str]]:
    """Fetch prices for ``regions`` and rewrite ``output`` (keeping other regions' rows).

    Returns the number of prices written and the sizes that had no price in some region.
    """
    sizes = {name.lower() for name in vmsizes.names()}
    current = PriceBook.load(str(output) if output.is_file() else None)
    wanted = [normalize_location(r) for r in regions]
    fetched = {region: fetch_region(endpoint, region, sizes) for region in wanted}
    rows = {key: price for key, price in current.prices.items() if key[1] not in fetched}
    missing = []
    for region, prices in fetched.items():
        for size, price in prices.items():
            rows[(size, region)] = price
        missing += [f"{s} ({region})" for s in sorted(sizes - set(prices))]
    write_atomic(str(output), render_prices(rows).encode("utf-8"))
    return len(rows), missing
