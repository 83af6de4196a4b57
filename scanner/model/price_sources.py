"""Rebuild the bundled price tables from public, dated copies of the Azure Retail Prices API.

The scanner cannot reach the Retail Prices API while it builds, and a table of prices typed in
by hand could not be checked. So the bundled rows come from files anyone can fetch and diff:

- **VM sizes** (``data/vm_prices.csv``): the price map that Microsoft's Karpenter provider for
  AKS generates from the Retail Prices API and commits,
  ``pkg/providers/pricing/zz_generated.pricing.go`` in ``Azure/karpenter-provider-azure``,
  every size in every region it lists. Its generator (``hack/code/prices_gen/main.go`` and
  ``FetchPricing`` in ``pkg/providers/pricing/pricing.go`` at the commit below) asks for
  ``priceType eq 'Consumption'``, ``currencyCode eq 'USD'``, serviceFamily ``Compute`` and
  serviceName ``Virtual Machines`` per region, drops products ending in " Windows", meters
  ending in " Low Priority" and SKUs ending in " Spot": the Linux pay-as-you-go price that
  ``azai prices refresh`` keeps. Its map also holds dedicated-host types (``Dsv3_Type1``) and a
  placeholder, which are not VM sizes and are left out.
- **Provisioned throughput and fine-tuned model hosting** (``data/ptu_prices.csv``,
  ``data/fine_tune_hosting_prices.csv``): the Retail Prices API rows cached in the
  ``azure-genai-prices`` 0.2.0 package (``azure_genai_prices/data/snapshot.json``, fetched
  2026-08-11), the copy ``data/token_prices.csv`` already cites. The snapshot groups rows by
  product, meter, unit, price and effective date with their regions, so each region's price of
  a meter is the row with the latest effective date.

Run ``python -m scanner.model.price_sources vm zz_generated.pricing.go`` (the file at the commit
named in ``KARPENTER_COMMIT``) or ``python -m scanner.model.price_sources models snapshot.json``
to rewrite the tables. A row already in a table is kept where it is newer than the copy, or
where the copy lacks its pair: a rebuild must not silently replace a figure someone sourced on
purpose, nor drop one the copy no longer lists.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scanner.model.price_tables import Pair, Price, parse_keyed, parse_wide, render_keyed, render_wide
from scanner.model.resources import normalize_location
from scanner.model.tables import bundled_rows

KARPENTER_REPO = "Azure/karpenter-provider-azure"
KARPENTER_PATH = "pkg/providers/pricing/zz_generated.pricing.go"
KARPENTER_COMMIT = "2b431da153a6a92b705c18046512c60b1631b682"
KARPENTER_GENERATED_AT = "2026-06-18"
KARPENTER_SOURCE = f"https://github.com/{KARPENTER_REPO}/blob/{KARPENTER_COMMIT}/{KARPENTER_PATH}"

SNAPSHOT_FETCHED_AT = "2026-08-11"
SNAPSHOT_COPY = (
    "as cached in azure-genai-prices 0.2.0 data/snapshot.json "
    f"(https://github.com/nikklavzar/azure-genai-prices, fetched {SNAPSHOT_FETCHED_AT})"
)

_REGION = re.compile(r'initialOnDemandPrices\["([^"]+)"\]\s*=\s*map\[string\]float64\{')
_ENTRY = re.compile(r'^\s*"([^"]+)":\s*([0-9.]+),\s*$')
_GENERATED = re.compile(r"// generated at (\d{4}-\d{2}-\d{2})T")
# VM sizes are spelled Standard_* (and the legacy Basic_A*); the map's other keys are
# dedicated-host types (Dsv3_Type1, "Fsv2 Type3") and a placeholder.
_VM_SIZE = re.compile(r"^(Standard|Basic)_\S+$")
# Regions of sovereign clouds, and the snapshot's non-regions, are not public regions.
_NOT_PUBLIC = re.compile(r"^(usgov|usdod|china|global$|$)")

PTU_METERS = {
    "Provisioned Managed Global Unit": "GlobalProvisionedManaged",
    "Provisioned Managed Data Zone Unit": "DataZoneProvisionedManaged",
    "Provisioned Managed Regional Unit": "ProvisionedManaged",
}
PTU_PRODUCT = "Azure OpenAI"
PTU_COLUMNS = ["sku", "region", "usd_per_ptu_hour", "source", "as_of"]

# Fine-tuned hosting meters name the base model and the deployment type in several spellings
# ("gpt-4o-mini-0718-FT-Hstng-regnl", "4o mini 0718 ft hosting Dz", "o4-mini-ft hosting global").
# After lower-casing and turning spaces into hyphens, the part before "-ft-hstng-" or
# "-ft-hosting-" is looked up here; gpt-35-turbo's 4K and 16K meters are left out, since a
# deployment's model name does not say which context length it bills.
FINE_TUNE_MODELS = {
    "gpt-4o-0806": "gpt-4o",
    "4o-0806": "gpt-4o",
    "gpt-4o-mini-0718": "gpt-4o-mini",
    "4o-mini-0718": "gpt-4o-mini",
    "gpt-4.1": "gpt-4.1",
    "4.1": "gpt-4.1",
    "gpt-4.1-mini": "gpt-4.1-mini",
    "4.1-mini": "gpt-4.1-mini",
    "gpt-4.1-nano": "gpt-4.1-nano",
    "4.1-nano": "gpt-4.1-nano",
    "o4-mini": "o4-mini",
    "o3-mini": "o3-mini",
    "gpt-4-8k": "gpt-4",
    "davinci-002": "davinci-002",
    "babbage-002": "babbage-002",
}
FINE_TUNE_TIERS = {
    "glbl": "GlobalStandard",
    "global": "GlobalStandard",
    "dz": "DataZoneStandard",
    "regnl": "Standard",
    "regional": "Standard",
}
_FINE_TUNE_METER = re.compile(r"^(?P<model>.+?)-ft-(?:hstng|hosting)-(?P<tier>[a-z]+)-unit$")
FINE_TUNE_PRODUCTS = frozenset({"Azure OpenAI", "Azure OpenAI PP FT GPT4s", "Azure OpenAI Reasoning"})
FINE_TUNE_COLUMNS = ["model", "sku", "region", "usd_per_hour", "source", "as_of"]


def parse_karpenter(text: str) -> tuple[str | None, dict[str, dict[str, float]]]:
    """The generation date and ``{region: {size: usd_per_hour}}`` of a Karpenter price file,
    VM sizes only, spelled as the file spells them (surrounding blanks removed).

    The file is Go source, but only its two line shapes matter: a region's map header and a
    ``"size": price,`` entry; anything else (comments, braces) is skipped.
    """
    generated = _GENERATED.search(text)
    prices: dict[str, dict[str, float]] = {}
    region: str | None = None
    for line in text.splitlines():
        header = _REGION.search(line)
        if header:
            region = normalize_location(header.group(1))
            prices.setdefault(region, {})
            continue
        entry = _ENTRY.match(line)
        if entry and region is not None and _VM_SIZE.match(entry.group(1).strip()):
            prices[region][entry.group(1).strip()] = float(entry.group(2))
    return (generated.group(1) if generated else None), prices


def _newer(current: Price, as_of: str) -> bool:
    """A dated row later than ``as_of`` (an ``undated`` row is never newer)."""
    return current.as_of[:1].isdigit() and current.as_of > as_of


def merge(current: Mapping[Pair, Price], fetched: Mapping[Pair, Price]) -> dict[Pair, Price]:
    """``fetched``, except where ``current`` holds a newer row of the pair; and every pair of
    ``current`` that ``fetched`` lacks. Items compare case-insensitively; the copy's spelling
    wins for the pairs it prices."""
    kept = {(item.lower(), region): (item, region, price) for (item, region), price in current.items()}
    rows: dict[Pair, Price] = {}
    for (item, region), price in fetched.items():
        old = kept.pop((item.lower(), region), None)
        rows[(item, region)] = old[2] if old is not None and _newer(old[2], price.as_of) else price
    rows.update({(item, region): price for item, region, price in kept.values()})
    return rows


def karpenter_prices(fetched: Mapping[str, Mapping[str, float]]) -> dict[Pair, Price]:
    """The Karpenter file's prices by (size, region), each citing the file at its commit."""
    return {
        (size, region): Price(usd, KARPENTER_SOURCE, KARPENTER_GENERATED_AT)
        for region, table in fetched.items()
        for size, usd in table.items()
    }


