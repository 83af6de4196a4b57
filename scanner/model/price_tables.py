"""How price tables are laid out, read and written.

Two layouts, each with a source and a date on every row:

- The **user table** (written by ``azai prices refresh``, or named by ``--prices``): one row per
  item and region, ``size,region,usd_per_hour,source,as_of``, and an optional ``meter`` column
  naming the meter family of the row (``vm`` when absent or empty; ``serverless-gpu``, ``ptu``
  or ``fine-tune-hosting`` otherwise). It holds a few refreshed regions, so it is read whole.
- The **bundled VM table** (``data/vm_prices.csv``): one row per size and source, one column
  per region, ``size,source,as_of,<region>...``. Prices of every size in every region would
  be some 65,000 rows of the first layout, each repeating a 130-character source URL (12 MB,
  over 100 ms to parse on every scan); here the source and date are stated once per row of a
  size (0.7 MB), and the file is read only when a scan first asks for a VM price, then
  indexed by size and split only for the sizes asked for (a few milliseconds). A (size, region) pair has a price
  in at most one row: the builder (``price_sources``) settles which source wins.

Sizes and items keep Azure's spelling in the files; look-ups compare them case-insensitively
and regions after normalising (``West Europe`` is ``westeurope``).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from scanner.errors import InputError
from scanner.model.resources import normalize_location

PRICE_COLUMNS = ["size", "region", "usd_per_hour", "source", "as_of"]
METER_COLUMN = "meter"
DEFAULT_METER = "vm"
WIDE_KEYS = ["size", "source", "as_of"]

# (item as spelled, region): the key of a row in a price table.
Pair = tuple[str, str]


@dataclass(frozen=True, slots=True)
class Price:
    usd_per_hour: float
    source: str
    as_of: str


def _number(text: str, item: str, origin: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise InputError(f"{origin}: price {text!r} for {item} is not a number") from None


def parse_user_table(text: str, origin: str, meters: set[str]) -> dict[str, dict[Pair, Price]]:
    """The rows of a user table by meter family, then by (item, region): one clear line for a
    table without the columns, a price that is not a number, or a meter azai does not know.
    Read with the plain CSV reader, by column position: a refreshed region holds some 1,700
    VM sizes, and scans read this table before anything else."""
    rows = csv.reader(io.StringIO(text))
    header = next(rows, None)
    if header is None or not set(PRICE_COLUMNS) <= set(header):
        raise InputError(f"{origin}: not a price table (columns {', '.join(PRICE_COLUMNS)})")
    size, region, usd, source, as_of = (header.index(name) for name in PRICE_COLUMNS)
    meter_at = header.index(METER_COLUMN) if METER_COLUMN in header else None
    tables: dict[str, dict[Pair, Price]] = {}
    for row in rows:
        cells = row + [""] * (len(header) - len(row))  # a short row reads as empty cells
        meter = (cells[meter_at].strip() if meter_at is not None else "") or DEFAULT_METER
        table = tables.get(meter)
        if table is None:
            if meter not in meters:
                raise InputError(
                    f"{origin}: meter {meter!r} of {cells[size]} is not one of {', '.join(sorted(meters))}"
                )
            table = tables[meter] = {}
        price = Price(_number(cells[usd], cells[size], origin), cells[source], cells[as_of])
        table[(cells[size], normalize_location(cells[region]))] = price
    return tables


def render_user_table(tables: Mapping[str, Mapping[Pair, Price]]) -> str:
    """The CSV text of a user table, sorted by meter, item and region; the ``meter`` column is
    written only when a row is not a VM price, so a VM-only table keeps the five columns."""
    columns = PRICE_COLUMNS + ([METER_COLUMN] if set(tables) - {DEFAULT_METER} else [])
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n", extrasaction="ignore")
    writer.writeheader()
    for meter in sorted(tables):
        for (item, region), price in sorted(tables[meter].items(), key=lambda kv: (kv[0][0].lower(), kv[0][1])):
            writer.writerow(
                {
                    "size": item,
                    "region": region,
                    "usd_per_hour": f"{price.usd_per_hour:g}",
                    "source": price.source,
                    "as_of": price.as_of,
                    METER_COLUMN: meter,
                }
            )
    return buffer.getvalue()


def parse_keyed(rows: list[dict[str, str]], keys: list[str], value: str) -> dict[Pair, Price]:
    """The rows of a small bundled hourly table by (item, region), the item being the ``keys``
    columns joined by blanks (``"gpt-4o-mini GlobalStandard"``)."""
    return {
        (" ".join(row[k] for k in keys), normalize_location(row["region"])): Price(
            float(row[value]), row["source"], row["as_of"]
        )
        for row in rows
    }


def render_keyed(rows: Mapping[Pair, Price], columns: list[str], keys: list[str], value: str) -> str:
    """The CSV text of a small bundled hourly table (the inverse of `parse_keyed`), sorted by
    item and region, so a rebuild's diff shows only real changes."""
    buffer = io.StringIO()
    writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
    writer.writeheader()
    for (item, region), price in sorted(rows.items(), key=lambda kv: (kv[0][0].lower(), kv[0][1])):
        writer.writerow(
            {
                **dict(zip(keys, item.split(" "), strict=True)),
                "region": region,
                value: f"{price.usd_per_hour:g}",
                "source": price.source,
                "as_of": price.as_of,
            }
        )
    return buffer.getvalue()


