"""The live boundary: where azai's token may go, and how long and how much it waits for answers.

A scan talks to one ARM endpoint and must end, with a report, whatever that endpoint answers.
Every request of a scan passes here, in the pipeline that `ClientFactory` builds:

- `EndpointOnlyPolicy`, just before the authentication policy, refuses any request whose
  origin (scheme, host, port) is not the ARM endpoint's: a ``nextLink`` or redirect elsewhere
  never gets the token, and becomes a coverage gap naming the host.
- `BoundedRetryPolicy` reads ``Retry-After`` in its three forms (seconds, HTTP date,
  ``retry-after-ms``), refuses to wait longer than `Limits.retry_after`, and draws every retry
  from a budget per scan, so a 500 storm or a throttle that never ends costs a bounded time.
- The transport (`scanner.sources.live.transport`) holds every request to a `Deadline`: the
  whole exchange (connect, request, status line, headers, body) ends within
  `Limits.response_seconds`, or by the scan's time limit (``--timeout``) when that comes
  first, however slowly a server trickles any part of it; each socket operation waits at
  most what is left, and a socket silent for `Limits.read_timeout` fails sooner. A body
  larger than `Limits.response_bytes` is abandoned; the issued tokens are scrubbed from every
  body. Once the scan's time limit has passed, no request is sent.

A refusal raises `BoundaryError` (or `ScanTimeout`), which the collector records as a coverage
gap: never a crash, never a silent pass.
"""

from __future__ import annotations

import datetime as dt
import email.utils
import functools
import math
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from scanner.sources.live.redaction import Redactor


class BoundaryError(Exception):
    """An answer azai refuses or cannot use; the collector makes it a coverage gap."""

    def __init__(self, reason: str, status_code: int | None = None) -> None:
        super().__init__(reason)
        self.status_code = status_code


class ScanTimeout(BoundaryError):
    """The scan's time limit passed: the read was not made, or not finished."""


class Deadline:
    """When one request must be done, from connecting to its answer's last byte: ``until``
    (`time.monotonic`), `Limits.response_seconds` after it began, or the scan's own deadline
    when that comes first (``scan``). Whichever it is, `passed` is the error that ends the
    request: the scan's `ScanTimeout`, so that the collector reports the read in the scan's
    one time-limit gap, or the boundary's refusal of an answer too slow to wait for."""

    __slots__ = ("boundary", "scan", "until")

    def __init__(self, boundary: Boundary, until: float, scan: bool) -> None:
        self.boundary, self.until, self.scan = boundary, until, scan

    def left(self) -> float:
        """Seconds left (zero or less once it has passed)."""
        return self.until - time.monotonic()

    def passed(self) -> BoundaryError:
        if self.scan:
            return self.boundary.timed_out()
        return BoundaryError(f"the answer was still arriving after {self.boundary.limits.response_seconds:g} s")


@dataclass(frozen=True)
class Limits:
    """The bounds of one scan. The defaults suit real ARM; tests shorten them."""

    # azure-core waits 300 s for each (azure/core/configuration.py, ConnectionConfiguration): a
    # stalled endpoint would hold a worker that long per try. These are azai's choices.
    connect_timeout: float = 10.0
    read_timeout: float = 60.0  # seconds of silence on a socket
    response_seconds: float = 120.0  # a whole request and its answer, however they trickle
    # Resource Graph pages hold at most 1000 rows (shared/reference/azure-live.md §Resource Graph);
    # 64 MB is far above 1000 full resource bodies.
    response_bytes: int = 64 * 1024 * 1024
    # ARM's throttling asks for seconds ("try again after '6' seconds", azure-live.md §throttling);
    # a longer wait is not worth a scan's time: the scope becomes a coverage gap.
    retry_after: float = 60.0
    backoff_factor: float = 0.8
    # Retries per scan: a floor, plus a share of the requests sent (in the manner of Finagle's
    # RetryBudget), so a healthy large scan keeps retrying throttles and a storm does not.
    retry_floor: int = 50
    retry_share: float = 0.1
    # Pages of one collection: 1000 pages of 1000 Resource Graph rows is a million resources
    # in one batch of subscriptions; a link that keeps changing stops there.
    max_pages: int = 1000


