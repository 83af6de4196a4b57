"""How a live scan reaches ARM: through an enterprise proxy when the environment names one,
directly when ``NO_PROXY`` covers the endpoint, and with one SDK client per service and
subscription. Real azure-mgmt clients over HTTPS against the emulator on 127.0.0.1, and a real
CONNECT proxy on loopback that counts the tunnels it opens; no mocks of the SDK."""

from __future__ import annotations

import base64
import os
import select
import socket
import socketserver
import ssl
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

import pytest
from azure.core.credentials import AccessTokenInfo

from scanner.emulator.estate import generate_estate
from scanner.engine.registry import every_live_read, load_checks
from scanner.sources.live.clients import ClientFactory
from scanner.sources.live.collect import Progress, collect_live
from scanner.sources.live.redaction import TOKEN_REFRESH_MARGIN, RecordingCredential, Redactor
from scanner.sources.live.scope import LiveScope
from tests.conftest import run_cli
from tests.live_estates import live_scan

SCOPE = "https://management.azure.com/.default"
PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")


class TunnelProxy(socketserver.ThreadingTCPServer):
    """An HTTPS proxy as enterprises run them: ``CONNECT host:port``, then bytes relayed both
    ways. It records the target of every tunnel it opens."""

    daemon_threads = True

    def __init__(self, trickle: float = 0.0) -> None:
        super().__init__(("127.0.0.1", 0), _Tunnel)
        self.targets: list[str] = []
        self.heads: list[list[str]] = []  # each CONNECT's header lines
        self.lock = threading.Lock()
        self.trickle = trickle  # seconds between the bytes of its answer to CONNECT; 0: at once
        self.ending = threading.Event()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"