class WideTable:
    """The bundled VM table, read on the first look-up: the file's lines indexed by size, each
    size's lines split into prices the first time that size is asked for."""

    def __init__(self, read: Callable[[], str], origin: str) -> None:
        self._read = read
        self._origin = origin
        self._columns: dict[str, int] | None = None
        self._lines: dict[str, list[str]] = {}
        self._sizes: dict[str, dict[str, Price]] = {}

    def get(self, size: str, region: str) -> Price | None:
        """The price of ``size`` (any case) in ``region`` (normalised), or None."""
        key = size.lower()
        prices = self._sizes.get(key)
        if prices is None:
            prices = self._sizes[key] = self._split(self._index().get(key, []))
        return prices.get(region)

    def pairs(self) -> dict[Pair, Price]:
        """Every price of the table by (size as spelled in its first row, region)."""
        return {
            (lines[0].split(",", 1)[0], region): price
            for lines in self._index().values()
            for region, price in self._split(lines).items()
        }

    def _index(self) -> dict[str, list[str]]:
        if self._columns is None:
            header, *lines = self._read().splitlines()
            names = next(csv.reader([header]))
            if names[: len(WIDE_KEYS)] != WIDE_KEYS:
                raise InputError(f"{self._origin}: columns must start {', '.join(WIDE_KEYS)}")
            self._columns = {normalize_location(name): i for i, name in enumerate(names) if i >= len(WIDE_KEYS)}
            for line in lines:
                self._lines.setdefault(line.split(",", 1)[0].lower(), []).append(line)
        return self._lines

    def _split(self, lines: list[str]) -> dict[str, Price]:
        columns = self._columns or {}
        prices: dict[str, Price] = {}
        for cells in csv.reader(lines):
            for region, i in columns.items():
                if i < len(cells) and cells[i] and region not in prices:
                    prices[region] = Price(_number(cells[i], cells[0], self._origin), cells[1], cells[2])
        return prices


def parse_wide(text: str, origin: str) -> dict[Pair, Price]:
    """Every (size, region) price of a bundled VM table, sizes as spelled: what the builder
    merges into and what a test compares with the file."""
    return WideTable(lambda: text, origin).pairs()


def render_wide(rows: Mapping[Pair, Price]) -> str:
    """The CSV text of a bundled VM table: one row per size and (source, date), sorted by size,
    date and source; one column per region, sorted; an empty cell where that row has no price."""
    regions = sorted({region for _, region in rows})
    grouped: dict[tuple[str, str, str], dict[str, float]] = {}
    for (size, region), price in rows.items():
        grouped.setdefault((size, price.as_of, price.source), {})[region] = price.usd_per_hour
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow([*WIDE_KEYS, *regions])
    for size, as_of, source in sorted(grouped, key=lambda k: (k[0].lower(), *k)):
        cells = grouped[(size, as_of, source)]
        writer.writerow([size, source, as_of, *(f"{cells[r]:g}" if r in cells else "" for r in regions)])
    return buffer.getvalue()