@dataclass(frozen=True, slots=True)
class SnapshotPrice:
    """One region's price of one meter in the snapshot, with what identifies it."""

    item: str
    region: str
    usd_per_hour: float
    meter: str
    product: str
    unit: str
    effective: str

    @property
    def source(self) -> str:
        return (
            f"Retail Prices API meter '{self.meter}' (productName {self.product}, unitOfMeasure {self.unit}, "
            f"effective {self.effective}), {SNAPSHOT_COPY}"
        )


ItemOf = Callable[[Mapping[str, Any]], str | None]


def _snapshot_rows(items: Iterable[Mapping[str, Any]], item_of: ItemOf) -> Iterator[SnapshotPrice]:
    """Each public region of each snapshot row that ``item_of`` names an item for, and that was
    in effect when the snapshot was fetched."""
    for row in items:
        item = item_of(row)
        if item is None or str(row.get("effectiveStartDate", ""))[:10] > SNAPSHOT_FETCHED_AT:
            continue
        for region in row.get("regions") or []:
            place = normalize_location(str(region))
            if not _NOT_PUBLIC.match(place):
                yield SnapshotPrice(
                    item,
                    place,
                    float(row["retailPrice"]),
                    str(row["meterName"]),
                    str(row["productName"]),
                    str(row["unitOfMeasure"]),
                    str(row.get("effectiveStartDate", ""))[:10],
                )


