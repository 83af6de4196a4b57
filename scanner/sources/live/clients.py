"""The one place the Azure SDK is configured: credential, cloud or endpoint, TLS, pipeline.

Every client gets the same pipeline, built here without the SDK's automatic resource-provider
registration (a POST, then unbounded polling, on a 409), with the live boundary
(`scanner.sources.live.boundary`): the token only for the ARM endpoint's origin, bounded
retries that honour ``Retry-After`` up to a limit, timeouts on every request and a time limit
on the scan. Underneath sits a transport that refuses any request that could write (only GET,
and POST to Resource Graph, pass) and spaces requests with token buckets per subscription and
for Resource Graph, so a large scan stays inside ARM's quotas.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from scanner.sources.live.boundary import Boundary, Limits, bounded_adapter, endpoint_only_policy, retry_policy
from scanner.sources.live.redaction import RecordingCredential

CLOUDS = {
    "AzureCloud": ("https://management.azure.com", "login.microsoftonline.com"),
    "AzureUSGovernment": ("https://management.usgovcloudapi.net", "login.microsoftonline.us"),
    "AzureChinaCloud": ("https://management.chinacloudapi.cn", "login.chinacloudapi.cn"),
}
GRAPH_PATH = "/providers/microsoft.resourcegraph/resources"


class ReadOnlyViolation(RuntimeError):
    """A scan tried to send a request that could change Azure. This is a bug, never allowed."""


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

    def bucket(self, url: str) -> TokenBucket:
        path = urlsplit(url).path.lower()
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


def _transport(limits: RateLimits, verify: str | bool, boundary: Boundary) -> Any:
    import requests
    from azure.core.pipeline.transport import RequestsTransport

    class ReadOnlyTransport(RequestsTransport):  # type: ignore[misc]
        def send(self, request: Any, **kwargs: Any) -> Any:
            method = request.method.upper()
            path = urlsplit(request.url).path.lower()
            if method not in ("GET", "HEAD") and not (method == "POST" and path.endswith(GRAPH_PATH)):
                raise ReadOnlyViolation(f"refused {method} {request.url}: azai scans are read-only")
            boundary.check_origin(request.url)  # the policy's check, again where bytes leave
            limits.bucket(request.url).acquire()
            left = boundary.remaining()
            bounds = boundary.limits
            timeouts = (("connection_timeout", bounds.connect_timeout), ("read_timeout", bounds.read_timeout))
            for option, default in timeouts:
                given = kwargs.get(option)
                wanted = min(default, given) if isinstance(given, (int, float)) else default
                kwargs[option] = wanted if left is None else min(wanted, left)
            boundary.sent()
            return super().send(request, **kwargs)

    session = requests.Session()
    session.mount("https://", bounded_adapter(boundary))
    session.mount("http://", bounded_adapter(boundary))
    return ReadOnlyTransport(session=session, session_owner=False, connection_verify=verify)


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
        verify: str | bool = os.environ.get("REQUESTS_CA_BUNDLE") or os.environ.get("SSL_CERT_FILE") or True
        self.transport = _transport(limits or RateLimits(), verify, self.boundary)

    @property
    def requests(self) -> int:
        """Requests sent so far (retries included)."""
        return self.boundary.requests

    def _policies(self) -> list[Any]:
        """The SDK's default ARM pipeline minus ARMAutoResourceProviderRegistrationPolicy, with
        the boundary's retry policy, and its origin check just before authentication, where
        every attempt (a redirect, a retry, a next page) passes before the token is added."""
        from azure.core.pipeline import policies
        from azure.mgmt.core.policies import ARMChallengeAuthenticationPolicy, ARMHttpLoggingPolicy

        from scanner import __version__

        return [
            policies.RequestIdPolicy(),
            policies.HeadersPolicy(),
            policies.UserAgentPolicy(user_agent=f"azai/{__version__}"),
            policies.ProxyPolicy(),
            policies.ContentDecodePolicy(),
            policies.RedirectPolicy(),
            retry_policy(self.boundary, retry_total=4, retry_status=4, retry_backoff_max=20, timeout=600),
            endpoint_only_policy(self.boundary),
            ARMChallengeAuthenticationPolicy(self.credential, self.scope),
            policies.CustomHookPolicy(),
            policies.NetworkTraceLoggingPolicy(),
            policies.DistributedTracingPolicy(),
            policies.SensitiveHeaderCleanupPolicy(),
            ARMHttpLoggingPolicy(),
        ]

    def _kwargs(self) -> dict[str, Any]:
        return {
            "base_url": self.base_url,
            "policies": self._policies(),
            "transport": self.transport,
            "credential_scopes": [self.scope],
        }

    def subscriptions(self) -> Any:
        from azure.mgmt.resource.subscriptions import SubscriptionClient

        return SubscriptionClient(self.credential, **self._kwargs())

    def graph(self) -> Any:
        from azure.mgmt.resourcegraph import ResourceGraphClient

        return ResourceGraphClient(self.credential, **self._kwargs())

    def resources(self, subscription: str) -> Any:
        from azure.mgmt.resource.resources import ResourceManagementClient

        return ResourceManagementClient(self.credential, subscription, **self._kwargs())

    def compute(self, subscription: str) -> Any:
        from azure.mgmt.compute import ComputeManagementClient

        return ComputeManagementClient(self.credential, subscription, **self._kwargs())

    def containers(self, subscription: str) -> Any:
        from azure.mgmt.containerservice import ContainerServiceClient

        return ContainerServiceClient(self.credential, subscription, **self._kwargs())

    def close(self) -> None:
        self.credential.close()
