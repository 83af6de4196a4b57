"""The live transport on the wire: what an ARM client must survive from an HTTP/1.1 server.

Each test scripts a raw TLS server (`WireServer`) byte by byte, drives the real client
(`ClientFactory`, `arm_collection`) against it, and asserts what the client returned, what the
server received (request targets, headers, connections) and how many requests and retries it
took. The expectations come from HTTP/1.1 (RFC 9112) and URI syntax (RFC 3986), not from the
transport's code.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import socketserver
import ssl
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import unquote

import pytest
from azure.core.credentials import AccessToken
from azure.core.exceptions import AzureError, ServiceResponseTimeoutError
from azure.core.rest import HttpRequest

from scanner.sources.live.boundary import Boundary, BoundaryError, Limits, ScanTimeout
from scanner.sources.live.clients import ClientFactory
from scanner.sources.live.collect import arm_collection
from tests.conftest import TIME_LIMIT

TOKEN = "wire-test-token"
API = {"api-version": "2021-04-01"}
PROXY_VARIABLES = ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy")
# Short waits, no backoff: a test that hangs or sleeps shows as a failure, not a slow run.
QUICK = Limits(read_timeout=5.0, response_seconds=10.0, backoff_factor=0.0)

# RFC 9112 §3.2.1 origin-form: absolute-path [ "?" query ], with RFC 3986's pchar and query.
_PCHAR = r"(?:[A-Za-z0-9\-._~!$&'()*+,;=:@]|%[0-9A-Fa-f]{2})"
ORIGIN_FORM = re.compile(rf"^(?:/{_PCHAR}*)+(?:\?(?:{_PCHAR}|[/?])*)?$")

T = TypeVar("T")


# -- the server -------------------------------------------------------------------------------


@dataclass
class Received:
    """One request as the server read it off the wire."""

    connection: int
    method: str
    target: str
    version: str
    headers: list[tuple[str, str]]
    body: bytes
    head: bytes

    def header(self, name: str) -> list[str]:
        return [value for key, value in self.headers if key.lower() == name.lower()]

    @property
    def path(self) -> str:
        return self.target.split("?", 1)[0]


class Wire:
    """The server's side of one accepted connection, handed to a test's script."""

    def __init__(self, server: WireServer, tls: ssl.SSLSocket, number: int) -> None:
        self.server = server
        self.tls = tls
        self.number = number

    def send(self, *parts: bytes, pause: float = 0.0) -> None:
        """Write each part in its own TLS record, ``pause`` seconds apart."""
        for index, part in enumerate(parts):
            if index and pause:
                time.sleep(pause)
            self.tls.sendall(part)

    def hold(self, seconds: float) -> None:
        """Send nothing for ``seconds`` (cut short when the test ends)."""
        self.server.ending.wait(seconds)

    def trickle(self, data: bytes, interval: float) -> None:
        """Send ``data`` one byte every ``interval`` seconds, until it is sent, the client goes
        away or the test ends."""
        for index in range(len(data)):
            if self.server.ending.wait(interval):
                return
            try:
                self.tls.sendall(data[index : index + 1])
            except OSError:
                return

    def linger(self, seconds: float) -> None:
        """After answering with ``Connection: close``: keep the connection open a moment and
        record whatever the client still sends on it (RFC 9112 §9.6: it should send nothing)."""
        self.tls.settimeout(seconds)
        try:
            while data := self.tls.recv(65536):
                self.server.record_late(self.number, data)
        except (OSError, ValueError):
            pass


Script = Callable[[Received, Wire], bool]
"""Answers one request on a connection; returns whether the connection stays open for another."""


class WireServer(socketserver.ThreadingTCPServer):
    """A threaded TLS server on 127.0.0.1 that reads each request's head and body and lets the
    test's script write the answer's bytes. It counts connections and records every request."""

    daemon_threads = True
    request_queue_size = 128

    def __init__(self, certificate: Path, key: Path, script: Script) -> None:
        super().__init__(("127.0.0.1", 0), _WireHandler)
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.load_cert_chain(certificate, key)
        self.script = script
        self.ending = threading.Event()
        self.lock = threading.Lock()
        self.connections = 0
        self.received: list[Received] = []
        self.late: list[tuple[int, bytes]] = []
        self.errors: list[str] = []
        self.hung_up: list[int] = []  # connections the client closed (end of stream between requests)
        self.sockets: set[socket.socket] = set()
        self.port = self.server_address[1]
        self.endpoint = f"https://127.0.0.1:{self.port}"

    def accepted(self, sock: socket.socket) -> int:
        with self.lock:
            self.connections += 1
            self.sockets.add(sock)
            return self.connections

    def record(self, received: Received) -> None:
        with self.lock:
            self.received.append(received)

    def record_late(self, number: int, data: bytes) -> None:
        with self.lock:
            self.late.append((number, data))

    @property
    def targets(self) -> list[str]:
        with self.lock:
            return [received.target for received in self.received]

    def stop(self) -> None:
        self.ending.set()
        self.shutdown()
        with self.lock:
            sockets = list(self.sockets)
        for sock in sockets:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        self.server_close()


class _WireHandler(socketserver.BaseRequestHandler):
    server: WireServer

    def handle(self) -> None:
        raw: socket.socket = self.request
        raw.settimeout(20)
        number = self.server.accepted(raw)
        try:
            tls = self.server.context.wrap_socket(raw, server_side=True)
        except (OSError, ssl.SSLError) as exc:
            self.server.errors.append(f"connection {number}: handshake: {exc}")
            return
        with self.server.lock:
            self.server.sockets.add(tls)
        wire = Wire(self.server, tls, number)
        reader = tls.makefile("rb")
        try:
            while (received := _read_request(reader, number)) is not None:
                self.server.record(received)
                if not self.server.script(received, wire):
                    break
            else:
                with self.server.lock:
                    self.server.hung_up.append(number)
        except (OSError, ValueError):
            pass  # the client went away, or the test ended
        finally:
            reader.close()
            _close(tls)


def _close(tls: ssl.SSLSocket) -> None:
    """Close as a well-behaved server does: TLS close_notify, then the socket."""
    try:
        tls.settimeout(1)
        tls.unwrap().close()
    except (OSError, ValueError):
        pass
    finally:
        tls.close()


def _read_request(reader: Any, number: int) -> Received | None:
    line: bytes = reader.readline(65537)
    while line in (b"\r\n", b"\n"):  # RFC 9112 §2.2: empty lines before a request-line are ignored
        line = reader.readline(65537)
    if not line:
        return None
    head = line
    method, target, version = line.decode("latin-1").rstrip("\r\n").split(" ")
    headers: list[tuple[str, str]] = []
    while True:
        field_line: bytes = reader.readline(65537)
        head += field_line
        if field_line in (b"\r\n", b"\n", b""):
            break
        name, _, value = field_line.decode("latin-1").partition(":")
        headers.append((name, value.strip(" \t\r\n")))
    names = {name.lower(): value for name, value in headers}
    body = b""
    if "chunked" in names.get("transfer-encoding", "").lower():
        while size := int(reader.readline().split(b";")[0], 16):
            body += reader.read(size)
            reader.readline()
        while reader.readline() not in (b"\r\n", b"\n", b""):
            pass
    elif "content-length" in names:
        body = reader.read(int(names["content-length"]))
    return Received(number, method, target, version, headers, body, head)


# -- answers ----------------------------------------------------------------------------------


def head(status: str, *fields: str) -> bytes:
    """A response's status line and header section, exactly as given, each line CRLF-ended."""
    return b"".join(f"{line}\r\n".encode("latin-1") for line in (f"HTTP/1.1 {status}", *fields, ""))


