"""Values quoted in a message or a report line, written as JSON (``null``, ``true``, ``["a"]``):
the notation of the plans and templates they came from, never Python's (``None``, ``True``)."""

from __future__ import annotations

import json
from typing import Any


def json_text(value: Any) -> str:
    """``value`` as compact JSON; what JSON cannot hold (an unknown value) as its text."""
    return json.dumps(value, ensure_ascii=False, separators=(", ", ": "), default=str)


def bare_text(value: Any) -> str:
    """A string as it is, anything else as JSON: for a place that quotes strings itself."""
    return value if isinstance(value, str) else json_text(value)
