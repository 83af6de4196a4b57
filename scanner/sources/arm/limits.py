"""What a template may make the scan do: ARM's own limits, and a budget of work per input.

azai scans pull requests, so a template is written by whoever opens one. ARM refuses a template
that breaks its limits before it deploys anything; a scan refuses it the same way, with exit 2
and one line naming the file and the JSON path, instead of hanging or running out of memory on
what ARM would never deploy. The figures are ARM's:

- https://learn.microsoft.com/azure/azure-resource-manager/templates/best-practices#template-limits
  (a template and a parameters file of at most 4 MB; 800 resources, copies included);
- https://learn.microsoft.com/azure/azure-resource-manager/management/azure-subscription-service-limits
  (the same template limits, in the table of Resource Manager limits);
- https://learn.microsoft.com/azure/azure-resource-manager/templates/copy-resources#copy-limits
  (a copy count is 0 to 800, for resources, properties, variables and outputs alike).

ARM publishes no cap on the value of one expression, but the 4 MB applies to the template's final
state, variables and parameters resolved, so no string or array longer than that can be deployed:
functions that build one (``padLeft``, ``format``, ``concat``, ``range``, ``replace``, ``join``)
check the size they are asked for before they build it. On top of that, one input gets a budget
of work (`Work`): template function calls, and the characters and items of the strings and arrays
they build. A template within ARM's limits that still needs more (loops of lambdas over the
largest arrays, say) stops at the budget, never hangs.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

MAX_COPY = 800  # a copy loop's count: resources, properties, variables and outputs
MAX_RESOURCES = 800  # resources in one template, counting each copy
MAX_TEMPLATE_BYTES = 4 * 1024 * 1024  # a template, and a parameters file
MAX_VALUE_LENGTH = MAX_TEMPLATE_BYTES  # characters of a string; a deployed one fits in the template
MAX_ARRAY_LENGTH = MAX_TEMPLATE_BYTES // 2  # items of an array: each takes at least two bytes ("1,")
# ARM's integers are 64-bit (Int64 in template functions).
INT64 = range(-(2**63), 2**63)

# The work one input may cost. The largest template of the conformance corpus (3.2 MB of
# compiled Bicep, ../shared/corpus/arm/bicep-avm-patterns) makes about 4,100 calls and builds
# about 6,000 characters; these allow a thousand times and more, some seconds of work.
MAX_CALLS = 5_000_000
MAX_BUILT = 100_000_000


class RefusedTemplate(Exception):
    """The template breaks a rule ARM enforces before it deploys (a limit, a number out of range),
    or needs more work than a scan gives one input. Deliberately not a `ValueError`: the evaluator
    turns those into unknown values, and this must end the scan of the file. The place that knows
    the file and JSON path turns it into an `InputError` (exit 2)."""


@dataclass
class Work:
    """Template function calls made and characters and items built, for one input."""

    calls: int = 0
    built: int = 0


_WORK: ContextVar[Work | None] = ContextVar("arm_work", default=None)


@contextmanager
def budget() -> Iterator[Work]:
    """Count the work of evaluating one input. Kept in a context variable so that the pure
    template functions can charge what they build without a budget threaded through each."""
    work = Work()
    token = _WORK.set(work)
    try:
        yield work
    finally:
        _WORK.reset(token)


def spend_calls(count: int = 1) -> None:
    """Template function calls, or comparisons as costly as one."""
    work = _WORK.get()
    if work is not None:
        work.calls += count
        if work.calls > MAX_CALLS:
            raise RefusedTemplate(
                f"evaluation stopped after {MAX_CALLS:,} template function calls, the most a scan spends on one input"
            )


def spend_size(size: int, what: str, limit: int = MAX_VALUE_LENGTH) -> None:
    """Before a function builds a string or array of ``size`` characters or items: refuse one
    larger than a template can hold, and charge it to the input's budget."""
    if size > limit:
        raise RefusedTemplate(
            f"{what} would be {size:,} long, more than the {limit:,} that fit in a template "
            "(ARM's limit: 4 MB, the template's final state)"
        )
    work = _WORK.get()
    if work is not None:
        work.built += size
        if work.built > MAX_BUILT:
            raise RefusedTemplate(
                f"evaluation stopped after building {MAX_BUILT:,} characters and items, the most a "
                "scan builds for one input"
            )


def serialized_length(value: Any, limit: int = MAX_VALUE_LENGTH) -> int:
    """At least how long ``value`` is as JSON, counted only up to ``limit`` (so a small array that
    holds one long string a million times is not written out to learn that it is too long)."""
    total = 0
    pending = [value]
    while pending and total <= limit:
        item = pending.pop()
        if isinstance(item, str):
            total += len(item) + 2
        elif isinstance(item, dict):
            total += 2 + sum(len(str(k)) + 4 for k in item)
            pending.extend(item.values())
        elif isinstance(item, (list, tuple)):
            total += 2 + len(item)
            pending.extend(item)
        else:
            total += 4
    return total


def int64(value: Any, what: str) -> int:
    """An integer result as ARM computes it: 64-bit, so a larger one is refused, never grown
    without bound (30 chained ``mul()`` calls would otherwise take gigabytes)."""
    if isinstance(value, float) and not math.isfinite(value):
        raise RefusedTemplate(f"{what} of {value}: the number is out of range")
    result = int(value)
    if result not in INT64:
        raise RefusedTemplate(f"{what} is {_short_number(result)}, outside ARM's 64-bit integers")
    return result


def finite_json(text: str) -> Any:
    """``json.loads`` that refuses numbers ARM cannot hold: ``1e999`` (infinite as a float),
    ``NaN`` and ``Infinity``."""

    def number(literal: str) -> float:
        parsed = float(literal)
        if not math.isfinite(parsed):
            raise RefusedTemplate(f"the number {_short_number(literal)} is out of range")
        return parsed

    def constant(literal: str) -> float:
        raise RefusedTemplate(f"{literal} is not a number JSON allows")

    return json.loads(text, parse_float=number, parse_constant=constant)


def _short_number(value: Any) -> str:
    text = str(value) if not isinstance(value, int) or value.bit_length() < 4000 else "a huge number"
    return text if len(text) <= 40 else f"{text[:20]}...({len(text)} digits)"
