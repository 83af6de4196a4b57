"""ISO 8601 durations (``PT15M``, ``P1DT2H``) as ARM writes idle times, scale-down delays and
job time limits."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

_DURATION = re.compile(
    r"^P(?:(?P<days>\d+(?:\.\d+)?)D)?(?:T(?:(?P<hours>\d+(?:\.\d+)?)H)?(?:(?P<minutes>\d+(?:\.\d+)?)M)?(?:(?P<seconds>\d+(?:\.\d+)?)S)?)?$",
    re.IGNORECASE,
)


def parse_duration(text: Any) -> timedelta | None:
    """An ISO-8601 duration such as ``PT15M`` or ``P1DT2H``; None when it is not one."""
    if not isinstance(text, str):
        return None
    match = _DURATION.match(text.strip())
    if not match or text.strip().upper() in ("P", "PT"):
        return None
    parts = {k: float(v) for k, v in match.groupdict().items() if v}
    return timedelta(**parts)