class _Tunnel(socketserver.StreamRequestHandler):
    server: TunnelProxy

    def handle(self) -> None:
        method, target, _ = self.rfile.readline().decode("latin-1").split(" ", 2)
        head = []
        while (line := self.rfile.readline()) not in (b"\r\n", b"\n", b""):  # the rest of the request head
            head.append(line.decode("latin-1").strip())
        with self.server.lock:
            self.server.heads.append(head)
        if method != "CONNECT":
            self.wfile.write(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\n\r\n")
            return
        host, port = target.rsplit(":", 1)
        with socket.create_connection((host, int(port))) as upstream:
            with self.server.lock:
                self.server.targets.append(target)
            established = b"HTTP/1.1 200 Connection established\r\n\r\n"
            step = 1 if self.server.trickle else len(established)
            for index in range(0, len(established), step):
                if self.server.ending.wait(self.server.trickle):
                    return
                self.wfile.write(established[index : index + step])
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
def proxy(monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest) -> Iterator[TunnelProxy]:
    """A running tunnel proxy (answering CONNECT one byte every ``request.param`` seconds when
    parametrized indirectly), and an environment that names no other proxy."""
    for variable in (*PROXY_VARIABLES, "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(variable, raising=False)
    server = TunnelProxy(getattr(request, "param", 0.0))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield server
    server.ending.set()
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


def test_proxy_credentials_go_to_the_proxy_only_as_basic_authorization(serve, proxy, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    emulator = serve(generate_estate(2, 10))
    port = urlsplit(proxy.url).port
    monkeypatch.setenv("HTTPS_PROXY", f"http://ops%40corp:p%3Ass@127.0.0.1:{port}")
    result = live_scan(emulator)
    assert result.complete and result.findings and emulator.writes() == []
    expected = "Proxy-Authorization: Basic " + base64.b64encode(b"ops@corp:p:ss").decode()
    assert proxy.heads and all(expected in head for head in proxy.heads)


@pytest.mark.parametrize("proxy", [0.4], indirect=True)
def test_a_proxy_that_trickles_its_answer_to_connect_is_cut_at_the_requests_deadline(serve, proxy, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Making the connection is part of a request's exchange: a proxy that answers CONNECT one
    byte at a time is cut at the deadline too, not retried, and nothing reaches the endpoint."""
    from scanner.sources.live.boundary import BoundaryError, Limits
    from scanner.sources.live.collect import arm_collection

    emulator = serve(generate_estate(1, 5))
    monkeypatch.setenv("HTTPS_PROXY", proxy.url)
    before = len(emulator.log)
    factory = ClientFactory(arm_endpoint=emulator.endpoint, bounds=Limits(response_seconds=1.5))
    try:
        with pytest.raises(BoundaryError) as refused:
            url = factory.url("/subscriptions", {"api-version": "2022-12-01"})
            arm_collection(factory.raw(), url, factory.boundary.limits, lambda item: item)
    finally:
        factory.close()
    assert type(refused.value) is BoundaryError and str(refused.value) == "the answer was still arriving after 1.5 s"
    assert proxy.targets == [urlsplit(emulator.endpoint).netloc]  # one tunnel asked for, never retried
    assert [r.path for r in emulator.log[before:] if r.path != "/msi/token"] == []


@pytest.mark.parametrize(
    ("setting", "value", "line"),
    [
        (
            "HTTPS_PROXY",
            "https://proxy.corp.example:8443",
            "the proxy https://proxy.corp.example is not an http:// proxy: azai tunnels through http:// proxies "
            "(CONNECT)",
        ),
        (
            "HTTPS_PROXY",
            "http://ops:pw@proxy.corp.example:port",
            "the proxy http://proxy.corp.example: its host or port cannot be read",
        ),
        (
            "HTTPS_PROXY",
            "http://ops:\u4e2d@proxy.corp.example:3128",
            "the proxy http://proxy.corp.example: its user name or password has characters that Basic authorization "
            "cannot carry (Latin-1 only)",
        ),
        (
            "REQUESTS_CA_BUNDLE",
            "/nonexistent/corp-ca.pem",
            "the CA bundle /nonexistent/corp-ca.pem (REQUESTS_CA_BUNDLE or SSL_CERT_FILE) cannot be used: "
            "No such file or directory",
        ),
    ],
)
def test_a_proxy_or_bundle_azai_cannot_use_is_refused_in_one_line(  # type: ignore[no-untyped-def]
    serve, monkeypatch, setting: str, value: str, line: str
) -> None:
    """An https:// proxy (TLS to the proxy, then again inside its tunnel), a proxy whose port or
    credentials cannot be used, a CA bundle that is not there: the scan stops before any request,
    with one line naming the setting and exit 2, instead of going around the proxy or failing
    request by request."""
    emulator = serve(generate_estate(1, 5))
    for variable in (*PROXY_VARIABLES, "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv(setting, value)
    before = len(emulator.log)
    done = run_cli("scan", "--all-subscriptions", "--arm-endpoint", emulator.endpoint, env=dict(os.environ))
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [f"azai: error: {line}"]
    assert [r.path for r in emulator.log[before:] if r.path != "/msi/token"] == []


def test_an_arm_endpoint_that_is_not_https_is_refused_in_one_line() -> None:
    done = run_cli("scan", "--all-subscriptions", "--arm-endpoint", "http://127.0.0.1:9")
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "azai: error: the ARM endpoint http://127.0.0.1:9 is not an https:// URL: tokens go only over TLS"
    ]


LIST_ANSWER = b'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n{"value": []}'


class _ClosingServer(socketserver.ThreadingTCPServer):
    """Answers one request per connection with the bytes it is given, then closes it: as a
    server or load balancer ends an idle kept-alive connection between two requests, or as a
    connection drops in the middle of an answer."""

    daemon_threads = True

    def __init__(self, certificate: Path, key: Path, answer: bytes = LIST_ANSWER) -> None:
        super().__init__(("127.0.0.1", 0), _AnswerThenClose)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certificate, key)
        self.socket = context.wrap_socket(self.socket, server_side=True)
        self.answer = answer
        self.connections = 0
        self.requests: list[str] = []


class _AnswerThenClose(socketserver.StreamRequestHandler):
    server: _ClosingServer

    def handle(self) -> None:
        self.server.connections += 1
        line = self.rfile.readline().decode("latin-1")
        if not line:  # a connection closed before any request: nothing to answer
            return
        while self.rfile.readline() not in (b"\r\n", b"\n", b""):
            pass
        self.server.requests.append(line.split(" ")[1])
        self.wfile.write(self.server.answer)
        self.wfile.flush()


@pytest.fixture
def closing_server(
    certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> Iterator[Callable[[bytes], _ClosingServer]]:
    """``closing_server(answer)``: a running `_ClosingServer` that the environment trusts, with
    no proxy named."""
    cert, key = certificate
    for variable in (*PROXY_VARIABLES, "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(cert))
    servers: list[_ClosingServer] = []

    def start(answer: bytes = LIST_ANSWER) -> _ClosingServer:
        server = _ClosingServer(cert, key, answer)
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.shutdown()
        server.server_close()


def _factory(server: _ClosingServer) -> ClientFactory:
    """A factory for ``server``, its credential answering without any identity endpoint. Retries
    follow at once (no backoff): these tests count them, and waiting out azure-core's backoff
    (0.8 s doubling, about 5 s for four retries) would only make them slow."""
    from azure.core.credentials import AccessToken

    from scanner.sources.live.boundary import Limits

    endpoint = f"https://127.0.0.1:{server.server_address[1]}"
    factory = ClientFactory(arm_endpoint=endpoint, bounds=Limits(backoff_factor=0.0))
    factory.credential.get_token_info = lambda *_, **__: AccessToken("t", int(time.time()) + 3600)  # type: ignore[method-assign]
    return factory


def test_a_kept_alive_connection_the_server_closed_is_not_reused(closing_server) -> None:  # type: ignore[no-untyped-def]
    """The transport keeps connections for the next request, and checks one before reusing it:
    one the server closed meanwhile is replaced, without a failed request or a retry."""
    from scanner.sources.live.collect import arm_collection

    server = closing_server()
    factory = _factory(server)
    lists = [f"/subscriptions/{n}/resourceGroups" for n in range(3)]
    for path in lists:
        url = factory.url(path, {"api-version": "2021-04-01"})
        assert arm_collection(factory.raw(), url, factory.boundary.limits, lambda item: item) == []
        time.sleep(0.05)  # the server has closed the connection by the next request
    assert server.requests == [f"{path}?api-version=2021-04-01" for path in lists]
    assert server.connections == 3 and factory.boundary.retries == 0


def test_an_answer_cut_short_of_its_content_length_is_retried_then_an_error(closing_server) -> None:  # type: ignore[no-untyped-def]
    """A connection that drops in the middle of a body is a broken answer, retried as a read,
    never a short body taken as complete (which would be a JSON error, not retried)."""
    from azure.core.exceptions import IncompleteReadError

    from scanner.sources.live.collect import arm_collection

    server = closing_server(
        b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n" + b'{"value": ['
    )
    factory = _factory(server)
    url = factory.url("/subscriptions", {"api-version": "2022-12-01"})
    with pytest.raises(IncompleteReadError):
        arm_collection(factory.raw(), url, factory.boundary.limits, lambda item: item)
    assert factory.boundary.retries >= 1
    assert server.requests == ["/subscriptions?api-version=2022-12-01"] * (1 + factory.boundary.retries)


def test_a_repeated_response_header_keeps_every_value(closing_server) -> None:  # type: ignore[no-untyped-def]
    """As urllib3 gave them: a header sent twice (several WWW-Authenticate challenges) reads as
    its values joined with a comma, not as the last one."""
    from azure.core.rest import HttpRequest

    head = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nX-Azai-Twice: a\r\nx-azai-twice: b\r\n\r\n{}"
    factory = _factory(closing_server(head))
    response = factory.raw().send_request(HttpRequest("GET", factory.url("/subscriptions", {"api-version": "1"})))
    assert response.status_code == 200 and response.headers["X-Azai-Twice"] == "a, b"


@pytest.mark.parametrize(
    ("head", "header", "value"),
    [
        pytest.param(
            b"HTTP/1.1 100 Continue\r\nX-Azai: interim\r\n\r\nHTTP/1.1 200 OK\r\nX-Azai: final\r\n",
            "x-azai",
            "final",
            id="interim-answer-skipped",
        ),
        pytest.param(b"HTTP/1.1 200 OK\r\nX-Azai: folded\r\n \tline\r\n", "X-AZAI", "folded line", id="folded-line"),
        pytest.param(b"HTTP/1.1 200 OK\r\nnot a header\r\nX-Azai: kept\r\n", "X-Azai", "kept", id="line-without-colon"),
        pytest.param(
            b"HTTP/1.1 200 OK\r\nContent-Length: 13\r\nX-Azai:  spaced\t \r\n",
            "Content-Length",
            "13, 13",
            id="same-length-twice",
        ),
        pytest.param(b"HTTP/1.0 200 OK\r\nX-Azai: old\r\n", "X-Azai", "old", id="http-1.0"),
        pytest.param(b"HTTP/1.1  200\tOK\r\nX-Azai: spaced\r\n", "X-Azai", "spaced", id="blanks-in-status-line"),
        pytest.param(b"HTTP/1.1 200 OK\r\nX-Azai:\r\n folded\r\n", "X-Azai", "folded", id="fold-after-empty-value"),
    ],
)
def test_response_headers_are_read_as_http_1_1_frames_them(  # type: ignore[no-untyped-def]
    closing_server, head: bytes, header: str, value: str
) -> None:
    """The transport reads an answer's head itself (not through the email parser): interim 1xx
    answers are skipped, a folded line continues its value, a line that is no header is passed
    over, values lose their surrounding blanks, and the body after the head is read whole."""
    from azure.core.rest import HttpRequest

    factory = _factory(closing_server(head + b"Content-Length: 13\r\n\r\n" + b'{"value": []}'))
    response = factory.raw().send_request(HttpRequest("GET", factory.url("/subscriptions", {"api-version": "1"})))
    assert response.status_code == 200 and response.headers[header] == value
    assert response.json() == {"value": []}


@pytest.mark.parametrize(
    "status",
    [
        b"HTTP/1.1 2OO OK",
        b"HTTP/1.1 \xb200 OK",  # superscript two: a digit to str.isdigit, not to int()
        b"ICY 200 OK",
        b"HTTP/2 200",
        pytest.param(b"HTTP/1.1 103 Early Hints\r\n\r\n" * 9 + b"HTTP/1.1 200 OK", id="nine-interim-answers"),
        b"",
    ],
)
def test_an_unreadable_status_line_is_a_broken_answer_that_is_retried(closing_server, status: bytes) -> None:  # type: ignore[no-untyped-def]
    """A status line that is not ``HTTP/1.x nnn reason`` (or none, from a server that closed the
    connection) fails the read as azure-core's `ServiceResponseError`, which it retries."""
    from azure.core.exceptions import ServiceResponseError

    from scanner.sources.live.collect import arm_collection

    server = closing_server(status + (b"\r\nContent-Length: 2\r\n\r\n{}" if status else b""))
    factory = _factory(server)
    url = factory.url("/subscriptions", {"api-version": "2022-12-01"})
    with pytest.raises(ServiceResponseError):
        arm_collection(factory.raw(), url, factory.boundary.limits, lambda item: item)
    assert factory.boundary.retries >= 1
    assert server.requests == ["/subscriptions?api-version=2022-12-01"] * (1 + factory.boundary.retries)


@pytest.mark.parametrize("status", [b"204 No Content", b"304 Not Modified"])
def test_an_answer_without_a_body_is_not_read_for_chunks(closing_server, status: bytes) -> None:  # type: ignore[no-untyped-def]
    """A 204 or 304 has no body (RFC 9110), even when its head says it is chunked: the answer
    ends at its head, where reading chunks would fail on the closed connection."""
    from azure.core.rest import HttpRequest

    factory = _factory(closing_server(b"HTTP/1.1 " + status + b"\r\nTransfer-Encoding: chunked\r\n\r\n"))
    response = factory.raw().send_request(HttpRequest("GET", factory.url("/subscriptions", {"api-version": "1"})))
    assert response.status_code == int(status[:3]) and response.content == b""
    assert factory.boundary.retries == 0


@pytest.mark.parametrize("coding", [b"chunked, chunked", b"gzip, Chunked"])
def test_the_last_transfer_coding_decides_whether_a_body_is_chunked(closing_server, coding: bytes) -> None:  # type: ignore[no-untyped-def]
    """RFC 9112 section 6.3: a body whose last transfer coding is chunked is read as chunks."""
    from azure.core.rest import HttpRequest

    head = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: " + coding + b"\r\n\r\n"
    factory = _factory(closing_server(head + b"2\r\n{}\r\n0\r\n\r\n"))
    response = factory.raw().send_request(HttpRequest("GET", factory.url("/subscriptions", {"api-version": "1"})))
    assert response.status_code == 200 and response.content == b"{}"


def test_a_header_with_a_line_break_is_refused_before_anything_is_sent(closing_server, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A request header that would end the head early (here azure-core's User-Agent suffix from
    the environment) is never written: no header can be smuggled into a request. The request is
    refused before a connection is made, and not retried (it would be refused again)."""
    from scanner.sources.live.boundary import BoundaryError
    from scanner.sources.live.collect import arm_collection

    monkeypatch.setenv("AZURE_HTTP_USER_AGENT", "ok\r\nX-Smuggled: 1")
    server = closing_server()
    factory = _factory(server)
    url = factory.url("/subscriptions", {"api-version": "2022-12-01"})
    with pytest.raises(BoundaryError, match="refused to send a request: a request header holds a line break"):
        arm_collection(factory.raw(), url, factory.boundary.limits, lambda item: item)
    assert server.connections == 0 and server.requests == [] and factory.boundary.retries == 0


def test_a_resource_graph_query_is_sent_with_its_length(serve) -> None:  # type: ignore[no-untyped-def]
    """The one request with a body: a POST whose Content-Length is its UTF-8 JSON's, which the
    emulator reads whole (a query naming a non-ASCII tag value included)."""
    from azure.core.rest import HttpRequest

    from scanner.sources.live.transport import GRAPH_QUERY_PATH

    emulator = serve(generate_estate(2, 5))
    factory = ClientFactory(arm_endpoint=emulator.endpoint)
    body = {"query": "resources | where tags['owner'] == 'é' | project id", "subscriptions": []}
    url = factory.url(GRAPH_QUERY_PATH, {"api-version": "2021-03-01"})
    response = factory.raw().send_request(HttpRequest("POST", url, json=body), retry_on_methods=["POST"])
    assert response.status_code == 200 and response.json()["data"] == []
    assert [(r.method, r.path) for r in emulator.log[-1:]] == [("POST", GRAPH_QUERY_PATH)]
    factory.close()


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
    # every client built once, though many threads asked for them at the same time: the one
    # client of the raw reads (lists, Resource Graph, single GETs), and the typed ones
    assert factory.built == 1 + len(factory.clients)
    services = {service for service, _ in factory.clients}
    assert "subscriptions" in services and "resources" not in services  # no typed client for raw reads
    assert {sub for service, sub in factory.clients if service != "subscriptions"} <= subscriptions
    # the raw client and the tenant-wide one, then at most one per subscription of each other
    # service: several times fewer than the requests, each of which used to build its own
    assert factory.built <= 2 + len(subscriptions) * (len(services) - 1) < inventory.requests / 5


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


class _CountingCredential:
    """A credential like the Azure CLI's: every call fetches (here: counts) a fresh token."""

    def __init__(self, lifetime: float) -> None:
        self.calls: list[dict[str, object]] = []
        self.lifetime = lifetime
        self.lock = threading.Lock()

    def get_token_info(self, *scopes: str, options: dict[str, object] | None = None) -> AccessTokenInfo:
        with self.lock:
            self.calls.append(dict(options or {}))
            return AccessTokenInfo(f"token-{len(self.calls)}", int(time.time() + self.lifetime))


def test_one_token_is_shared_by_every_client_until_it_nears_expiry() -> None:
    """Each client's policy asks for a token; 32 threads asking at once make one fetch."""
    inner = _CountingCredential(lifetime=3600)
    credential = RecordingCredential(inner, Redactor())
    with ThreadPoolExecutor(max_workers=32) as pool:
        tokens = set(pool.map(lambda _: credential.get_token_info(SCOPE).token, range(200)))
    assert tokens == {"token-1"} and len(inner.calls) == 1
    # a continuous-access challenge carries claims: it always reaches the credential
    assert credential.get_token_info(SCOPE, options={"claims": "{}"}).token == "token-2"
    assert credential.get_token_info(SCOPE).token == "token-1"
    # a token within the refresh margin of expiry is fetched again
    soon = _CountingCredential(lifetime=TOKEN_REFRESH_MARGIN - 1)
    credential = RecordingCredential(soon, Redactor())
    assert [credential.get_token_info(SCOPE).token for _ in range(2)] == ["token-1", "token-2"]


def test_every_request_gets_its_own_client_request_id_and_azais_user_agent() -> None:
    """The cheap replacement of RequestIdPolicy and UserAgentPolicy still gives Azure support one
    GUID per request, unique across threads, and azai's User-Agent (with azure-core's part), and
    leaves an id or agent the caller set alone."""
    import re

    from azure.core.pipeline import PipelineContext, PipelineRequest
    from azure.core.rest import HttpRequest

    from scanner import __version__
    from scanner.sources.live.clients import request_headers_policy

    policy = request_headers_policy(ClientFactory(arm_endpoint="https://127.0.0.1:9").user_agent)
    agents: list[str] = []

    def one(_: int) -> str:
        request = PipelineRequest(
            HttpRequest("GET", "https://management.azure.com/subscriptions"), PipelineContext(None)
        )
        policy.on_request(request)
        agents.append(request.http_request.headers["User-Agent"])
        return str(request.http_request.headers["x-ms-client-request-id"])

    with ThreadPoolExecutor(max_workers=16) as pool:
        ids = list(pool.map(one, range(2000)))
    guid = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}")
    assert len(set(ids)) == 2000 and all(guid.fullmatch(i) for i in ids)
    assert set(agents) == {policy.user_agent} and policy.user_agent.startswith(f"azai/{__version__} azsdk-python-core/")
    assert request_headers_policy("azai").prefix != policy.prefix  # each client's policy draws its own
    mine = {"x-ms-client-request-id": "mine", "User-Agent": "theirs"}
    given = PipelineRequest(HttpRequest("GET", "https://x", headers=mine), PipelineContext(None))
    policy.on_request(given)
    assert dict(given.http_request.headers) == mine
