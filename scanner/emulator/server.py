"""The emulator's HTTPS server: ARM and Resource Graph routes in Azure's real response shapes.

What it reproduces, because the scanner must cope with it (shared/reference/azure-live.md §8):
Bearer tokens required (401 without), ``api-version`` required (400 without), ``nextLink``
paging with absolute links, case-insensitive routes, ``x-ms-*`` headers, Resource Graph
``$skipToken`` paging, its ``resourcechanges`` table (an estate's change records, within
Graph's 14 days: `_changes`), and injected faults: 429 with ``Retry-After``, transient 5xx, slow
responses, 403 on chosen subscriptions, and hostile answers (`scanner.emulator.hostile`): links
off the endpoint or in a loop, stalls, trickles, any status, headers or body. Every request is
logged, so tests can assert that a scan never wrote. A plain-HTTP managed-identity token endpoint lets an unchanged
``DefaultAzureCredential`` authenticate (App Service flow: IDENTITY_ENDPOINT, IDENTITY_HEADER).
"""

from __future__ import annotations

import datetime as dt
import json
import re
import ssl
import tempfile
import threading
import time
import uuid
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

from scanner.emulator import contract
from scanner.emulator.cert import make_certificate
from scanner.emulator.estate import Estate
from scanner.emulator.hostile import Answer, Witness, deliver, render
from scanner.model.resources import parse_resource_id

IDENTITY_HEADER = "azai-emulator"
_TYPES_IN_QUERY = re.compile(r"type\s+in~\s*\(([^)]*)\)", re.IGNORECASE)


class _Server(ThreadingHTTPServer):
    """A threading HTTP server with room for a scan's burst of connections: socketserver's
    listen backlog of 5 made the kernel drop the rest of the 32 a live scan opens at once, and
    each dropped client waited a second to retry, which real ARM never makes it do."""

    request_queue_size = 128


@dataclass
class Faults:
    """Failures to inject. Counters are per emulator, so runs are deterministic."""

    throttle_every: int = 0  # every Nth new ARM request answers 429 with Retry-After; its retry succeeds
    retry_after_seconds: int = 1  # 0 in tests that only check the retry happens
    error_every: int = 0  # every Nth new ARM request answers 503; its retry succeeds
    latency_seconds: float = 0.0  # added to every response
    deny_subscriptions: set[str] = field(default_factory=set)  # 403 AuthorizationFailed
    page_size: int = 100  # ARM list page size (Resource Graph pages by $top, at most 1000)
    # Subscriptions a tenant or management-group Resource Graph query evaluates; 0: Azure's own
    # limit (`contract.TENANT_SUBSCRIPTION_LIMIT`). Tests set a small one instead of 10,000.
    tenant_subscription_limit: int = 0
    # Resource Graph queries whose text holds one of these (case-insensitive: "resourcechanges")
    # answer their first request 429 as Graph throttles, with no Retry-After but its quota
    # headers (x-ms-user-quota-remaining 0, x-ms-user-quota-resets-after hh:mm:ss); the retry
    # succeeds. shared/reference/azure-live.md, Resource Graph quota.
    throttle_queries: tuple[str, ...] = ()
    # Hostile answers by lower-case path suffix: every request whose path ends with one gets it.
    answers: dict[str, Answer] = field(default_factory=dict)
    # The next-page link of a collection's first page (the $skipToken of a Resource Graph
    # answer), by lower-case path suffix: in a string, "{offhost}" becomes the witness's
    # origin, "{same}" the request's own URL (a loop) and "{endpoint}" the emulator's origin
    # (a link that changes the query); any other value is sent as it is.
    next_links: dict[str, Any] = field(default_factory=dict)


def _schedules_in_view(schedules: list[dict[str, Any]], view: str) -> list[dict[str, Any]]:
    """AML's schedules list by ``listViewType`` (2025-12-01 ScheduleListViewType): EnabledOnly,
    the default, DisabledOnly or All."""
    if view.lower() == "all":
        return schedules
    wanted = view.lower() != "disabledonly"
    return [s for s in schedules if (s.get("properties") or {}).get("isEnabled", True) is wanted]


