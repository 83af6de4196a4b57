"""When model versions retire: a sourced, dated table of (model, version) rows.

Azure OpenAI deployments of a retired model version return errors (Microsoft Learn, "Azure
OpenAI model deprecations and retirements"). A plan or template says which version it deploys
but not when that version retires, so AZAI-504 reads the date from a table: the bundled
``data/model_retirements.csv``, transcribed from the Learn retirement tables with each row's
source and the date of the page it came from, or a table written by ``azai models refresh`` from
the Models - List API of a subscription and region.

Only firm dates are rows: "no earlier than" dates are not retirement dates, and a version the
table does not list has no known retirement date, which is not a finding. A row's ``sku`` names
the deployment type it applies to (``Standard``) where Learn gives one date per type; an empty
``sku`` applies to every other type, and an empty ``version`` to every version of the model.
"""

from __future__ import annotations

import csv
import datetime as dt
import io
from dataclasses import dataclass

from scanner.errors import InputError
from scanner.model.tables import table_text

RETIREMENT_COLUMNS = ["model", "version", "sku", "deprecation", "retirement", "source", "as_of"]


@dataclass(frozen=True)
class Retirement:
    """One row: when ``model`` ``version`` (on deployments of ``sku``) retires, and where that is written."""

    model: str
    version: str
    sku: str
    deprecation: dt.date | None
    retirement: dt.date
    source: str
    as_of: str


RETIREMENT_TABLE = "model_retirements.csv"


def _date(text: str, origin: str, what: str) -> dt.date:
    try:
        return dt.date.fromisoformat(text.strip()[:10])
    except ValueError:
        raise InputError(f"{origin}: {what} {text!r} is not a date (YYYY-MM-DD)") from None


class RetirementTable:
    def __init__(self, rows: list[Retirement], origin: str) -> None:
        self.rows = rows
        self.origin = origin
        self._by_model: dict[str, list[Retirement]] = {}
        for row in rows:
            self._by_model.setdefault(row.model.lower(), []).append(row)

    @classmethod
    def parse(cls, text: str, origin: str) -> RetirementTable:
        reader = csv.DictReader(io.StringIO(text), restval="")  # a short row reads as empty cells
        if reader.fieldnames is None or not set(RETIREMENT_COLUMNS) <= set(reader.fieldnames):
            raise InputError(f"{origin}: not a model retirement table (columns {', '.join(RETIREMENT_COLUMNS)})")
        rows = []
        for row in reader:
            deprecation = row["deprecation"].strip()
            rows.append(
                Retirement(
                    row["model"].strip(),
                    row["version"].strip(),
                    row["sku"].strip(),
                    _date(deprecation, origin, "deprecation date") if deprecation else None,
                    _date(row["retirement"], origin, f"retirement date of {row['model']}"),
                    row["source"].strip(),
                    row["as_of"].strip(),
                )
            )
        return cls(rows, origin)

    @classmethod
    def load(cls, path: str | None = None) -> RetirementTable:
        """``path``, else the refreshed table in the user cache, else the bundled one."""
        return cls.parse(*table_text(RETIREMENT_TABLE, "model retirement table", path))

    def candidates(self, model: str, version: str) -> list[Retirement]:
        """The rows for ``model`` ``version``: those naming the version, else those for every version."""
        rows = self._by_model.get(model.lower(), [])
        exact = [r for r in rows if r.version.lower() == version.lower()]
        return exact or [r for r in rows if not r.version]

    def lookup(self, model: str, version: str, sku: str | None) -> Retirement | None:
        """The row that applies to a deployment of ``sku``: the one naming that type, else the
        one for every type. None when the table has no date for it. With ``sku`` None (not
        known), the answer stands only when every row gives the same date."""
        rows = self.candidates(model, version)
        if not rows:
            return None
        if sku is None:
            return rows[0] if len({r.retirement for r in rows}) == 1 else None
        named = [r for r in rows if r.sku and r.sku.lower() == sku.lower()]
        generic = [r for r in rows if not r.sku]
        chosen = named or generic
        return chosen[0] if chosen else None

    def depends_on_sku(self, model: str, version: str) -> bool:
        """Whether the date differs by deployment type, so an unknown SKU leaves it unknown."""
        return len({r.retirement for r in self.candidates(model, version)}) > 1