def origin(url: str) -> tuple[str, str, int | None]:
    """Scheme, host and port, the default port made explicit; a port that cannot be read is None."""
    parts = urlsplit(url)
    try:
        port = parts.port
    except ValueError:
        return parts.scheme.lower(), (parts.hostname or "").lower(), None
    return parts.scheme.lower(), (parts.hostname or "").lower(), port or {"https": 443, "http": 80}.get(parts.scheme)


class Boundary:
    """What every request of one scan shares: the endpoint, the limits, the clock, the retry
    budget and the redactor."""

    def __init__(self, endpoint: str, limits: Limits | None = None, timeout: float | None = None) -> None:
        self.endpoint = endpoint
        self.origin = origin(endpoint)
        # A URL that starts with this is on the endpoint's origin: its authority is the
        # endpoint's, character for character. Others are compared part by part.
        split = urlsplit(endpoint)
        self.same_authority = f"{split.scheme}://{split.netloc}/"
        self.limits = limits or Limits()
        self.timeout = timeout
        self.deadline = time.monotonic() + timeout if timeout else None
        self.redactor = Redactor()
        self.requests = 0
        self.retries = 0
        self._lock = threading.Lock()

    def remaining(self) -> float | None:
        """Seconds left of the scan's time limit (None: no limit); a `ScanTimeout` when none are."""
        if self.deadline is None:
            return None
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise self.timed_out()
        return left

    def timed_out(self) -> ScanTimeout:
        """The error of a read the scan's time limit stopped: one message, whichever check saw it."""
        return ScanTimeout(f"not read: the scan's time limit of {self.timeout:g} s was reached")

    def request_deadline(self) -> Deadline:
        """The `Deadline` of a request that starts now; a `ScanTimeout` when the scan's time
        limit has passed."""
        now = time.monotonic()
        until = now + self.limits.response_seconds
        if self.deadline is None or until < self.deadline:
            return Deadline(self, until, False)
        if self.deadline <= now:
            raise self.timed_out()
        return Deadline(self, self.deadline, True)

    def sent(self) -> None:
        with self._lock:
            self.requests += 1

    def allow_retry(self, wait: float) -> bool:
        """Whether a retry after ``wait`` seconds fits the budget and the time limit; it is spent if so."""
        left = self.remaining()
        if left is not None and wait >= left:
            return False
        with self._lock:
            if self.retries >= self.limits.retry_floor + self.limits.retry_share * self.requests:
                return False
            self.retries += 1
            return True

    def check_origin(self, url: str) -> None:
        """Refuses ``url`` unless it is on the endpoint's origin (scheme, host and port)."""
        if not url.startswith(self.same_authority) and origin(url) != self.origin:
            host = urlsplit(url).netloc or url[:80]
            raise BoundaryError(f"refused a link to {self.redactor.text(host)}: the token goes only to {self.endpoint}")


class PageTrail:
    """The continuation links of one collection: a link seen before (a loop) or a page past
    `Limits.max_pages` ends it with a `BoundaryError`."""

    def __init__(self, limits: Limits) -> None:
        self.limits = limits
        self.seen: set[str] = set()

    def follow(self, link: str) -> str:
        if link in self.seen:
            raise BoundaryError(f"the next-page link repeats after {len(self.seen)} page(s)")
        if len(self.seen) + 1 >= self.limits.max_pages:
            raise BoundaryError(f"more than {self.limits.max_pages} pages")
        self.seen.add(link)
        return link


def every_item(pager: Any, limits: Limits) -> list[Any]:
    """Every item of an SDK pager (``ItemPaged``), its continuation links held to a `PageTrail`."""
    trail = PageTrail(limits)
    pages = pager.by_page()
    items: list[Any] = []
    for page in pages:
        items.extend(page)
        link = pages.continuation_token
        if link is not None and not isinstance(link, str):  # the SDK passes it on unchecked
            raise BoundaryError(f"the answer's nextLink is a JSON {type(link).__name__}, not a URL")
        if link:
            trail.follow(link)
    return items


