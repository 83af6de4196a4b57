"""The one place the Azure SDK is configured: credential, cloud or endpoint, TLS, pipeline.

Every client gets the same pipeline, built here without the SDK's automatic resource-provider
registration (a POST, then unbounded polling, on a 409), with the live boundary
(`scanner.sources.live.boundary`): the token only for the ARM endpoint's origin, bounded
retries that honour ``Retry-After`` up to a limit, timeouts on every request and a time limit
on the scan. Underneath sits azai's transport (`scanner.sources.live.transport`), which
refuses any request that could write (only GET, and POST to Resource Graph, pass) and spaces
requests with the token buckets here, per subscription and for Resource Graph, so a large scan
stays inside ARM's quotas.
"""

from __future__ import annotations

import functools
import importlib
import logging
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from scanner.sources.live.boundary import Boundary, Limits, endpoint_only_policy, retry_policy
from scanner.sources.live.redaction import RecordingCredential
from scanner.sources.live.sdk import require_live_sdk
from scanner.sources.live.transport import GRAPH_PATH, arm_transport

CLOUDS = {
    "AzureCloud": ("https://management.azure.com", "login.microsoftonline.com"),
    "AzureUSGovernment": ("https://management.usgovcloudapi.net", "login.microsoftonline.us"),
    "AzureChinaCloud": ("https://management.chinacloudapi.cn", "login.chinacloudapi.cn"),
}
GRAPH_API = "2021-03-01"
# The azure-mgmt client of each service, imported on first use (start-up stays free of azure),
# and whether it is built for a subscription.
SERVICES = {
    "subscriptions": ("azure.mgmt.resource.subscriptions", "SubscriptionClient", False),
    "compute": ("azure.mgmt.compute", "ComputeManagementClient", True),
    "containers": ("azure.mgmt.containerservice", "ContainerServiceClient", True),
}


class TokenBucket:
    """``rate`` requests a second on average, ``burst`` at once."""

    def __init__(self, rate: float, burst: int) -> None:
        self.rate, self.capacity = rate, float(burst)
        self.tokens = float(burst)
        self.updated = time.monotonic()
        self.lock = threading.Lock()

    def acquire(self) -> None:
        while True:
            with self.lock:
                now = time.monotonic()
                self.tokens = min(self.capacity, self.tokens + (now - self.updated) * self.rate)
                self.updated = now
                if self.tokens >= 1:
                    self.tokens -= 1
                    return
                wait = (1 - self.tokens) / self.rate
            time.sleep(wait)