def _table_of(body: Any) -> str:
    """The table a Resource Graph query's body (``{"query": "table | ..."}``) reads, lower-case;
    "" for any other body."""
    query = body.get("query") if isinstance(body, dict) else None
    return query.split("|", 1)[0].strip().lower() if isinstance(query, str) else ""


def _by_suffix(table: dict[str, Any], path: str) -> Any:
    lowered = path.lower()
    return next((value for suffix, value in table.items() if lowered.endswith(suffix)), None)


@dataclass(frozen=True)
class LoggedRequest:
    method: str
    path: str
    query: str
    status: int
    table: str = ""  # a Resource Graph query's table (lower-case), so tests can count its pages


class Emulator:
    """Start with ``start()``; ``endpoint`` and ``ca_bundle`` tell clients where and what to trust."""

    def __init__(self, estate: Estate, faults: Faults | None = None) -> None:
        self.estate = estate
        self.faults = faults or Faults()
        self.log: list[LoggedRequest] = []
        self._lock = threading.Lock()
        self._counter = 0
        self._faulted: set[str] = set()
        self._directory = tempfile.TemporaryDirectory(prefix="azai-emulator-")
        self.ca_bundle, key = make_certificate(Path(self._directory.name))
        self._arm = _Server(("127.0.0.1", 0), _handler(self, tls=True))
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.ca_bundle, key)
        self._arm.socket = context.wrap_socket(self._arm.socket, server_side=True)
        self._identity = _Server(("127.0.0.1", 0), _handler(self, tls=False))
        self.witness = Witness(self.ca_bundle, key)
        self.stopping = threading.Event()  # ends stalled and trickled answers
        self._threads: list[threading.Thread] = []

    @property
    def endpoint(self) -> str:
        return f"https://127.0.0.1:{self._arm.server_address[1]}"

    @property
    def identity_endpoint(self) -> str:
        return f"http://127.0.0.1:{self._identity.server_address[1]}/msi/token"

    def environment(self) -> dict[str, str]:
        """Variables that point an unchanged DefaultAzureCredential and TLS trust at the emulator."""
        return {
            "IDENTITY_ENDPOINT": self.identity_endpoint,
            "IDENTITY_HEADER": IDENTITY_HEADER,
            "REQUESTS_CA_BUNDLE": str(self.ca_bundle),
            "SSL_CERT_FILE": str(self.ca_bundle),
        }

    def start(self) -> Emulator:
        for server in (self._arm, self._identity, self.witness.server):
            # A short poll: stopping waits for it, and tests start and stop emulators often.
            thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
            thread.start()
            self._threads.append(thread)
        return self

    def serve(self, estate: Estate, faults: Faults | None = None) -> Emulator:
        """Serve another estate, with fresh faults and an empty log, without restarting: the
        certificate, ports and environment stay, so one emulator can serve a module's tests."""
        with self._lock:
            self.estate = estate
            self.faults = faults or Faults()
            self.log = []
            self._counter = 0
            self._faulted = set()
            self.witness.seen.clear()
        return self

    def stop(self) -> None:
        self.stopping.set()
        for server in (self._arm, self._identity, self.witness.server):
            server.shutdown()
            server.server_close()
        self._directory.cleanup()

    def __enter__(self) -> Emulator:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()

    def fault_for(self, key: str, throttled_query: bool = False) -> str | None:
        """'throttle', 'graph-throttle', 'error' or None for a request (``throttled_query``: a
        Resource Graph query `Faults.throttle_queries` names); a request already faulted once
        goes through."""
        faults = self.faults
        with self._lock:
            if key in self._faulted:
                return None
            self._counter += 1
            kind = None
            if throttled_query:
                kind = "graph-throttle"
            elif faults.throttle_every and self._counter % faults.throttle_every == 0:
                kind = "throttle"
            elif faults.error_every and self._counter % faults.error_every == 0:
                kind = "error"
            if kind:
                self._faulted.add(key)
            return kind

    def record(self, entry: LoggedRequest) -> None:
        with self._lock:
            self.log.append(entry)

    def writes(self) -> list[LoggedRequest]:
        """Requests that could change something: any non-GET except Resource Graph queries and tokens."""
        return [
            r
            for r in self.log
            if r.method != "GET" and not r.path.lower().endswith("/providers/microsoft.resourcegraph/resources")
        ]