def answer(status: str, body: bytes = b"", *fields: str) -> bytes:
    """A whole response: JSON content, the given header fields, Content-Length, the body."""
    return head(status, "Content-Type: application/json; charset=utf-8", *fields, f"Content-Length: {len(body)}") + body


def page(items: Sequence[Any], next_link: str | None = None) -> bytes:
    document: dict[str, Any] = {"value": list(items)}
    if next_link:
        document["nextLink"] = next_link
    return json.dumps(document, ensure_ascii=False).encode()


def chunks(body: bytes, sizes: Sequence[int]) -> list[bytes]:
    """``body`` in chunked coding (RFC 9112 §7.1): a chunk of each size, the rest, the last chunk."""
    pieces: list[bytes] = []
    start = 0
    for size in [*sizes, len(body)]:
        piece = body[start : start + size]
        start += len(piece)
        if piece:
            pieces.append(b"%x\r\n%s\r\n" % (len(piece), piece))
    return [*pieces, b"0\r\n\r\n"]


def groups(n: int, prefix: str = "rg") -> list[dict[str, str]]:
    return [{"id": f"/subscriptions/s/resourceGroups/{prefix}-{i}", "name": f"{prefix}-{i}"} for i in range(n)]


# -- the client -------------------------------------------------------------------------------


