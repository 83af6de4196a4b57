"""``azai models refresh``: model retirement dates from the Models - List API of one region.

``GET /subscriptions/{sub}/providers/Microsoft.CognitiveServices/locations/{region}/models``
lists the models a subscription can deploy in a region, each with its ``lifecycleStatus`` and
``deprecation.inference``, the date it stops serving inference (the API's ``Deprecated`` state,
which it defines as retired). The read goes through the same SDK pipeline as a live scan:
read-only transport, the token only for the ARM endpoint, bounded retries and pages.

The table written holds one row per model version the API gives a date for (source: the API and
region; as-of: today), then the rows of the current table (``--output``'s, else the bundled one)
for model versions the API did not date, so a refresh never loses a sourced date. It is written
atomically and only after every page was read: a failed refresh leaves the old table as it was.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from pathlib import Path
from typing import Any

from scanner.errors import InputError
from scanner.model.resources import normalize_location
from scanner.model.retirements import RETIREMENT_COLUMNS, Retirement, RetirementTable
from scanner.output import write_atomic

MODELS_API = "2025-06-01"


def location_models(subscription: str, region: str, arm_endpoint: str | None, cloud: str = "AzureCloud") -> list[Any]:
    """Every entry of Models - List for ``region``, through the live pipeline; a failure is one line."""
    from azure.core.exceptions import AzureError

    from scanner.sources.live import shapes
    from scanner.sources.live.boundary import BoundaryError
    from scanner.sources.live.clients import ClientFactory
    from scanner.sources.live.collect import arm_collection

    factory = ClientFactory(cloud, arm_endpoint)
    url = f"/subscriptions/{subscription}/providers/Microsoft.CognitiveServices/locations/{region}/models"
    try:
        first = factory.url(url, {"api-version": MODELS_API})
        return arm_collection(factory.raw(), first, factory.boundary.limits, shapes.location_model)
    except (AzureError, BoundaryError) as exc:
        reason = factory.boundary.redactor.quote(str(getattr(exc, "message", None) or exc).splitlines()[0])
        raise InputError(f"models refresh: {region}: {reason}: the old table was kept") from None
    finally:
        factory.close()


def rows_from_api(items: list[Any], region: str, source: str, today: dt.date) -> list[Retirement]:
    """One row per model version with a ``deprecation.inference`` date."""
    rows: dict[tuple[str, str], Retirement] = {}
    for item in items:
        model = item.get("model") or {}
        name, version = model.get("name"), model.get("version")
        inference = (model.get("deprecation") or {}).get("inference")
        if not isinstance(name, str) or not isinstance(version, str) or not isinstance(inference, str):
            continue
        try:
            retires = dt.date.fromisoformat(inference[:10])
        except ValueError:
            continue
        rows[(name.lower(), version.lower())] = Retirement(name, version, "", None, retires, source, today.isoformat())
    return list(rows.values())


def refresh(
    subscription: str, region: str, output: Path, arm_endpoint: str | None = None, today: dt.date | None = None
) -> int:
    """Read ``region``'s models and rewrite ``output``; the number of rows written."""
    region = normalize_location(region)
    endpoint = (arm_endpoint or "https://management.azure.com").rstrip("/")
    items = location_models(subscription, region, arm_endpoint)
    fetched = rows_from_api(items, region, f"Models - List API ({endpoint}, {region})", today or dt.date.today())
    dated = {(r.model.lower(), r.version.lower()) for r in fetched}
    current = RetirementTable.load(str(output) if output.is_file() else None)
    kept = [r for r in current.rows if (r.model.lower(), r.version.lower()) not in dated]
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=RETIREMENT_COLUMNS, lineterminator="\n")
    writer.writeheader()
    for row in [*sorted(fetched, key=lambda r: (r.model.lower(), r.version)), *kept]:
        writer.writerow(
            {
                "model": row.model,
                "version": row.version,
                "sku": row.sku,
                "deprecation": row.deprecation.isoformat() if row.deprecation else "",
                "retirement": row.retirement.isoformat(),
                "source": row.source,
                "as_of": row.as_of,
            }
        )
    write_atomic(str(output), buffer.getvalue().encode("utf-8"))
    return len(fetched) + len(kept)