@dataclass
class RateLimits:
    """Client-side limits, as azqr uses: ARM 20/s (burst 100) per subscription, Resource Graph 3/s (burst 15)."""

    arm_rate: float = 20.0
    arm_burst: int = 100
    graph_rate: float = 3.0
    graph_burst: int = 15
    _buckets: dict[str, TokenBucket] = field(default_factory=dict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def bucket(self, path: str) -> TokenBucket:
        """The bucket of a request to the lower-case ``path``."""
        if path.endswith(GRAPH_PATH):
            key, rate, burst = "graph", self.graph_rate, self.graph_burst
        else:
            parts = path.split("/")
            key = parts[2] if len(parts) > 2 and parts[1] == "subscriptions" else "tenant"
            rate, burst = self.arm_rate, self.arm_burst
        with self._lock:
            if key not in self._buckets:
                self._buckets[key] = TokenBucket(rate, burst)
            return self._buckets[key]


def endpoint_proxy(endpoint: str) -> str | None:
    """The proxy for the ARM endpoint, from the environment (``HTTPS_PROXY``, ``ALL_PROXY``,
    ``NO_PROXY``...) as requests reads and picks it. Read once per scan: every request goes to
    this one origin (the boundary refuses any other)."""
    import requests

    proxies = requests.utils.get_environ_proxies(endpoint, no_proxy=None)
    chosen: str | None = requests.utils.select_proxy(endpoint, proxies)
    return chosen


def request_headers_policy(user_agent: str) -> Any:
    """Sets, on every request, the ``User-Agent`` (``user_agent``: azure-core's UserAgentPolicy
    string, worked out once) and an ``x-ms-client-request-id``, as azure-core's RequestIdPolicy
    does, from a random GUID prefix and a counter: one GUID per request, unique in and across
    scans, for Azure support to trace a call by. A header the caller set is kept. One policy
    for what the two did: RequestIdPolicy built a time-based UUID per request (2 % of a live
    scan's CPU), and each policy in the pipeline costs its own calls on every request. Each
    policy (one per client) draws its own prefix."""
    return _request_headers_class()(user_agent)


@functools.cache
def _request_headers_class() -> type:
    import itertools
    import uuid

    from azure.core.pipeline.policies import SansIOHTTPPolicy

    class RequestHeaders(SansIOHTTPPolicy[Any, Any]):
        def __init__(self, user_agent: str) -> None:
            self.user_agent = user_agent
            self.prefix = str(uuid.uuid4())[:24]  # "xxxxxxxx-xxxx-4xxx-yxxx-": the last 12 digits count
            self.next = itertools.count(1).__next__  # one C call, atomic under the GIL

        def on_request(self, request: Any) -> None:
            headers = request.http_request.headers
            if "x-ms-client-request-id" not in headers:
                headers["x-ms-client-request-id"] = f"{self.prefix}{self.next() % 16**12:012x}"
            if "User-Agent" not in headers:
                headers["User-Agent"] = self.user_agent

    return RequestHeaders


class ClientFactory:
    """Builds every azure-mgmt client from one credential, endpoint, transport and pipeline."""

    def __init__(
        self,
        cloud: str = "AzureCloud",
        arm_endpoint: str | None = None,
        limits: RateLimits | None = None,
        bounds: Limits | None = None,
        timeout: float | None = None,
    ) -> None:
        require_live_sdk("a live scan")
        from azure.identity import DefaultAzureCredential

        if not os.environ.get("AZAI_DEBUG"):
            # azure-identity logs every failed credential attempt at WARNING, a dozen lines on
            # stderr; azai reports one line instead. AZAI_DEBUG=1 shows them again.
            logging.getLogger("azure").addHandler(logging.NullHandler())
            logging.getLogger("azure").propagate = False
        manager, authority = CLOUDS[cloud]
        self.base_url = (arm_endpoint or manager).rstrip("/")
        self.scope = f"{manager}/.default"
        self.boundary = Boundary(self.base_url, bounds, timeout)
        self.credential = RecordingCredential(
            DefaultAzureCredential(authority=authority, exclude_interactive_browser_credential=True),
            self.boundary.redactor,
        )
        bundle = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("SSL_CERT_FILE") or None
        self.transport = arm_transport(self.boundary, limits or RateLimits(), bundle, endpoint_proxy(self.base_url))
        from azure.core.pipeline.policies import UserAgentPolicy

        from scanner import __version__

        self.user_agent: str = UserAgentPolicy(user_agent=f"azai/{__version__}").user_agent
        # One client per service and subscription, built on first use and shared by the threads.
        self.clients: dict[tuple[str, str], Any] = {}
        self._raw: Any = None
        self.built = 0
        self._clients_lock = threading.Lock()

    @property
    def requests(self) -> int:
        """Requests sent so far (retries included)."""
        return self.boundary.requests

    def _policies(self, decode: bool = True) -> list[Any]:
        """The policies of the SDK's default ARM pipeline that act on a scan's reads, with the
        boundary's retry policy, and its origin check just before authentication, where every
        attempt (a redirect, a retry, a next page) passes before the token is added.
        ARMAutoResourceProviderRegistrationPolicy, which writes, is left out.
        Left out, as they would do nothing but cost CPU on every request:
        - the headers, proxy and custom-hook policies: azai passes them nothing, and the proxy
          is the transport's (`endpoint_proxy`);
        - HTTP and network-trace logging and distributed tracing: azai never turns them on
          (its ``azure`` loggers log nothing below a warning);
        - the sensitive-header cleanup, which drops the token when a redirect leaves the
          domain: the origin check refuses any such request before the token is added.
        User-Agent and request ids are set by one policy (`request_headers_policy`).
        ``decode`` keeps the content-decode policy, which only the typed SDK calls read."""
        from azure.core.pipeline import policies
        from azure.mgmt.core.policies import ARMChallengeAuthenticationPolicy

        return [
            request_headers_policy(self.user_agent),
            *([policies.ContentDecodePolicy()] if decode else []),
            policies.RedirectPolicy(),
            retry_policy(self.boundary, retry_total=4, retry_status=4, retry_backoff_max=20, timeout=600),
            endpoint_only_policy(self.boundary),
            ARMChallengeAuthenticationPolicy(self.credential, self.scope),
        ]

    def url(self, path: str, params: dict[str, str]) -> str:
        """The absolute URL of the ARM ``path`` with the query ``params``, as ``format_url`` and
        ``HttpRequest(params=...)`` write it (``key=value`` pairs as given: the transport quotes
        what needs quoting), without parsing it twice on the way: 3 % of a live scan's CPU."""
        return f"{self.base_url}{path}?" + "&".join(f"{key}={value}" for key, value in params.items())

    def raw(self) -> Any:
        """The one pipeline client of azai's raw reads (lists, Resource Graph pages, single
        GETs), which parse their JSON themselves (`scanner.sources.live.shapes.json_body`). It
        has no content-decode policy, which decoded and parsed every body a second time for
        nothing, and its ``send_request`` sends the request it is given, where a generated
        client's deep-copies it first: together 8 % of a live scan's CPU."""
        client = self._raw
        if client is None:
            with self._clients_lock:
                client = self._raw
                if client is None:
                    from azure.mgmt.core import ARMPipelineClient

                    policies = self._policies(decode=False)
                    client = self._raw = ARMPipelineClient(self.base_url, policies=policies, transport=self.transport)
                    self.built += 1
        return client

    def _client(self, service: str, subscription: str = "") -> Any:
        """The client of ``service`` for ``subscription``, built once: a client and its pipeline
        cost more CPU to build than a request does to send."""
        key = (service, subscription)
        client = self.clients.get(key)
        if client is None:
            with self._clients_lock:
                client = self.clients.get(key)
                if client is None:
                    client = self.clients[key] = self._build(service, subscription)
                    self.built += 1
        return client

    def _build(self, service: str, subscription: str) -> Any:
        module, name, per_subscription = SERVICES[service]
        client_class = getattr(importlib.import_module(module), name)
        scoped = (subscription,) if per_subscription else ()
        return client_class(
            self.credential,
            *scoped,
            base_url=self.base_url,
            policies=self._policies(),
            transport=self.transport,
            credential_scopes=[self.scope],
        )

    def subscriptions(self) -> Any:
        return self._client("subscriptions")

    def compute(self, subscription: str) -> Any:
        return self._client("compute", subscription)

    def containers(self, subscription: str) -> Any:
        return self._client("containers", subscription)

    def close(self) -> None:
        """Ends the credential's session and the transport's kept-alive connections."""
        self.credential.close()
        self.transport.close()