def retry_after(headers: Mapping[str, str]) -> float | None:
    """The wait a response asks for, in seconds: ``Retry-After`` as seconds or an HTTP date
    (RFC 9110 §10.2.3), else ``retry-after-ms`` / ``x-ms-retry-after-ms`` (milliseconds, a
    number only), else Resource Graph's ``x-ms-user-quota-resets-after`` (``hh:mm:ss``: it
    throttles with that header, not ``Retry-After``). None when no header holds a usable
    value; ``inf`` for one too large to wait."""
    lowered = {k.lower(): v for k, v in headers.items()}
    seconds = _seconds(lowered.get("retry-after"))
    if seconds is None:
        seconds = _number(lowered.get("retry-after-ms") or lowered.get("x-ms-retry-after-ms"))
        seconds = None if seconds is None else seconds / 1000
    if seconds is None:
        seconds = _clock(lowered.get("x-ms-user-quota-resets-after"))
    return seconds


def _clock(value: str | None) -> float | None:
    """``hh:mm:ss`` (seconds may have a fraction) as seconds; None for anything else."""
    parts = (value or "").strip().split(":")
    if len(parts) != 3 or not all(p.replace(".", "", 1).isdigit() for p in parts):
        return None
    hours, minutes, seconds = (float(p) for p in parts)
    return hours * 3600 + minutes * 60 + seconds


def _seconds(value: str | None) -> float | None:
    number = _number(value)
    if number is not None or not value:
        return number
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, OverflowError):
        return None
    if when.tzinfo is None:  # an HTTP date is GMT
        when = when.replace(tzinfo=dt.UTC)
    return max(0.0, (when - dt.datetime.now(dt.UTC)).total_seconds())


def _number(value: str | None) -> float | None:
    """A non-negative number; an infinite or overflowing one is ``inf`` (too long), NaN is None."""
    if not value:
        return None
    try:
        number = float(value.strip())
    except ValueError:
        return None
    if math.isnan(number) or number < 0:
        return None
    return number


@functools.cache
def _retry_policy_class() -> type:
    from azure.core.pipeline import PipelineResponse
    from azure.core.pipeline.policies import RetryPolicy

    class BoundedRetryPolicy(RetryPolicy):  # type: ignore[type-arg]
        """azure-core's retries, with a capped ``Retry-After`` and a retry budget per scan."""

        def __init__(self, boundary: Boundary, **kwargs: Any) -> None:
            super().__init__(retry_backoff_factor=boundary.limits.backoff_factor, **kwargs)
            self.boundary = boundary

        def get_retry_after(self, response: Any) -> float | None:
            return retry_after(response.http_response.headers)

        def increment(self, settings: dict[str, Any], response: Any = None, error: Any = None) -> bool:
            if not super().increment(settings, response=response, error=error):
                return False
            asked = self.get_retry_after(response) if isinstance(response, PipelineResponse) else None
            limit = self.boundary.limits.retry_after
            if asked is not None and asked > limit:
                status = response.http_response.status_code
                wait = "for ever" if math.isinf(asked) else f"{asked:,.0f} s"
                raise BoundaryError(f"the server asked to retry after {wait}; azai waits at most {limit:g} s", status)
            return self.boundary.allow_retry(asked or self.get_backoff_time(settings))

    return BoundedRetryPolicy


def retry_policy(boundary: Boundary, **kwargs: Any) -> Any:
    """A `BoundedRetryPolicy` (built lazily: azure-core loads only when a live scan runs)."""
    return _retry_policy_class()(boundary, **kwargs)


@functools.cache
def _endpoint_policy_class() -> type:
    from azure.core.pipeline.policies import SansIOHTTPPolicy

    class EndpointOnlyPolicy(SansIOHTTPPolicy):  # type: ignore[type-arg]
        """Refuses any request off the ARM endpoint's origin, before the token is added."""

        def __init__(self, boundary: Boundary) -> None:
            self.boundary = boundary

        def on_request(self, request: Any) -> None:
            self.boundary.check_origin(request.http_request.url)

    return EndpointOnlyPolicy


def endpoint_only_policy(boundary: Boundary) -> Any:
    """The policy that keeps every request, and so the token, on the ARM endpoint's origin."""
    return _endpoint_policy_class()(boundary)