def _handler(emulator: Emulator, tls: bool) -> type[BaseHTTPRequestHandler]:
    """The request handler class of one of the emulator's two servers (the ARM one over TLS, or
    the plain-HTTP token endpoint): ``http.server`` makes a handler per request from a class, so
    the emulator it serves and which server it is are set on a subclass made for each."""

    class Handler(_Handler):
        pass

    Handler.emulator, Handler.tls = emulator, tls
    return Handler


class _Handler(BaseHTTPRequestHandler):
    """Answers one request as Azure would (see the module's docstring): routes, faults and the
    request log of ``emulator``; on the plain-HTTP server (``tls`` false), only the token endpoint."""

    emulator: Emulator  # set on the subclass `_handler` makes
    tls: bool
    table = ""  # the table of the Resource Graph query being answered (`LoggedRequest.table`)

    protocol_version = "HTTP/1.1"
    # Headers and body go out in separate writes; with Nagle's algorithm on, the client's
    # delayed ACK then holds every response about 40 ms, which real ARM does not do.
    disable_nagle_algorithm = True

    def log_message(self, *_: Any) -> None:  # quiet: the request log is the record
        return

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode("utf-8")
        # Recorded before the answer goes out: a client that has its answer (a test about to
        # count requests) must find the request in the log, whatever the threads' timing.
        split = urlsplit(self.path)
        self.emulator.record(LoggedRequest(self.command, split.path, split.query, status, self.table))
        self.send_response(status)
        self.send_header("Content-Type", "application/json; charset=utf-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("x-ms-request-id", str(uuid.uuid4()))
        self.send_header("x-ms-correlation-request-id", str(uuid.uuid4()))
        self.send_header("x-ms-ratelimit-remaining-subscription-reads", "11999")
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self.wfile.write(data)

    def _error(self, status: int, code: str, message: str, headers: dict[str, str] | None = None) -> None:
        self._send(status, {"error": {"code": code, "message": message}}, headers)

    def do_GET(self) -> None:
        self._dispatch()

    def do_POST(self) -> None:
        self._dispatch()

    def do_PUT(self) -> None:
        self._dispatch()

    def do_PATCH(self) -> None:
        self._dispatch()

    def do_DELETE(self) -> None:
        self._dispatch()

    def _body(self) -> Any:
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length) if length else b""
        return json.loads(raw) if raw else {}

    def _dispatch(self) -> None:
        body = self._body() if self.command in ("POST", "PUT", "PATCH") else None
        # One handler serves every request of a kept-alive connection: the table is this one's.
        self.table = _table_of(body)
        split = urlsplit(self.path)
        path, query = split.path.rstrip("/"), parse_qs(split.query)
        if not self.tls:
            return self._token(path, query)
        if path.lower() == "/api/retail/prices":  # the public Retail Prices API needs no token
            return self._prices(query)
        faults = self.emulator.faults
        if faults.latency_seconds:
            time.sleep(faults.latency_seconds)
        if not self.headers.get("Authorization", "").startswith("Bearer "):
            return self._error(
                401, "AuthenticationFailed", "Authentication failed. The 'Authorization' header is missing."
            )
        if "api-version" not in query:
            return self._error(
                400, "MissingApiVersionParameter", "The api-version query parameter (?api-version=) is required."
            )
        answer: Answer | None = _by_suffix(faults.answers, path)
        if answer is not None:
            token = self.headers.get("Authorization", "").removeprefix("Bearer ")
            self.emulator.record(LoggedRequest(self.command, split.path, split.query, answer.status))
            return deliver(self, answer, render(answer, token, self.emulator.witness.endpoint), self.emulator.stopping)
        refused = contract.api_version_error(self.command, path, query["api-version"][0])
        if refused is not None:
            return self._send(*refused)
        if self._injected_fault(body):
            return None
        return self._route(path, query, body)

    def _injected_fault(self, body: Any) -> bool:
        """Answer the 429 or 503 the faults inject for this request, if it gets one (its retry
        does not): whether it did."""
        faults = self.emulator.faults
        query = str((body or {}).get("query", "")).lower() if isinstance(body, dict) else ""
        named = any(text.lower() in query for text in faults.throttle_queries)
        fault = self.emulator.fault_for(f"{self.command} {self.path} {json.dumps(body, sort_keys=True)}", named)
        if fault in ("throttle", "graph-throttle"):
            # The body is ARM's throttling answer for both (Graph's own body is not looked up;
            # azai reads the status and the headers): Graph says when to retry in its quota
            # headers, ARM in Retry-After.
            seconds = faults.retry_after_seconds
            message = f"Number of 'read' requests exceeded the limit. Please try again after '{seconds}' seconds."
            wait = (
                {"x-ms-user-quota-remaining": "0", "x-ms-user-quota-resets-after": f"00:00:{seconds:02d}"}
                if fault == "graph-throttle"
                else {"Retry-After": str(seconds)}
            )
            self._error(429, "SubscriptionRequestsThrottled", message, wait)
            return True
        if fault == "error":
            self._error(503, "ServiceUnavailable", "The service is temporarily unavailable.")
            return True
        return False

    def _route(self, path: str, query: dict[str, list[str]], body: Any) -> None:
        """An authenticated request that no fault took: a Resource Graph query, else a read (the
        emulator refuses writes, and reads of a denied subscription)."""
        if self.command == "POST" and path.lower() == "/providers/microsoft.resourcegraph/resources":
            return self._graph(body or {})
        if self.command != "GET":
            return self._error(405, "MethodNotAllowed", "The emulator is read-only.")
        denied = next(
            (
                s
                for s in self.emulator.faults.deny_subscriptions
                if path.lower().startswith(f"/subscriptions/{s.lower()}")
            ),
            None,
        )
        if denied:
            return self._denied(denied)
        return self._get(path, query)

    def _denied(self, scope: str) -> None:
        self._error(
            403,
            "AuthorizationFailed",
            f"The client does not have authorization to perform action 'read' over scope '/subscriptions/{scope}' "
            "or the scope is invalid.",
        )

    def _token(self, path: str, query: dict[str, list[str]]) -> None:
        if path != "/msi/token" or self.headers.get("X-IDENTITY-HEADER") != IDENTITY_HEADER:
            return self._error(400, "BadRequest", "unknown identity request")
        resource = query.get("resource", ["https://management.azure.com"])[0]
        self._send(
            200,
            {
                "access_token": f"emulator-token-{uuid.uuid4()}",
                "expires_on": str(int(time.time()) + 3600),
                "resource": resource,
                "token_type": "Bearer",
            },
        )

    def _page(self, items: list[dict[str, Any]], query: dict[str, list[str]], path: str) -> None:
        start = int(query.get("$skiptoken", ["0"])[0])
        size = self.emulator.faults.page_size
        page: dict[str, Any] = {"value": items[start : start + size]}
        if start + size < len(items):
            params = {"api-version": query["api-version"][0], "$skiptoken": str(start + size)}
            page["nextLink"] = f"{self.emulator.endpoint}{path}?{urlencode(params)}"
        hostile = _by_suffix(self.emulator.faults.next_links, path)
        if hostile is not None and start == 0:
            page["nextLink"] = self._link(hostile)
        self._send(200, page)

    def _link(self, value: Any) -> Any:
        if not isinstance(value, str):
            return value
        own = self.emulator.endpoint + self.path
        value = value.replace("{offhost}", self.emulator.witness.endpoint).replace("{same}", own)
        return value.replace("{endpoint}", self.emulator.endpoint)

    def _get(self, path: str, query: dict[str, list[str]]) -> None:
        """An ARM read: a tenant-level route, a list under a subscription, else a resource or
        what hangs off it; Azure's 404 for anything else."""
        if self._tenant_read(path, query):
            return
        if self._subscription_list(path, query):
            return
        if not self._resource_read(path, query):
            self._error(404, "ResourceNotFound", f"The resource '{path}' was not found.")

    def _tenant_read(self, path: str, query: dict[str, list[str]]) -> bool:
        """Answer a read above any subscription (the subscriptions list, one subscription, a
        management group's descendants), if ``path`` is one: whether it was."""
        lowered = path.lower()
        estate = self.emulator.estate
        if lowered == "/subscriptions":
            self._page(estate.subscriptions, query, path)
            return True
        match = re.fullmatch(r"/subscriptions/([^/]+)", lowered)
        if match:
            found = next((s for s in estate.subscriptions if s["subscriptionId"].lower() == match.group(1)), None)
            if found:
                self._send(200, found)
            else:
                self._error(404, "SubscriptionNotFound", "not found")
            return True
        match = re.fullmatch(r"/providers/microsoft.management/managementgroups/([^/]+)/descendants", lowered)
        if match:
            self._page(self._descendants(match.group(1)), query, path)
            return True
        return False

    def _subscription_list(self, path: str, query: dict[str, list[str]]) -> bool:
        """Answer a list under a subscription (compute SKUs, resource groups, resources, a
        region's models), if ``path`` is one: whether it was."""
        lowered = path.lower()
        if re.fullmatch(r"/subscriptions/[^/]+/providers/microsoft.compute/skus", lowered):
            self._page(self._skus(query), query, path)
            return True
        match = re.fullmatch(r"/subscriptions/([^/]+)/resourcegroups", lowered)
        if match:
            self._page(self._resource_groups(match.group(1)), query, path)
            return True
        match = re.fullmatch(r"/subscriptions/([^/]+)/resources", lowered)
        if match:  # generic resource list, optionally $filter=resourceType eq '...'
            wanted = re.search(r"resourcetype eq '([^']+)'", query.get("$filter", [""])[0], re.IGNORECASE)
            items = [
                r
                for r in self.emulator.estate.by_subscription.get(match.group(1), [])
                if not wanted or r["type"].lower() == wanted.group(1).lower()
            ]
            self._page(items, query, path)
            return True
        match = re.fullmatch(
            r"/subscriptions/[^/]+/providers/microsoft.cognitiveservices/locations/([^/]+)/models", lowered
        )
        if match:  # Models - List: what a region offers, with lifecycle status and deprecation dates
            self._page(self.emulator.estate.location_models.get(match.group(1), []), query, path)
            return True
        return False

    def _skus(self, query: dict[str, list[str]]) -> list[dict[str, Any]]:
        """Resource SKUs - List: the estate's SKUs, only those of one location when the
        ``$filter`` names it."""
        wanted = re.search(r"location eq '([^']+)'", query.get("$filter", [""])[0])
        return [
            s
            for s in self.emulator.estate.skus
            if not wanted or wanted.group(1).lower() in [x.lower() for x in s.get("locations", [])]
        ]

    def _resource_groups(self, subscription: str) -> list[dict[str, Any]]:
        """Resource Groups - List: the groups the estate's resources in ``subscription`` (lower
        case) lie in, sorted by name."""
        estate = self.emulator.estate
        groups = sorted(
            {r["id"].split("/")[4] for r in estate.resources if r["id"].split("/")[2].lower() == subscription}
        )
        return [
            {
                "id": f"/subscriptions/{subscription}/resourceGroups/{g}",
                "name": g,
                "type": "Microsoft.Resources/resourceGroups",
                "location": "eastus",
                "properties": {"provisioningState": "Succeeded"},
            }
            for g in groups
        ]

    def _resource_read(self, path: str, query: dict[str, list[str]]) -> bool:
        """Answer a read of a resource, its metrics or models list, its extension resources or
        its children, if ``path`` is one: whether it was."""
        lowered = path.lower()
        estate = self.emulator.estate
        if lowered.endswith("/providers/microsoft.insights/metrics"):
            self._metrics(path[: -len("/providers/Microsoft.Insights/metrics")], query)
            return True
        if lowered.endswith("/models") and lowered[: -len("/models")] in estate.account_models:
            self._page(estate.account_models[lowered[: -len("/models")]], query, path)
            return True
        resource = estate.by_id.get(lowered)
        if resource is not None:
            self._send(200, resource)
            return True
        target, marker, extension = lowered.rpartition("/providers/")
        if marker and target in estate.by_id:  # extension resources of one target
            self._page(estate.children.get((target, "providers/" + extension), []), query, path)
            return True
        parent, _, child_type = path.rpartition("/")
        if parent.lower() in estate.by_id:
            children = estate.children.get((parent.lower(), child_type.lower()), [])
            if child_type.lower() == "schedules":
                children = _schedules_in_view(children, query.get("listViewType", ["EnabledOnly"])[0])
            self._page(children, query, path)
            return True
        return False

    def _descendants(self, group: str) -> list[dict[str, Any]]:
        """Management Groups - Get Descendants: the group's subscriptions (the estate's
        management groups are flat), in the spec example's shape."""
        estate = self.emulator.estate
        name = next((g for g in estate.management_groups if g.lower() == group), None)
        members = {s.lower() for s in estate.management_groups.get(name or "", [])}
        parent = {"id": f"/providers/Microsoft.Management/managementGroups/{name}"}
        return [
            {
                "id": f"/subscriptions/{s['subscriptionId']}",
                "type": "Microsoft.Management/managementGroups/subscriptions",
                "name": s["subscriptionId"],
                "properties": {"displayName": s["displayName"], "parent": parent},
            }
            for s in estate.subscriptions
            if s["subscriptionId"].lower() in members
        ]

    def _metrics(self, resource_id: str, query: dict[str, list[str]]) -> None:
        """Azure Monitor ``metrics.list`` as it answers (`contract`): a 400 for a name the
        resource does not publish or a dimension a named metric lacks; else, per metric,
        ``errorCode`` InvalidSamplingType (no series) for an aggregation it lacks, or the
        estate's error for it, or hourly samples per dimension value under each asked
        aggregation. A published metric without a series in the estate answers Success
        with no timeseries, as Azure does when no dimension value had data."""
        estate = self.emulator.estate
        key = resource_id.lower()
        resource = estate.by_id.get(key)
        resource_type = resource["type"] if resource else (parse_resource_id(resource_id).resource_type or "")
        names = [n for n in query.get("metricnames", [""])[0].split(",") if n]
        filter_text = query.get("$filter", [""])[0]
        published = estate.published_metrics.get(key)
        refused = contract.metrics_request_error(resource_type, names, filter_text, published)
        if refused is not None:
            return self._send(*refused)
        timespan = query.get("timespan", ["2026-11-01T00:00:00Z/2026-11-08T00:00:00Z"])[0]
        split = re.search(r"(\w+)\s+eq\s+'\*'", filter_text)
        asked = [a.strip() for a in query.get("aggregation", ["Average"])[0].split(",") if a.strip()]
        value = [
            self._metric(resource_id, resource_type, name, asked, split.group(1) if split else None, timespan)
            for name in names
        ]
        body = {
            "cost": 0,
            "timespan": timespan,
            "interval": "PT1H",
            "value": value,
            "namespace": query.get("metricnamespace", [resource_type])[0],
            "resourceregion": (resource or {}).get("location", "eastus"),
        }
        self._send(200, body)

    def _metric(
        self, resource_id: str, resource_type: str, name: str, asked: list[str], dimension: str | None, start: str
    ) -> dict[str, Any]:
        """One metric of a metrics answer (the Metric shape of the 2024-02-01 spec)."""
        estate = self.emulator.estate
        entry: dict[str, Any] = {
            "id": f"{resource_id}/providers/Microsoft.Insights/metrics/{name}",
            "type": "Microsoft.Insights/metrics",
            "name": {"value": name, "localizedValue": name},
            "unit": "Unspecified",
            "timeseries": [],
        }
        failure = estate.metric_errors.get(resource_id.lower(), {}).get(name.lower())
        failure = failure or contract.metric_error(resource_type, name, asked)
        if failure is not None:
            return entry | {"errorCode": failure[0], "errorMessage": failure[1]}
        known = {k.lower(): v for k, v in estate.metrics.get(resource_id.lower(), {}).items()}
        fields = [a.lower() for a in asked]
        stamp = start.split("/")[0]
        for key, samples in sorted(known.get(name.lower(), {}).items()):
            data = [{"timeStamp": f"{stamp}+{i}h", **dict.fromkeys(fields, v)} for i, v in enumerate(samples)]
            labels = [{"name": {"value": dimension, "localizedValue": dimension}, "value": key}]
            entry["timeseries"].append({"data": data, "metadatavalues": labels if dimension and key else []})
        return entry | {"errorCode": "Success"}

    def _prices(self, query: dict[str, list[str]]) -> None:
        """The Retail Prices API: ``Items`` pages of 100 with an absolute ``NextPageLink``."""
        wanted = re.search(r"armRegionName eq '([^']+)'", query.get("$filter", [""])[0])
        items = [
            i for i in self.emulator.estate.retail_prices if not wanted or i.get("armRegionName") == wanted.group(1)
        ]
        skip = int(query.get("$skip", ["0"])[0])
        page = items[skip : skip + 100]
        link = None
        if skip + 100 < len(items):
            params = urlencode({"$filter": query.get("$filter", [""])[0], "$skip": skip + 100})
            link = f"{self.emulator.endpoint}/api/retail/prices?{params}"
        self._send(
            200,
            {
                "BillingCurrency": "USD",
                "CustomerEntityId": "Default",
                "CustomerEntityType": "Retail",
                "Items": page,
                "NextPageLink": link,
                "Count": len(page),
            },
        )

    def _graph(self, request: dict[str, Any]) -> None:
        """Resources - Resources (Resource Graph): a query of the subscriptions the request names,
        or of the tenant or management groups (``resourcecontainers``), paged by ``$skipToken``."""
        options = request.get("options") or {}
        query = str(request.get("query", ""))
        subscriptions = [s.lower() for s in request.get("subscriptions") or []]
        denied = [s for s in subscriptions if s in {d.lower() for d in self.emulator.faults.deny_subscriptions}]
        if denied:
            return self._denied(denied[0])
        headers = {"x-ms-user-quota-remaining": "14", "x-ms-user-quota-resets-after": "00:00:05"}
        containers = "resourcecontainers" in query.lower()
        in_scope = self._graph_scope(request.get("managementGroups") or [])
        refused = contract.graph_request_error(request, 0 if subscriptions else len(in_scope))
        if refused is not None:
            return self._send(*refused)
        if query.split("|", 1)[0].strip().lower() == contract.CHANGES_TABLE:
            scope = subscriptions or [s["subscriptionId"].lower() for s in in_scope]
            return self._changes(query, scope, options, headers)
        if containers:
            rows = self._subscription_rows(in_scope, subscriptions, headers)
        else:
            rows = self._resource_rows(query, subscriptions)
        return self._send(200, self._graph_page(rows, options, containers), headers)

    def _changes(self, query: str, subscriptions: list[str], options: dict[str, Any], headers: dict[str, str]) -> None:
        """A query of the ``resourcechanges`` table (`contract.changes_query`): the estate's
        change records of ``subscriptions`` still within Resource Graph's retention, narrowed to
        the targets and the time the query names, in id order, with the projected columns only;
        paged by ``$skipToken`` like any query. A query it cannot read is refused as Graph
        refuses one it cannot parse."""
        asked = contract.changes_query(query)
        if not isinstance(asked, contract.ChangesQuery):
            return self._send(*asked)
        now = dt.datetime.now(dt.UTC)
        retention = dt.timedelta(days=contract.change_table()["retention_days"])
        oldest = now - min(retention, asked.since or retention)
        rows = [
            row
            for when, row in self.emulator.estate.change_rows(now)
            if when >= oldest
            and row["subscriptionId"].lower() in subscriptions
            and (asked.targets is None or row["properties"]["targetResourceId"].lower() in asked.targets)
        ]
        rows.sort(key=lambda row: row["id"].lower(), reverse=asked.descending)
        if asked.columns is not None:
            rows = [{column: row.get(column) for column in asked.columns} for row in rows]
        return self._send(200, self._graph_page(rows, options, True), headers)

    def _graph_scope(self, groups: list[str]) -> list[dict[str, Any]]:
        """The subscriptions a query without a subscription list covers: those of the named
        management groups, or every one in the tenant."""
        estate = self.emulator.estate
        members = {s.lower() for g in groups for s in estate.management_groups.get(g, [])}
        return [s for s in estate.subscriptions if not groups or s["subscriptionId"].lower() in members]

    def _subscription_rows(
        self, in_scope: list[dict[str, Any]], subscriptions: list[str], headers: dict[str, str]
    ) -> list[dict[str, Any]]:
        """The rows of a ``resourcecontainers`` query of the subscriptions ``in_scope``. A tenant
        or management-group query evaluates at most so many subscriptions, and says so in a
        header, set in ``headers`` (`contract`)."""
        limit = self.emulator.faults.tenant_subscription_limit or contract.TENANT_SUBSCRIPTION_LIMIT
        if not subscriptions and len(in_scope) > limit:
            in_scope = in_scope[:limit]
            headers[contract.SUBSCRIPTION_LIMIT_HEADER] = "true"
        return [{"id": s["id"], "subscriptionId": s["subscriptionId"], "name": s["displayName"]} for s in in_scope]

    def _resource_rows(self, query: str, subscriptions: list[str]) -> list[dict[str, Any]]:
        """The resources of ``subscriptions`` of the types the query's ``type in~ (...)`` names
        (all types when it names none), in the estate's id order ("/subscriptions/<id>/..."),
        whatever order the batch names them in."""
        types_match = _TYPES_IN_QUERY.search(query)
        wanted = {t.strip().strip("'\"").lower() for t in types_match.group(1).split(",")} if types_match else None
        return [
            r
            for s in sorted(set(subscriptions), key=lambda s: s + "/")
            for r in self.emulator.estate.by_subscription.get(s, [])
            if wanted is None or r["type"].lower() in wanted
        ]

    def _graph_page(self, rows: list[dict[str, Any]], options: dict[str, Any], complete: bool) -> dict[str, Any]:
        """One page of a Resource Graph answer, with the ``$skipToken`` of the next (or the
        hostile one the faults set); unless the rows are ``complete``, each of the page's
        resources gets the ``subscriptionId`` and ``resourceGroup`` columns."""
        top = contract.graph_page_size(options)
        skip = int(options.get("$skipToken") or 0)
        page = rows[skip : skip + top]
        if not complete:
            # only the page's rows get Graph's columns: copying every row of a batch for each
            # page made serving a batch quadratic (300 subscriptions: 30 pages x 30,000 rows)
            page = [
                {**r, "subscriptionId": r["id"].split("/")[2], "resourceGroup": r["id"].split("/")[4]} for r in page
            ]
        result: dict[str, Any] = {
            "totalRecords": len(rows),
            "count": len(page),
            "resultTruncated": "false",
            "data": page,
        }
        if skip + top < len(rows):
            result["$skipToken"] = str(skip + top)
        hostile = _by_suffix(self.emulator.faults.next_links, "/providers/microsoft.resourcegraph/resources")
        if hostile is not None:
            result["$skipToken"] = self._link(hostile)
        return result