def latest(prices: Iterable[SnapshotPrice]) -> tuple[dict[Pair, SnapshotPrice], list[Pair]]:
    """Each (item, region)'s price with the latest effective date, and the pairs whose latest
    rows disagree (left out: the snapshot does not say which is current)."""
    chosen: dict[Pair, SnapshotPrice] = {}
    clashes: set[Pair] = set()
    for price in prices:
        key = (price.item, price.region)
        old = chosen.get(key)
        if old is None or price.effective > old.effective:
            chosen[key] = price
            clashes.discard(key)
        elif price.effective == old.effective and price.usd_per_hour != old.usd_per_hour:
            clashes.add(key)
    return {k: v for k, v in chosen.items() if k not in clashes}, sorted(clashes)


def ptu_item(row: Mapping[str, Any]) -> str | None:
    """The deployment SKU a snapshot row prices per PTU-hour, or None."""
    if row.get("productName") != PTU_PRODUCT or row.get("unitOfMeasure") != "1/Hour":
        return None
    return PTU_METERS.get(str(row.get("meterName")))


def fine_tune_item(row: Mapping[str, Any]) -> str | None:
    """``"<model> <deployment SKU>"`` of a fine-tuned model hosting row, or None."""
    if row.get("productName") not in FINE_TUNE_PRODUCTS or row.get("unitOfMeasure") != "1 Hour":
        return None
    match = _FINE_TUNE_METER.match(str(row.get("meterName", "")).lower().replace(" ", "-"))
    if match is None or match["model"] not in FINE_TUNE_MODELS or match["tier"] not in FINE_TUNE_TIERS:
        return None
    return f"{FINE_TUNE_MODELS[match['model']]} {FINE_TUNE_TIERS[match['tier']]}"


def snapshot_prices(items: Iterable[Mapping[str, Any]], item_of: ItemOf) -> tuple[dict[Pair, Price], list[Pair]]:
    """The snapshot's prices of the meter family ``item_of`` recognises, dated when the
    snapshot was fetched (the effective date is in the source), and the pairs left out."""
    chosen, clashes = latest(_snapshot_rows(items, item_of))
    return {key: Price(p.usd_per_hour, p.source, SNAPSHOT_FETCHED_AT) for key, p in chosen.items()}, clashes


def _data(name: str) -> Path:
    return Path(__file__).resolve().parent.parent / "data" / name


def _rebuild_vm(path: Path) -> str:
    generated, fetched = parse_karpenter(path.read_text(encoding="utf-8"))
    if generated != KARPENTER_GENERATED_AT:
        raise SystemExit(
            f"{path}: generated {generated}, not {KARPENTER_GENERATED_AT} (commit {KARPENTER_COMMIT}); "
            "update KARPENTER_COMMIT and KARPENTER_GENERATED_AT to cite the file you used"
        )
    target = _data("vm_prices.csv")
    current = parse_wide(target.read_text(encoding="utf-8"), str(target))
    rows = merge(current, karpenter_prices(fetched))
    target.write_text(render_wide(rows), encoding="utf-8")
    sizes, regions = len({size.lower() for size, _ in rows}), len({region for _, region in rows})
    return f"{target}: {len(rows)} prices, {sizes} sizes, {regions} regions"


def _rebuild_models(path: Path) -> str:
    snapshot = json.loads(path.read_text(encoding="utf-8"))
    if str(snapshot.get("fetched_at", ""))[:10] != SNAPSHOT_FETCHED_AT:
        raise SystemExit(f"{path}: fetched {snapshot.get('fetched_at')}, not {SNAPSHOT_FETCHED_AT}")
    report = []
    for name, columns, keys, value, item_of in (
        ("ptu_prices.csv", PTU_COLUMNS, ["sku"], "usd_per_ptu_hour", ptu_item),
        ("fine_tune_hosting_prices.csv", FINE_TUNE_COLUMNS, ["model", "sku"], "usd_per_hour", fine_tune_item),
    ):
        current = parse_keyed(bundled_rows(name, columns), keys, value) if _data(name).is_file() else {}
        fetched, clashes = snapshot_prices(snapshot["items"], item_of)
        rows = merge(current, fetched)
        _data(name).write_text(render_keyed(rows, columns, keys, value), encoding="utf-8")
        report.append(f"{name}: {len(rows)} rows; left out, rows disagree: {clashes or 'none'}")
    return "\n".join(report)


def main(argv: list[str]) -> int:
    commands = {"vm": _rebuild_vm, "models": _rebuild_models}
    if len(argv) != 2 or argv[0] not in commands:
        print(
            f"usage: python -m scanner.model.price_sources vm PATH/TO/{Path(KARPENTER_PATH).name}\n"
            "       python -m scanner.model.price_sources models PATH/TO/azure_genai_prices/data/snapshot.json",
            file=sys.stderr,
        )
        return 2
    print(commands[argv[0]](Path(argv[1])))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
