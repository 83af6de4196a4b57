"""Azure Monitor's metrics API (Metrics - List, REST 2024-02-01) as it answers, not as azai
would like it to.

Three things decide how azai asks (docs/emulator-contract.md cites each):

- **One aggregation per request.** Each metric supports only the aggregations Learn's
  "Supported metrics" table lists for it (``AzureOpenAIRequests``: Total; the provisioned
  utilization: Minimum, Maximum, Average). A metric asked for one it lacks still answers 200,
  but carries ``errorCode`` ``InvalidSamplingType`` and no series (the 2024-02-01 spec's
  example), so a request that mixed ``Average,Total`` read a request metric as zero requests.
  Callers group names by the aggregation they publish (`Ask`).
- **Every metric's errorCode is read.** Anything but ``Success`` means not measured: the
  metric is left out of the answer (so the rule that needed it is undetermined, never "idle")
  and the code becomes a coverage gap.
- **One name the resource does not publish fails the whole request** with a 400 whose message
  ends "Valid metrics: a,b,c" (the published set changes over time, by cloud and as metrics
  roll out by region: the Foundry names are newer than the Azure OpenAI ones). The names are
  learned from that answer, kept for the scan by resource type, kind and region, and the
  request is sent once more with the published ones only; later resources of that type, kind
  and region ask only for those. A 400 for a dimension a
  metric lacks is a coverage gap: the split cannot be had.
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from scanner.model.resources import CoverageGap, Resource
from scanner.sources.live import shapes

METRICS_API = "2024-02-01"
METRICS_PATH = "/providers/Microsoft.Insights/metrics"
# Series per request: the API returns 10 dimension values unless told otherwise, which would
# silently drop the eleventh compute or deployment of a workspace or account.
METRICS_TOP = "1000"
UNPUBLISHED = re.compile(r"Failed to find metric configuration.*Valid metrics:\s*(?P<names>[^\n]*)", re.DOTALL)

# A metric's series: samples by lower-case dimension value ("" without a split).
Series = dict[str, list[float]]


@dataclass(frozen=True, slots=True)
class Ask:
    """One metrics request: ``names`` that all publish ``aggregation``, split by ``split_by``
    (every value of it: ``$filter=<dim> eq '*'``) when given."""

    names: tuple[str, ...]
    aggregation: str
    namespace: str | None = None
    split_by: str | None = None

    def params(self, names: tuple[str, ...], timespan: str) -> dict[str, str]:
        """The query of this ask over ``timespan``, hourly, for ``names``."""
        params = {"metricnames": ",".join(names), "aggregation": self.aggregation, "interval": "PT1H"}
        params["timespan"] = timespan
        if self.namespace:
            params["metricnamespace"] = self.namespace
        if self.split_by:
            params |= {"$filter": f"{self.split_by} eq '*'", "top": METRICS_TOP}
        return params | {"api-version": METRICS_API}


class MetricsReader:
    """Reads `Ask`s for resources through the scan's raw pipeline, learning which names each
    type and kind of resource publishes.

    ``send(url) -> response`` sends one GET (`ClientFactory.raw`'s pipeline) and returns the
    answer whatever its status; ``guard(scope, action)`` runs a read and turns a failure into a
    coverage gap (returning None); ``gaps`` collects the metrics that were not measured;
    ``redact`` makes a server's text safe to quote."""

    def __init__(
        self,
        send: Callable[[str], Any],
        url: Callable[[str, dict[str, str]], str],
        guard: Callable[[str, Callable[[], Any]], Any],
        gaps: list[CoverageGap],
        redact: Callable[[str], str],
        timespan: str,
    ) -> None:
        self.send, self.url, self.guard, self.gaps, self.redact = send, url, guard, gaps, redact
        self.timespan = timespan
        self.published: dict[tuple[str, str, str], frozenset[str]] = {}
        # The first read of each type, kind and region, which the others wait for: what it
        # learns (a 400's valid names) spares them the same 400, whatever the threads' order.
        self.first: dict[tuple[str, str, str], threading.Event] = {}
        self.lock = threading.Lock()

    def read(self, resource: Resource, ask: Ask) -> dict[str, Series] | None:
        """The series of each metric of ``ask`` that ``resource`` publishes and Azure Monitor
        measured (``errorCode`` Success), by lower-case name. A name it does not publish is
        absent; one not measured is absent and a coverage gap. None when the request itself
        failed (a coverage gap)."""
        kind = resource.body.get("kind")
        key = (resource.type_key, kind.lower() if isinstance(kind, str) else "", str(resource.location or ""))
        with self.lock:
            leads = key not in self.first
            first = self.first.setdefault(key, threading.Event())
        if not leads:
            first.wait()
        try:
            names = self._published(key, ask.names)
            if not names:
                return {}
            scope = f"{resource.id}{METRICS_PATH}"
            found: dict[str, Series] | None = self.guard(scope, lambda: self._answer(scope, key, ask, names))
            return found
        finally:
            first.set()

    def _published(self, key: tuple[str, str, str], names: tuple[str, ...]) -> tuple[str, ...]:
        known = self.published.get(key)
        return names if known is None else tuple(n for n in names if n.lower() in known)

    def _answer(self, scope: str, key: tuple[str, str, str], ask: Ask, names: tuple[str, ...]) -> dict[str, Series]:
        """Send the ask; on a 400 that lists the valid names, learn them and ask once more for
        the published ones."""
        from azure.core.exceptions import HttpResponseError

        response = self.send(self.url(scope, ask.params(names, self.timespan)))
        valid = _valid_names(response)
        if valid is not None:
            with self.lock:
                self.published[key] = valid
            names = self._published(key, ask.names)
            if not names:
                return {}
            response = self.send(self.url(scope, ask.params(names, self.timespan)))
        if response.status_code != 200:
            raise HttpResponseError(response=response)
        measured, failed = shapes.metric_answer(shapes.json_body(response), ask.aggregation)
        for name in names:
            reason = failed.get(name.lower()) or (None if name.lower() in measured else "absent from the answer")
            if reason is not None:
                self.gaps.append(CoverageGap(scope, None, self.redact(f"metric {name} was not measured: {reason}")))
        return measured


def _valid_names(response: Any) -> frozenset[str] | None:
    """The lower-case names a 400 "Failed to find metric configuration ... Valid metrics: a,b"
    lists (Azure Monitor's flat error body ``{"code", "message"}``); None for any other answer."""
    if response.status_code != 400:
        return None
    try:
        body = json.loads(response.content or b"null")
    except ValueError:
        return None
    message = body.get("message") if isinstance(body, dict) else None
    if not isinstance(message, str):
        error = body.get("error") if isinstance(body, dict) else None
        message = error.get("message") if isinstance(error, dict) else None
    found = UNPUBLISHED.search(message) if isinstance(message, str) else None
    if found is None:
        return None
    return frozenset(n.strip().lower() for n in found.group("names").split(",") if n.strip())
