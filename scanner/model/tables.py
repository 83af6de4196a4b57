"""Bundled data tables that a refresh command can replace in the user's cache (prices, model
retirement dates): where the refreshed copy lives, and which copy a scan reads."""

from __future__ import annotations

import csv
import io
import os
from importlib import resources
from pathlib import Path

from scanner.errors import InputError


def bundled_text(file_name: str) -> str:
    """The text of the bundled table ``data/<file_name>``."""
    return resources.files("scanner").joinpath(f"data/{file_name}").read_text(encoding="utf-8")


def bundled_rows(file_name: str, columns: list[str]) -> list[dict[str, str]]:
    """The rows of a bundled CSV table (``data/<file_name>``), which must have ``columns``."""
    reader = csv.DictReader(io.StringIO(bundled_text(file_name)))
    if reader.fieldnames is None or not set(columns) <= set(reader.fieldnames):
        raise InputError(f"bundled {file_name}: columns must be {', '.join(columns)}")
    return list(reader)


def cache_path(file_name: str) -> Path:
    """Where a refresh command writes ``file_name`` by default, and where scans look first."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "azai" / file_name


def user_table_text(file_name: str, what: str, path: str | None = None) -> tuple[str, str] | None:
    """The text of ``path``, else of the refreshed table in the user cache, with where it came
    from; None when neither is there. A copy that cannot be read is one line, never a traceback."""
    chosen = Path(path) if path else cache_path(file_name)
    if not (path or chosen.is_file()):
        return None
    try:
        return chosen.read_text(encoding="utf-8"), str(chosen)
    except OSError as exc:
        raise InputError(f"{chosen}: cannot read {what} ({exc.strerror})") from None
    except UnicodeDecodeError:
        raise InputError(f"{chosen}: {what} is not UTF-8 text") from None


def table_text(file_name: str, what: str, path: str | None = None) -> tuple[str, str]:
    """The text of ``path``, else of the refreshed table in the user cache, else of the bundled
    one, with where it came from."""
    return user_table_text(file_name, what, path) or (bundled_text(file_name), f"bundled {what}")
