"""Rebuild the bundled price table from a public, dated copy of the Azure Retail Prices API.

The scanner cannot reach the Retail Prices API while it builds, and a table of prices typed in
by hand could not be checked. So the bundled rows for regions other than the original eastus
ones come from a file anyone can fetch and diff: the price map that Microsoft's Karpenter
provider for AKS generates from the Retail Prices API and commits,
``pkg/providers/pricing/zz_generated.pricing.go`` in ``Azure/karpenter-provider-azure``.
Its generator keeps ``priceType eq 'Consumption'`` USD rows of ``Virtual Machines`` and drops
Windows products, Low Priority meters and Spot SKUs, which is the same Linux pay-as-you-go
price ``azai prices refresh`` keeps.

Run ``python -m scanner.model.price_sources FILE`` with that file (at the commit named in
``KARPENTER_COMMIT``) to rewrite ``scanner/data/vm_prices.csv``. Rows already in the table win:
they are newer or more specific sources (the eastus rows), and a rebuild must not silently
replace a figure someone sourced on purpose. Only sizes of the N-series that
``data/vm_sizes.csv`` lists are taken, spelled exactly as that table spells them.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from scanner.model import vmsizes
from scanner.model.pricing import Price, PriceBook, render_prices
from scanner.model.resources import normalize_location

KARPENTER_REPO = "Azure/karpenter-provider-azure"
KARPENTER_PATH = "pkg/providers/pricing/zz_generated.pricing.go"
KARPENTER_COMMIT = "0499866a0874e27363395146ad4ecf5dac208e6d"
KARPENTER_GENERATED_AT = "2023-12-18"
KARPENTER_SOURCE = f"https://github.com/{KARPENTER_REPO}/blob/{KARPENTER_COMMIT}/{KARPENTER_PATH}"

_REGION = re.compile(r'initialOnDemandPrices\["([^"]+)"\]\s*=\s*map\[string\]float64\{')
_ENTRY = re.compile(r'^\s*"([^"]+)":\s*([0-9.]+),\s*$')
_GENERATED = re.compile(r"// generated at (\d{4}-\d{2}-\d{2})T")


def parse_karpenter(text: str) -> tuple[str | None, dict[str, dict[str, float]]]:
    """The generation date and ``{region: {size: usd_per_hour}}`` of a Karpenter price file.

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
        if entry and region is not None:
            prices[region][entry.group(1)] = float(entry.group(2))
    return (generated.group(1) if generated else None), prices


def gpu_sizes() -> list[str]:
    """The N-series GPU sizes the size table lists: the ones a waste estimate can need."""
    return [name for name in vmsizes.names() if name.startswith("Standard_N") and vmsizes.is_gpu_size(name)]


def merge(
    current: Mapping[tuple[str, str], Price],
    fetched: Mapping[str, Mapping[str, float]],
    sizes: Iterable[str],
    source: str,
    as_of: str,
) -> dict[tuple[str, str], Price]:
    """``current`` plus every (size, region) of ``fetched`` it lacks, for ``sizes`` only."""
    wanted = {size.lower() for size in sizes}
    rows = dict(current)
    for region, table in fetched.items():
        for size, usd in table.items():
            key = (size.lower(), normalize_location(region))
            if key[0] in wanted and key not in rows:
                rows[key] = Price(usd, source, as_of)
    return rows


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(f"usage: python -m scanner.model.price_sources PATH/TO/{Path(KARPENTER_PATH).name}", file=sys.stderr)
        return 2
    generated, fetched = parse_karpenter(Path(argv[0]).read_text(encoding="utf-8"))
    if generated != KARPENTER_GENERATED_AT:
        print(
            f"{argv[0]}: generated {generated}, not {KARPENTER_GENERATED_AT} (commit {KARPENTER_COMMIT}); "
            "update KARPENTER_COMMIT and KARPENTER_GENERATED_AT to cite the file you used",
            file=sys.stderr,
        )
        return 1
    target = Path(__file__).resolve().parent.parent / "data" / "vm_prices.csv"
    current = PriceBook.parse(target.read_text(encoding="utf-8"), str(target)).prices
    rows = merge(current, fetched, gpu_sizes(), KARPENTER_SOURCE, KARPENTER_GENERATED_AT)
    target.write_text(render_prices(rows), encoding="utf-8")
    print(f"{target}: {len(rows)} rows ({len(rows) - len(current)} added)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
