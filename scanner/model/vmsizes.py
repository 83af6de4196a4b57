"""VM sizes: the bundled table of which sizes carry GPUs and how many, and the catalog checks consult.

GPU capability comes from this table (sourced from the Microsoft Learn size pages, see
``data/vm_sizes.csv``), not from a name prefix: ``Standard_NV4as_v4`` is a GPU size and
``Standard_NP10s`` (an FPGA) is not, though both start with N.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from scanner.model.unknown import Unknown, UnknownValueError


@dataclass(frozen=True, slots=True)
class VmSize:
    name: str
    family: str
    gpu_count: float | None
    gpu_model: str
    vcpus: int | None
    memory_gib: float | None
    status: str

    @property
    def is_gpu(self) -> bool:
        return bool(self.gpu_model)


def _number(text: str) -> float | None:
    return float(text) if text.strip() else None


@cache
def _table() -> dict[str, VmSize]:
    data = resources.files("scanner").joinpath("data/vm_sizes.csv").read_text(encoding="utf-8")
    table: dict[str, VmSize] = {}
    for row in csv.DictReader(data.splitlines()):
        vcpus = _number(row["vcpus"])
        table[row["size"].lower()] = VmSize(
            name=row["size"],
            family=row["family"],
            gpu_count=_number(row["gpu_count"]),
            gpu_model=row["gpu_model"],
            vcpus=int(vcpus) if vcpus is not None else None,
            memory_gib=_number(row["memory_gib"]),
            status=row["status"],
        )
    return table


def lookup(size: str) -> VmSize | None:
    """The table row for a size, case-insensitively.

    ``_Promo`` sizes were discounted meters on the same hardware as their base size, and
    still appear in old templates (``Standard_NC6_Promo``), so they resolve to the base row.
    """
    key = size.strip().lower()
    table = _table()
    if key in table:
        return table[key]
    if key.endswith("_promo"):
        return table.get(key[: -len("_promo")])
    return None


def is_gpu_size(size: str) -> bool:
    found = lookup(size)
    return found is not None and found.is_gpu


def names() -> list[str]:
    """Every size in the table."""
    return [row.name for row in _table().values()]


class SizeCatalog:
    """VM size facts for checks: the bundled table, plus sizes a live scan's resource SKUs
    confirmed to carry GPUs (``extra_gpu``, lower-cased)."""

    def __init__(self, extra_gpu: frozenset[str] = frozenset()) -> None:
        self.extra_gpu = extra_gpu

    def is_gpu(self, size: Any) -> bool:
        """True when the size carries a GPU. Unknown sizes raise, as any Unknown does."""
        if isinstance(size, Unknown):
            raise UnknownValueError(size)
        return isinstance(size, str) and (is_gpu_size(size) or size.lower() in self.extra_gpu)