Start = Callable[..., tuple[WireServer, ClientFactory]]


@pytest.fixture
def wire(certificate: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> Iterator[Start]:
    """Starts a `WireServer` running a script, and a `ClientFactory` for it with a fixed token."""
    cert, key = certificate
    for variable in (*PROXY_VARIABLES, "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(cert))
    started: list[tuple[WireServer, ClientFactory]] = []

    def start(script: Script, bounds: Limits = QUICK, timeout: float | None = None) -> tuple[WireServer, ClientFactory]:
        server = WireServer(cert, key, script)
        threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
        factory = ClientFactory(arm_endpoint=server.endpoint, bounds=bounds, timeout=timeout)
        token = AccessToken(TOKEN, int(time.time()) + 3600)
        monkeypatch.setattr(factory.credential, "get_token_info", lambda *_, **__: token)
        started.append((server, factory))
        return server, factory

    yield start
    for server, factory in started:
        factory.close()
        server.stop()


def listing(factory: ClientFactory, path: str) -> list[Any]:
    return arm_collection(factory.raw(), factory.url(path, API), factory.boundary.limits, lambda item: item)


def within(seconds: float, call: Callable[[], T]) -> T | BaseException:
    """``call``'s result (or the exception it raised); fails the test, rather than hanging it,
    if it has not returned after ``seconds`` (a guard against hangs, not a timing assertion)."""
    outcome: list[T | BaseException] = []

    def run() -> None:
        try:
            outcome.append(call())
        except BaseException as exc:
            outcome.append(exc)

    began = time.monotonic()
    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(seconds)
    elapsed = time.monotonic() - began
    assert outcome, f"the call was still running after {elapsed:.1f} s: it hangs"
    return outcome[0]


def assert_plain_get(received: Received, target: str, port: int) -> None:
    """A GET as RFC 9112 wants it: origin-form target, HTTP/1.1, CRLF lines, one Host naming the
    endpoint, the bearer token, and no body."""
    assert (received.method, received.target, received.version) == ("GET", target, "HTTP/1.1")
    assert ORIGIN_FORM.match(received.target), received.target
    assert received.head.count(b"\n") == received.head.count(b"\r\n"), "a line of the head is not CRLF-ended"
    assert received.header("Host") == [f"127.0.0.1:{port}"]
    assert received.header("Authorization") == [f"Bearer {TOKEN}"]
    assert received.header("Transfer-Encoding") == [] and received.header("Content-Length") in ([], ["0"])
    assert received.body == b""


# -- the tests --------------------------------------------------------------------------------


def test_a_chunked_list_and_its_next_page_are_read_whole_on_one_connection(wire: Start) -> None:
    first, second = groups(40, "a"), groups(3, "b")
    link: list[str] = []

    def script(request: Received, connection: Wire) -> bool:
        if "skiptoken" not in request.target:
            body = page(first, link[0])
            connection.send(
                head("200 OK", "Content-Type: application/json", "Transfer-Encoding: chunked"),
                *chunks(body, [1, 17, 300, 4096]),
                pause=0.01,
            )
        else:
            connection.send(
                head("200 OK", "Content-Type: application/json", "Transfer-Encoding: chunked"),
                *chunks(page(second), [5, 5]),
            )
        return True

    server, factory = wire(script)
    link.append(f"{server.endpoint}/subscriptions/s/resourceGroups?api-version=2021-04-01&$skiptoken=p2")

    assert listing(factory, "/subscriptions/s/resourceGroups") == first + second
    assert len(server.received) == 2
    assert_plain_get(server.received[0], "/subscriptions/s/resourceGroups?api-version=2021-04-01", server.port)
    assert_plain_get(
        server.received[1], "/subscriptions/s/resourceGroups?api-version=2021-04-01&$skiptoken=p2", server.port
    )
    assert server.connections == 1  # a chunked body ends at its last chunk: the connection goes on
    assert (factory.boundary.requests, factory.boundary.retries) == (2, 0)


def test_a_body_without_length_is_read_to_the_close_and_the_next_request_opens_a_connection(wire: Start) -> None:
    items = groups(25)

    def script(request: Received, connection: Wire) -> bool:
        body = page(items if request.path.endswith("/resourceGroups") else [])
        connection.send(head("200 OK", "Content-Type: application/json", "Connection: close"), body[:100], body[100:])
        return False  # RFC 9112 §6.3: no length, so the body ends where the connection does

    server, factory = wire(script)
    assert listing(factory, "/subscriptions/s/resourceGroups") == items
    assert listing(factory, "/subscriptions/s/providers") == []

    assert server.targets == [
        "/subscriptions/s/resourceGroups?api-version=2021-04-01",
        "/subscriptions/s/providers?api-version=2021-04-01",
    ]
    assert [received.connection for received in server.received] == [1, 2]
    assert server.connections == 2 and server.late == []
    assert (factory.boundary.requests, factory.boundary.retries) == (2, 0)


def test_connection_close_on_a_sized_answer_moves_the_next_request_to_a_new_connection(wire: Start) -> None:
    def script(request: Received, connection: Wire) -> bool:
        name = request.path.split("/")[2]
        connection.send(answer("200 OK", page(groups(2, name)), "Connection: close"))
        connection.linger(0.5)  # open a moment longer: a request sent on it anyway is caught
        return False

    server, factory = wire(script)
    results = within(20, lambda: [listing(factory, f"/subscriptions/{n}/resourceGroups") for n in "xyz"])

    assert results == [groups(2, n) for n in "xyz"]
    assert [received.connection for received in server.received] == [1, 2, 3]
    assert server.late == []  # RFC 9112 §9.6: nothing more is sent on a connection the server closes
    assert server.connections == 3
    assert (factory.boundary.requests, factory.boundary.retries) == (3, 0)


def test_sequential_requests_reuse_one_kept_alive_connection(wire: Start) -> None:
    def script(request: Received, connection: Wire) -> bool:
        connection.send(answer("200 OK", page(groups(1, request.path.split("/")[2]))))
        return True

    server, factory = wire(script)
    paths = [f"/subscriptions/s{n}/resourceGroups" for n in range(25)]
    assert [listing(factory, path) for path in paths] == [groups(1, f"s{n}") for n in range(25)]

    assert server.targets == [f"{path}?api-version=2021-04-01" for path in paths]
    assert {received.connection for received in server.received} == {1}
    assert server.connections == 1
    assert (factory.boundary.requests, factory.boundary.retries) == (25, 0)


def test_a_204_and_an_empty_body_end_at_their_head_without_waiting(wire: Start) -> None:
    resource = {"id": "/subscriptions/s/resourceGroups/rg", "name": "rg"}

    def script(request: Received, connection: Wire) -> bool:
        if request.path.endswith("/gone"):
            connection.send(head("204 No Content", "x-ms-request-id: 1"))  # RFC 9112 §6.3: no body
        elif request.path.endswith("/empty"):
            connection.send(answer("200 OK", b""))
        else:
            connection.send(answer("200 OK", json.dumps(resource).encode()))
        return True

    server, factory = wire(script, Limits(read_timeout=5.0, response_seconds=5.0, backoff_factor=0.0))
    client = factory.raw()

    def exchange() -> list[tuple[int, bytes]]:
        answers = []
        for name in ("gone", "empty", "rg"):
            response = client.send_request(
                HttpRequest("GET", factory.url(f"/subscriptions/s/resourceGroups/{name}", API))
            )
            response.raise_for_status()
            answers.append((response.status_code, response.content))
        return answers

    answers = within(15, exchange)
    assert answers == [(204, b""), (200, b""), (200, json.dumps(resource).encode())]
    for received, name in zip(server.received, ("gone", "empty", "rg"), strict=True):
        assert_plain_get(received, f"/subscriptions/s/resourceGroups/{name}?api-version=2021-04-01", server.port)
    assert server.connections == 1
    assert (factory.boundary.requests, factory.boundary.retries) == (3, 0)


def test_a_next_link_with_a_space_and_a_non_ascii_character_is_sent_percent_encoded(wire: Start) -> None:
    query = "api-version=2021-04-01&$filter=name eq 'café'"
    encoded = "api-version=2021-04-01&$skiptoken=a%2Bb%2F%3D%3D"  # already encoded: sent as it is

    def script(request: Received, connection: Wire) -> bool:
        if "filter" in request.target:
            connection.send(answer("200 OK", page(groups(1, "b"), f"{server.endpoint}/subscriptions/s/next?{encoded}")))
        elif "skiptoken" in request.target:
            connection.send(answer("200 OK", page(groups(1, "c"))))
        else:
            connection.send(
                answer("200 OK", page(groups(1, "a"), f"{server.endpoint}/subscriptions/s/resources?{query}"))
            )
        return True

    server, factory = wire(script)
    assert listing(factory, "/subscriptions/s/resources") == groups(1, "a") + groups(1, "b") + groups(1, "c")

    first, second, third = server.targets
    assert first == "/subscriptions/s/resources?api-version=2021-04-01"
    assert ORIGIN_FORM.match(second), f"not a valid request-target: {second!r}"
    assert unquote(second, errors="strict") == f"/subscriptions/s/resources?{query}"
    assert "%C3%A9" in second.upper() and "%20" in second  # é as UTF-8 octets, the space as %20
    assert third == f"/subscriptions/s/next?{encoded}"
    for received in server.received:
        assert_plain_get(received, received.target, server.port)
    assert server.connections == 1
    assert (factory.boundary.requests, factory.boundary.retries) == (3, 0)


@pytest.mark.parametrize(
    ("stall", "read_timeout"),
    # Silence ends each try at the read timeout, and a read is tried four times: a short one.
    # A trickle must never be silent that long: it ends at response_seconds, once.
    [("silent", 0.3), ("trickle", 1.0)],
    ids=["silent", "trickle"],
)
@TIME_LIMIT
def test_a_body_that_stalls_after_its_head_ends_the_call_with_an_error(
    wire: Start, stall: str, read_timeout: float
) -> None:
    def script(request: Received, connection: Wire) -> bool:
        connection.send(head("200 OK", "Content-Type: application/json", "Content-Length: 5000"), b'{"value": [')
        if stall == "silent":
            connection.hold(30)  # longer than read_timeout, then more than the test waits
        else:
            for _ in range(150):  # a byte every 0.2 s: never silent for read_timeout, never done
                connection.hold(0.2)
                connection.send(b" ")
        return False

    bounds = Limits(read_timeout=read_timeout, response_seconds=2.0, backoff_factor=0.0)
    server, factory = wire(script, bounds)
    error = within(25, lambda: listing(factory, "/subscriptions/s/resourceGroups"))

    assert isinstance(error, AzureError | BoundaryError), repr(error)
    attempts = factory.boundary.retries + 1
    assert len(server.received) == factory.boundary.requests == attempts
    assert server.connections == attempts  # a connection with a body unread is never reused
    assert all(r.target == "/subscriptions/s/resourceGroups?api-version=2021-04-01" for r in server.received)


@pytest.mark.parametrize("framing", ["content-length", "chunked"])
def test_a_body_over_response_bytes_is_refused_and_the_factory_still_works(wire: Start, framing: str) -> None:
    big = page(groups(12000, "big"))  # about 900 KB
    assert len(big) > 800_000

    def script(request: Received, connection: Wire) -> bool:
        if request.path.endswith("/big"):
            if framing == "chunked":
                parts = chunks(big, [16384] * (len(big) // 16384))
                connection.send(head("200 OK", "Content-Type: application/json", "Transfer-Encoding: chunked"), *parts)
            else:
                connection.send(answer("200 OK", big))
        else:
            connection.send(answer("200 OK", page(groups(3, "small"))))
        return True

    bounds = Limits(read_timeout=5.0, response_seconds=10.0, response_bytes=64 * 1024, backoff_factor=0.0)
    server, factory = wire(script, bounds)
    error = within(20, lambda: listing(factory, "/subscriptions/s/big"))
    assert isinstance(error, BoundaryError), repr(error)

    small = within(20, lambda: listing(factory, "/subscriptions/s/small"))
    assert small == groups(3, "small")  # not the rest of the refused body, read as an answer
    assert server.targets == [
        "/subscriptions/s/big?api-version=2021-04-01",
        "/subscriptions/s/small?api-version=2021-04-01",
    ]
    assert [received.connection for received in server.received] == [1, 2]  # the abandoned one is closed
    assert (factory.boundary.requests, factory.boundary.retries) == (2, 0)


def test_a_503_is_retried_once_and_the_data_returned(wire: Start) -> None:
    items = groups(4)
    unavailable = json.dumps({"error": {"code": "ServiceUnavailable", "message": "try again"}}).encode()

    def script(request: Received, connection: Wire) -> bool:
        if len(server.received) == 1:
            connection.send(answer("503 Service Unavailable", unavailable))
        else:
            connection.send(answer("200 OK", page(items)))
        return True

    server, factory = wire(script)
    result = within(20, lambda: listing(factory, "/subscriptions/s/resourceGroups"))

    assert result == items
    assert len(server.received) == 2
    for received in server.received:
        assert_plain_get(received, "/subscriptions/s/resourceGroups?api-version=2021-04-01", server.port)
    assert server.connections == 1  # the 503's sized body was read: its connection carries the retry
    assert (factory.boundary.requests, factory.boundary.retries) == (2, 1)


def test_32_threads_listing_through_one_factory_get_their_own_pages_over_reused_connections(wire: Start) -> None:
    pages = 4

    def script(request: Received, connection: Wire) -> bool:
        subscription = request.path.split("/")[2]
        number = int(request.target.rsplit("$skiptoken=", 1)[1]) if "$skiptoken=" in request.target else 0
        link = None
        if number + 1 < pages:
            link = f"{server.endpoint}{request.path}?api-version=2021-04-01&$skiptoken={number + 1}"
        time.sleep(0.005)
        connection.send(answer("200 OK", page(groups(2, f"{subscription}-{number}"), link)))
        return True

    server, factory = wire(script)
    subscriptions = [f"sub{n}" for n in range(32)]

    def list_one(subscription: str) -> list[Any]:
        return listing(factory, f"/subscriptions/{subscription}/resourceGroups")

    def list_all() -> list[list[Any]]:
        with ThreadPoolExecutor(max_workers=32) as pool:
            return list(pool.map(list_one, subscriptions))

    results = within(60, list_all)
    assert results == [[item for n in range(pages) for item in groups(2, f"{s}-{n}")] for s in subscriptions]

    requests = 32 * pages
    assert len(server.received) == factory.boundary.requests == requests
    assert sorted(server.targets) == sorted(
        f"/subscriptions/{s}/resourceGroups?api-version=2021-04-01" + (f"&$skiptoken={n}" if n else "")
        for s in subscriptions
        for n in range(pages)
    )
    assert factory.boundary.retries == 0
    # each thread needs one connection at a time: a pool that keeps them opens at most 32
    assert server.connections <= 32, f"{server.connections} connections for {requests} requests"


def test_closing_the_factory_closes_its_kept_alive_connections(wire: Start) -> None:
    """A kept-alive connection is the client's to close (RFC 9112 §9.6) once
    it is done; closing the factory should end the pool's connections, not leave them to the
    garbage collector (an unclosed socket, and a ResourceWarning)."""

    def script(request: Received, connection: Wire) -> bool:
        connection.send(answer("200 OK", page(groups(1))))
        return True

    server, factory = wire(script)
    for _ in range(3):
        assert listing(factory, "/subscriptions/s/resourceGroups") == groups(1)
    assert server.connections == 1 and server.hung_up == []

    factory.close()
    deadline = time.monotonic() + 2.0
    while not server.hung_up and time.monotonic() < deadline:
        time.sleep(0.02)
    assert server.hung_up == [1], "the factory was closed, and its kept-alive connection is still open"


# -- one deadline per request -------------------------------------------------------------------
# A socket's timeout bounds one receive or send; a server that trickles one byte at a time resets
# it with every byte. Each request is held to one deadline instead, over its whole exchange:
# Limits.response_seconds, or the scan's --timeout when that comes first.

TRICKLED = answer("200 OK", page(groups(2)), "x-ms-request-id: trickled")
SLOW = 0.4  # seconds between trickled bytes: each arrives well within the read timeout


def trickling(part: str) -> Script:
    """A server that sends the status line and headers ("head") or only the body ("body") one
    byte every `SLOW` seconds, the rest at once."""
    split = TRICKLED.index(b"\r\n\r\n") + 4

    def script(request: Received, connection: Wire) -> bool:
        if part == "body":
            connection.send(TRICKLED[:split])
        connection.trickle(TRICKLED if part == "head" else TRICKLED[split:], SLOW)
        return False

    return script


@pytest.mark.parametrize("part", ["head", "body"])
@TIME_LIMIT
def test_an_answer_trickled_past_its_bound_is_refused_once_not_retried(wire: Start, part: str) -> None:
    bounds = Limits(read_timeout=5.0, response_seconds=1.5, backoff_factor=0.0)
    server, factory = wire(trickling(part), bounds)
    error = within(30, lambda: listing(factory, "/subscriptions/s/resourceGroups"))

    assert type(error) is BoundaryError and str(error) == "the answer was still arriving after 1.5 s"
    assert server.targets == ["/subscriptions/s/resourceGroups?api-version=2021-04-01"]
    assert (factory.boundary.requests, factory.boundary.retries) == (1, 0)


@pytest.mark.parametrize("part", ["head", "body"])
@TIME_LIMIT
def test_an_answer_trickled_past_the_scans_time_limit_is_a_scan_timeout(wire: Start, part: str) -> None:
    server, factory = wire(trickling(part), timeout=1.5)
    error = within(30, lambda: listing(factory, "/subscriptions/s/resourceGroups"))

    assert type(error) is ScanTimeout and str(error) == "not read: the scan's time limit of 1.5 s was reached"
    assert server.targets == ["/subscriptions/s/resourceGroups?api-version=2021-04-01"]
    assert (factory.boundary.requests, factory.boundary.retries) == (1, 0)
    # once the time limit has passed, nothing more is sent
    again = within(30, lambda: listing(factory, "/subscriptions/s/providers"))
    assert type(again) is ScanTimeout and len(server.received) == 1


def test_the_same_answer_sent_at_once_is_read(wire: Start) -> None:
    """The trickled answer of the tests above is a good one: only its pace is refused."""

    def script(request: Received, connection: Wire) -> bool:
        connection.send(TRICKLED)
        return True

    _, factory = wire(script, Limits(read_timeout=5.0, response_seconds=1.5, backoff_factor=0.0), timeout=30)
    assert within(30, lambda: listing(factory, "/subscriptions/s/resourceGroups")) == groups(2)
    assert (factory.boundary.requests, factory.boundary.retries) == (1, 0)


@TIME_LIMIT
def test_a_head_that_never_comes_is_a_read_timeout_retried_within_the_deadline(wire: Start) -> None:
    """Silence is the socket's read timeout, as before: azure-core's timeout error, which its
    retry policy retries; the deadline is far off."""

    def script(request: Received, connection: Wire) -> bool:
        connection.hold(30)
        return False

    server, factory = wire(script, Limits(read_timeout=0.3, response_seconds=30.0, backoff_factor=0.0))
    error = within(30, lambda: listing(factory, "/subscriptions/s/resourceGroups"))

    assert type(error) is ServiceResponseTimeoutError, repr(error)
    assert str(error).startswith("Read timed out. (read timeout=0.3)")
    # the first try and azure-core's three retries of a read (retry_read)
    assert (factory.boundary.requests, factory.boundary.retries) == (4, 3)
    assert server.connections == 4


class _Silent(socketserver.ThreadingTCPServer):
    """Accepts TCP connections and never says a word: a TLS handshake with it never ends."""

    daemon_threads = True

    def __init__(self) -> None:
        super().__init__(("127.0.0.1", 0), _Mute)
        self.ending = threading.Event()


class _Mute(socketserver.BaseRequestHandler):
    server: _Silent

    def handle(self) -> None:
        self.server.ending.wait(30)


@pytest.mark.parametrize(
    ("bounds", "timeout", "kind", "reason"),
    [
        (
            Limits(connect_timeout=30.0, response_seconds=1.0),
            None,
            BoundaryError,
            "the answer was still arriving after 1 s",
        ),
        (Limits(connect_timeout=30.0), 1.0, ScanTimeout, "not read: the scan's time limit of 1 s was reached"),
    ],
)
@TIME_LIMIT
def test_a_tls_handshake_that_never_ends_is_cut_at_the_deadline(
    certificate: tuple[Path, Path],
    monkeypatch: pytest.MonkeyPatch,
    bounds: Limits,
    timeout: float | None,
    kind: type,
    reason: str,
) -> None:
    for variable in (*PROXY_VARIABLES, "NO_PROXY", "no_proxy"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("REQUESTS_CA_BUNDLE", str(certificate[0]))
    server = _Silent()
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True).start()
    factory = ClientFactory(
        arm_endpoint=f"https://127.0.0.1:{server.server_address[1]}", bounds=bounds, timeout=timeout
    )
    token = AccessToken(TOKEN, int(time.time()) + 3600)
    monkeypatch.setattr(factory.credential, "get_token_info", lambda *_, **__: token)
    try:
        error = within(30, lambda: listing(factory, "/subscriptions"))
    finally:
        server.ending.set()
        server.shutdown()
        server.server_close()
        factory.close()
    assert type(error) is kind and str(error) == reason
    assert (factory.boundary.requests, factory.boundary.retries) == (1, 0)


@pytest.mark.parametrize(
    ("bounds", "timeout", "kind", "reason"),
    [
        (
            Limits(read_timeout=30.0, response_seconds=0.5),
            None,
            BoundaryError,
            "the answer was still arriving after 0.5 s",
        ),
        (Limits(read_timeout=30.0), 0.5, ScanTimeout, "not read: the scan's time limit of 0.5 s was reached"),
        (Limits(read_timeout=0.5, response_seconds=30.0), None, TimeoutError, "timed out"),
    ],
)
@TIME_LIMIT
def test_a_request_the_server_does_not_read_is_cut_at_the_deadline_or_its_silence(
    bounds: Limits, timeout: float | None, kind: type, reason: str
) -> None:
    """Writing a request waits for the server to read it; each send waits at most what is left
    of the deadline (or the read timeout, for silence). Our requests fit a socket's buffer, so
    this is `_write` itself, against a peer that reads nothing."""
    from scanner.sources.live.transport import _write

    ours, theirs = socket.socketpair()
    try:
        ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)
        deadline = Boundary("https://127.0.0.1:1", bounds, timeout).request_deadline()
        error = within(30, lambda: _write(ours, b"x" * 8_000_000, deadline, bounds.read_timeout))
    finally:
        ours.close()
        theirs.close()
    assert type(error) is kind and str(error) == reason
