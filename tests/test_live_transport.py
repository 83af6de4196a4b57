"""How a live scan reaches ARM: through an enterprise proxy when the environment names one,
directly when ``NO_PROXY`` covers the endpoint, and with one SDK client per service and
subscription. Real azure-mgmt clients over HTTPS against the emulator on 127.0.0.1, and a real
CONNECT proxy on loopback that counts the tunnels it opens; no mocks of the SDK."""

from __future__ import annotations

import select
import socket
import socketserver
import threading
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

from scanner.emulator.estate import generate_estate
from scanner.engine.registry import every_live_read, load_checks
from scanner.sources.live.clients import ClientFactory
from scanner.sources.live.collect import LiveScope, Progress, collect_live
from tests.test_live import live_scan

PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")


class TunnelProxy(socketserver.ThreadingTCPServer):
    """An HTTPS proxy as enterprises run them: ``CONNECT host:port``, then bytes relayed both
    ways. It records the target of every tunnel it opens."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Tunnel)
        self.targets: list[str] = []
        self.lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Tunnel(socketserver.StreamRequestHandler):
    server: TunnelProxy

    def handle(self) -> None:
        method, target, _ = self.rfile.readline().decode("latin-1").split(" ", 2)
        while self.rfile.readline() not in (b"\r\n", b"\n", b""):  # the rest of the request head
            pass
        if method != "CONNECT":
            self.wfile.write(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
            return
        host, port = target.rsplit(":", 1)
        with socket.create_connection((host, int(port))) as upstream:
            with self.server.lock:
                self.server.targets.append(target)
            self.wfile.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
            self.wfile.flush()
            _relay(self.connection, upstream)


def _relay(client: socket.socket, upstream: socket.socket) -> None:
    """Copy bytes between the two sockets until either side closes."""
    peers = {client: upstream, upstream: client}
    while True:
        ready, _, _ = select.select(list(peers), [], [], 30)
        if not ready:
            return
        for sock in ready:
            data = sock.recv(65536)
            if not data:
                return
            peers[sock].sendall(data)


@pytest.fixture
def proxy(monkeypatch: pytest.MonkeyPatch) -> Iterator[TunnelProxy]:
    """A running tunnel proxy, and an environment that names no other proxy."""
    for variable in (*PROXY_VARIABLES, "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(variable, raising=False)
    server = TunnelProxy()
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def test_https_proxy_carries_every_connection_of_a_scan(serve, proxy, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    emulator = serve(generate_estate(3, 20))
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    result = live_scan(emulator)
    endpoint = urlsplit(emulator.endpoint).netloc
    assert proxy.targets and set(proxy.targets) == {endpoint}
    # connections are pooled through their tunnels: far fewer tunnels than requests
    assert len(proxy.targets) < len(emulator.log) / 2
    assert result.complete and result.findings and emulator.writes() == []


def test_no_proxy_covering_the_endpoint_bypasses_the_proxy(serve, proxy, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    emulator = serve(generate_estate(3, 20))
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    monkeypatch.setenv("NO_PROXY", "example.com,127.0.0.1")
    result = live_scan(emulator)
    assert proxy.targets == []
    assert result.complete and result.findings and emulator.writes() == []


def test_clients_are_built_once_per_service_and_subscription(serve) -> None:  # type: ignore[no-untyped-def]
    estate = generate_estate(4, 30)
    emulator = serve(estate)
    factory = ClientFactory(arm_endpoint=emulator.endpoint)
    try:
        inventory = collect_live(
            LiveScope(all_subscriptions=True), factory, Progress(False), every_live_read(load_checks())
        )
    finally:
        factory.close()
    subscriptions = {s.lower() for s in estate.subscription_ids()}
    assert set(inventory.subscriptions) == subscriptions and not inventory.coverage
    # every client built once, though many threads asked for them at the same time
    assert factory.built == len(factory.clients)
    services = {service for service, _ in factory.clients}
    assert {"subscriptions", "graph", "resources"} <= services
    assert {sub for service, sub in factory.clients if service == "resources"} <= subscriptions
    # the tenant-wide clients, then at most one per subscription of each other service:
    # several times fewer than the requests, each of which used to build its own
    assert factory.built <= 2 + len(subscriptions) * (len(services) - 2) < inventory.requests / 5


def test_an_endpoint_the_trusted_bundle_does_not_vouch_for_is_refused(serve, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The adapter remembers its TLS settings per origin instead of re-checking the bundle on
    every request; certificates must still be verified against the bundle the environment names."""
    import certifi

    emulator = serve(generate_estate(2, 10))
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", certifi.where())  # public roots only: not the emulator's CA
    monkeypatch.setenv("SSL_CERT_FILE", certifi.where())
    before = len(emulator.log)
    result = live_scan(emulator)
    assert not result.complete and not result.findings
    assert [gap.scope for gap in result.coverage] == ["/subscriptions"]
    assert "CERTIFICATE_VERIFY_FAILED" in str(result.coverage[0].reason)
    assert [r.path for r in emulator.log[before:] if r.path != "/msi/token"] == []
