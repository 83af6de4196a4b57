"""azai's HTTP transport under the azure-core pipeline: http.client over a pool of kept-alive
connections to the one ARM origin, directly or through the enterprise proxy's tunnel.

Why not azure-core's `RequestsTransport`: a scan sends tens of thousands of small reads to one
origin, and requests and urllib3 were a third of its CPU per request, preparing, merging and
re-parsing what azure-core had already built (sessions, cookie jars, proxy and ``.netrc``
lookups, pool keys, URL requoting). What a scan needs of them is kept, here:

- TLS verified against the bundle the environment names (``REQUESTS_CA_BUNDLE``, then
  ``SSL_CERT_FILE``; certifi's, as requests uses, when neither is set), hostname checked;
  the endpoint must be ``https://``, since every request carries the token (azure-core's
  bearer policy refused plain HTTP too, request by request);
- an ``http://`` proxy (``HTTPS_PROXY``, with ``user:password@`` sent as Basic proxy
  authorization), tunnelled with ``CONNECT``;
- one deadline for each whole request (`Deadline`: `Limits.response_seconds`, or the scan's
  ``--timeout`` when that ends first) over connecting, writing the request, and reading the
  answer's status line, headers and body: every socket operation waits at most what is left of
  it (`_Paced`, `_write`, `_connect`), so a server that trickles any part one byte at a time is
  cut at the deadline; within it, a socket silent for the read timeout fails sooner. Kept-alive
  connections are checked before reuse;
- each request's head written in one buffer, and each answer's status line and headers read,
  by the transport itself (`_request_head`, `_answer_class`): http.client makes the
  connection, the tunnel and TLS, and frames bodies, but its header machinery, and the email
  parser it reads heads with, were a fifth of a request's CPU;
- each body read whole as it arrives, within the live boundary's size limit, and scrubbed of
  the issued tokens;
- failures raised as the azure-core errors its retry policy knows: a connection that could not
  be made or a request that could not be written is a `ServiceRequestError`, one that broke
  while answering (a body cut short included) a `ServiceResponseError`, timeouts (a socket
  silent too long) their timeout kinds; the policy retries them for the methods it retries
  (GET, and the Resource Graph POST, which the collector names). A request whose deadline
  passes ends with the deadline's own error (`Deadline.passed`), which is not retried: the
  scan's `ScanTimeout`, which the collector reports in the scan's time-limit gap, or the
  boundary's refusal of an answer still arriving after `Limits.response_seconds`.

It also refuses, where bytes leave, any request that could write (only GET and HEAD, and POST
to Resource Graph, pass) or that leaves the ARM endpoint's origin, and spaces requests with the
rate limits' token buckets.
"""

from __future__ import annotations

import base64
import functools
import http.client
import io
import os
import select
import socket
import ssl
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import SplitResult, quote, unquote, urlsplit

from scanner.errors import InputError
from scanner.sources.live.boundary import Boundary, BoundaryError, Deadline

if TYPE_CHECKING:
    from scanner.sources.live.clients import RateLimits

GRAPH_QUERY_PATH = "/providers/Microsoft.ResourceGraph/resources"
GRAPH_PATH = GRAPH_QUERY_PATH.lower()  # for matching lower-cased paths
# requests' requoting of a request target (requests.utils.requote_uri): what may stand unquoted.
_SAFE = "!#$%&'()*+,/:;=?@[]~"
POOL_SIZE = 64  # idle connections kept: the collector's 32 workers, and room for its metrics reads
# http.client's bounds on an answer's header block: the longest line, and the most lines.
MAX_HEADER_LINE = 65536
MAX_HEADER_LINES = 100
# Interim (1xx) answers skipped before the final one: a server that sends more is refused, not
# waited on, since each resets the read timeout.
MAX_INTERIM_ANSWERS = 8
# What surrounds a header value, besides the line's end: SP and HTAB only (RFC 9110 section
# 5.5); bytes past ASCII, read as Latin-1, belong to the value even where Unicode calls them space.
_BLANKS = " \t\r\n"


class ReadOnlyViolation(RuntimeError):
    """A scan tried to send a request that could change Azure. This is a bug, never allowed."""


def tls_context(bundle: str | None) -> ssl.SSLContext:
    """Certificates checked against ``bundle`` (a file of certificates or a directory of them),
    or certifi's bundle when none is named, as requests does; hostnames checked; TLS 1.2 at
    least. A bundle that cannot be read is an `InputError` naming it."""
    if bundle is None:
        import certifi

        return ssl.create_default_context(cafile=certifi.where())
    try:
        if os.path.isdir(bundle):
            return ssl.create_default_context(capath=bundle)
        return ssl.create_default_context(cafile=bundle)
    except OSError as exc:  # ssl.SSLError too: a file that holds no certificate
        reason = exc.strerror or str(exc)
        raise InputError(
            f"the CA bundle {bundle} (REQUESTS_CA_BUNDLE or SSL_CERT_FILE) cannot be used: {reason}"
        ) from None


def _proxy(url: str | None) -> tuple[str, int, dict[str, str]] | None:
    """Host, port and the CONNECT headers of the proxy ``url`` (requests' forms: ``host:port``,
    ``http://[user:password@]host:port``); None for none."""
    if not url:
        return None
    parts = urlsplit(url if "://" in url else f"http://{url}")
    if parts.scheme.lower() != "http":
        raise InputError(
            f"the proxy {parts.scheme}://{parts.hostname} is not an http:// proxy: azai tunnels through http:// "
            "proxies (CONNECT)"
        )
    try:
        port = parts.port or 80
    except ValueError:
        port = 0
    if not parts.hostname or not port:
        raise InputError(f"the proxy http://{parts.hostname or ''}: its host or port cannot be read")
    headers = {}
    if parts.username is not None:
        try:
            secret = f"{unquote(parts.username)}:{unquote(parts.password or '')}".encode("latin-1")
        except UnicodeEncodeError:
            raise InputError(
                f"the proxy http://{parts.hostname}: its user name or password has characters that Basic "
                "authorization cannot carry (Latin-1 only)"
            ) from None
        headers["Proxy-Authorization"] = "Basic " + base64.b64encode(secret).decode("ascii")
    return parts.hostname, port, headers


def _readable(sock: socket.socket) -> bool:
    """Whether an idle connection's socket has something to read: the server closed it (or sent
    what nobody asked for), so it cannot carry a request. poll where there is one: select
    refuses descriptors past 1024."""
    if hasattr(select, "poll"):
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        return bool(poller.poll(0))
    return bool(select.select([sock], [], [], 0)[0])


class _Paced(io.RawIOBase):
    """What an answer is read from: the socket, each receive waiting at most what is left of
    the request's `Deadline` (and at most ``silence`` seconds, the read timeout). A socket's
    own timeout bounds one receive, not a whole read: a status line or a body trickled one
    byte at a time would never time out. When the deadline passes, the deadline's error
    (`Deadline.passed`) is raised through http.client's reading, which lets it pass.

    http.client builds its answers from a socket's ``makefile("rb")``: this object stands for
    the socket there, its buffered reader reading through it. It holds no reference on the
    socket (as the socket's own files do), so closing the connection closes the socket at once."""

    def __init__(self, sock: socket.socket, deadline: Deadline, silence: float) -> None:
        super().__init__()
        self.sock, self.deadline, self.silence = sock, deadline, silence

    def makefile(self, mode: str) -> io.BufferedReader:
        return io.BufferedReader(self)

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        left = self.deadline.left()
        if left >= self.silence:
            self.sock.settimeout(self.silence)
            return self.sock.recv_into(buffer)  # a TimeoutError here is silence: the read timeout
        if left > 0:
            self.sock.settimeout(left)
            try:
                return self.sock.recv_into(buffer)
            except TimeoutError:
                pass
        raise self.deadline.passed()


def _write(sock: socket.socket, message: bytes, deadline: Deadline, silence: float) -> None:
    """``sendall``, each send waiting at most what is left of ``deadline`` (and ``silence``):
    an SSL socket's ``sendall`` gives each of its sends the whole timeout again."""
    view = memoryview(message)
    while view:
        left = deadline.left()
        if left <= 0:
            raise deadline.passed()
        sock.settimeout(min(left, silence))
        try:
            sent = sock.send(view)
        except TimeoutError:
            if left < silence:
                raise deadline.passed() from None
            raise
        view = view[sent:]


def _tunnel_answer(deadline: Deadline, silence: float) -> type[http.client.HTTPResponse]:
    """The class http.client reads a proxy's answer to ``CONNECT`` with (it calls
    ``response_class(sock, method=...)``), reading it under the request's deadline and, for
    silence, ``silence`` (the connect timeout: the answer is part of making the connection)."""

    class TunnelAnswer(http.client.HTTPResponse):
        def __init__(
            self, sock: socket.socket, debuglevel: int = 0, method: str | None = None, url: str | None = None
        ) -> None:
            # http.client only calls makefile("rb") on what it is given as the socket
            super().__init__(_Paced(sock, deadline, silence), debuglevel, method, url)  # type: ignore[arg-type]

    return TunnelAnswer


def _header_lines(fp: Any) -> list[str]:
    """The lines of a header block, up to the blank line that ends it, within http.client's
    bounds (`MAX_HEADER_LINE`, `MAX_HEADER_LINES`)."""
    lines: list[str] = []
    while True:
        line = fp.readline(MAX_HEADER_LINE + 1)
        if len(line) > MAX_HEADER_LINE:
            raise http.client.LineTooLong("header line")
        if line in (b"\r\n", b"\n", b""):
            return lines
        lines.append(line.decode("iso-8859-1"))
        if len(lines) > MAX_HEADER_LINES:
            raise http.client.HTTPException(f"got more than {MAX_HEADER_LINES} headers")


def _content_length(value: str | None) -> int | None:
    """A body's length from its ``Content-Length`` (the same value repeated counts once, RFC 9110
    section 8.6); None when it gives none that can be used, so the body is read to the close."""
    values = {part.strip(_BLANKS) for part in (value or "").split(",")}
    if len(values) != 1:
        return None
    try:
        length = int(values.pop())
    except ValueError:
        return None
    return length if length >= 0 else None


def _host_field(host: str, port: int) -> str:
    """The ``Host`` of requests to ``host``:``port``, as http.client writes it: IDNA, an IPv6
    address in brackets, the port unless it is HTTPS's."""
    name = host if host.isascii() else host.encode("idna").decode("ascii")
    name = f"[{name}]" if ":" in name else name
    return name if port == 443 else f"{name}:{port}"


def _request_head(method: str, target: str, host: str, headers: Mapping[str, str], body: bytes | None) -> bytes:
    """A request's line and header fields, as http.client writes them (``Host`` and
    ``Accept-Encoding: identity`` unless given, a ``Content-Length`` for a body), in one buffer:
    http.client's putrequest and putheader machinery was a twentieth of a request's CPU. A
    field that would break the head (a line break, a character Latin-1 cannot carry) is a
    ValueError."""
    given = {name.lower() for name in headers}
    fields = [f"{method} {target} HTTP/1.1"]
    if "host" not in given:
        fields.append(f"Host: {host}")
    if "accept-encoding" not in given:
        fields.append("Accept-Encoding: identity")
    fields += [f"{name}: {value}" for name, value in headers.items()]
    if body is not None and "content-length" not in given:
        fields.append(f"Content-Length: {len(body)}")
    head = "\r\n".join(fields) + "\r\n\r\n"
    if head.count("\n") != len(fields) + 1 or head.count("\r") != len(fields) + 1:
        raise ValueError("a request header holds a line break")
    return head.encode("latin-1")


def _status_line(fp: Any) -> tuple[str, int, str]:
    """The version, status and reason of an answer's status line, refused as http.client
    refuses it: no line at all is a `http.client.RemoteDisconnected` (a kept-alive connection
    the server closed), a line that is not ``HTTP/x nnn reason`` (its parts apart by blanks, the
    code three ASCII digits) a `http.client.BadStatusLine`."""
    line = fp.readline(MAX_HEADER_LINE + 1)
    if len(line) > MAX_HEADER_LINE:
        raise http.client.LineTooLong("status line")
    if not line:
        raise http.client.RemoteDisconnected("Remote end closed connection without response")
    version, code, reason = (*line.decode("iso-8859-1").split(None, 2), "", "")[:3]  # as http.client splits it
    if not version.startswith("HTTP/") or len(code) != 3 or not code.isascii() or not code.isdigit() or code < "100":
        raise http.client.BadStatusLine(repr(line))
    if not version.startswith("HTTP/1.") and version != "HTTP/0.9":
        raise http.client.UnknownProtocol(version)
    return version, int(code), reason.strip(_BLANKS)


@functools.cache
def _answer_class() -> Callable[[_Paced, str], Any]:
    from azure.core.utils import CaseInsensitiveDict

    class Answer(http.client.HTTPResponse):
        """http.client's answer, with its status line and header block read in one pass into
        ``fields``, the case-insensitive headers azure-core's responses carry. http.client
        hands the block to the email package's feed parser, a sixth of a live request's CPU.
        Interim answers (1xx but 101: 100 Continue and 103 Early Hints alike) are skipped, up
        to `MAX_INTERIM_ANSWERS`. A repeated header's values are joined with ", ", as urllib3
        did; a folded line (obsolete) continues the value before it; a line that is not
        ``name: value`` is passed over.
        The body is http.client's to read, framed as RFC 9112 says: chunked when the last
        transfer coding is, else by its length, else to the close (a 204, 304 or HEAD answer
        has none), and the connection kept unless the answer closes it. (``headers`` stays
        unset: ``fields`` holds them.)"""

        def __init__(self, paced: _Paced, method: str) -> None:
            # http.client only calls makefile("rb") on what it is given as the socket
            super().__init__(paced, method=method)  # type: ignore[arg-type]
            self.for_head = method == "HEAD"  # an answer to HEAD has no body
            self.fields: Any = None

        def begin(self) -> None:
            version, status, reason = _status_line(self.fp)
            for _ in range(MAX_INTERIM_ANSWERS + 1):
                if not 100 <= status < 200 or status == http.client.SWITCHING_PROTOCOLS:
                    break
                _header_lines(self.fp)  # an interim answer: dropped
                version, status, reason = _status_line(self.fp)
            else:
                raise http.client.HTTPException(f"more than {MAX_INTERIM_ANSWERS} interim answers")
            self.code = self.status = status
            self.reason = reason
            self.version = 10 if version in ("HTTP/1.0", "HTTP/0.9") else 11
            self.fields = fields = _read_fields(_header_lines(self.fp), CaseInsensitiveDict())
            codings = str(fields.get("Transfer-Encoding", "")).split(",")
            self.chunked = codings[-1].strip(_BLANKS).lower() == "chunked"  # the last coding frames it
            self.chunk_left = None
            self.will_close = _closes(self.version, fields)
            self.length = None if self.chunked else _content_length(fields.get("Content-Length"))
            if status in (http.client.NO_CONTENT, http.client.NOT_MODIFIED) or status < 200 or self.for_head:
                self.length, self.chunked = 0, False  # no body, whatever its head says
            if self.length is None and not self.chunked:
                self.will_close = True  # a body with neither a length nor chunks ends with the connection

    return Answer


def _read_fields(lines: Iterable[str], fields: Any) -> Any:
    """The header block's ``lines`` put in ``fields`` (azure-core's case-insensitive dict, which
    only the lazily built answer class imports), as `_answer_class` says: a repeated header's
    values joined with ", ", as urllib3 did; a folded line (obsolete) continuing the value
    before it; a line that is not ``name: value`` passed over, and the folded lines after it."""
    name = ""
    for line in lines:
        if line[0] in " \t":
            if name:
                fields[name] = f"{fields[name]} {line.strip(_BLANKS)}".lstrip(" ")
            continue
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip(_BLANKS):
            name = ""
            continue
        value = value.strip(_BLANKS)
        fields[name] = f"{fields[name]}, {value}" if name in fields else value
    return fields


def _closes(version: int, fields: Any) -> bool:
    """Whether the server closes the connection after this answer: an HTTP/1.1 one when it says
    ``Connection: close``, an HTTP/1.0 one unless it asks to keep it alive (http.client's rule)."""
    connection = str(fields.get("Connection", "")).lower()
    if version == 11:
        return "close" in connection
    keep = fields.get("Keep-Alive") or "keep-alive" in connection
    return not (keep or "keep-alive" in str(fields.get("Proxy-Connection", "")).lower())


@functools.cache
def _response_class() -> type:
    from azure.core.rest._http_response_impl import HttpResponseImpl

    class ReadResponse(HttpResponseImpl):
        """An answer read whole, as azure-core's responses are when not streamed."""

        def __init__(self, request: Any, answer: http.client.HTTPResponse, headers: Any, content: bytes) -> None:
            super().__init__(
                request=request,
                internal_response=answer,
                status_code=answer.status,
                reason=answer.reason,
                content_type=headers.get("Content-Type"),
                headers=headers,
                block_size=len(content) or 1,
                stream_download_generator=None,
            )
            self._content = content
            self._is_stream_consumed = True
            self._is_closed = True

    return ReadResponse


@functools.cache
def _transport_class() -> type:
    """``ArmTransport``: azure-core's transport interface, made on first use, since azure-core
    loads only when a live scan runs; its workings are `_ArmTransport`'s."""
    from azure.core.pipeline.transport import HttpTransport

    class ArmTransport(_ArmTransport, HttpTransport[Any, Any]):
        """The transport of every azai client: see the module's docstring."""

    return ArmTransport


class _ArmTransport:
    """What ``ArmTransport`` does (see the module's docstring), kept apart from azure-core's
    base class so that it is defined without importing azure-core; the azure-core errors it
    raises are imported where it raises them (once loaded, an import is a dictionary lookup)."""

    def __init__(self, boundary: Boundary, limits: RateLimits, bundle: str | None, proxy: str | None) -> None:
        self.boundary, self.limits = boundary, limits
        scheme, self.host, port = boundary.origin
        if scheme != "https" or port is None:
            raise InputError(f"the ARM endpoint {boundary.endpoint} is not an https:// URL: tokens go only over TLS")
        self.port = port
        self.host_field = _host_field(self.host, port)
        self.tls = tls_context(bundle)
        self.proxy = _proxy(proxy)
        self.idle: list[http.client.HTTPConnection] = []
        self.lock = threading.Lock()

    def open(self) -> None:
        return None

    def close(self) -> None:
        with self.lock:
            idle, self.idle = self.idle, []
        for connection in idle:
            connection.close()

    def __exit__(self, *_: object) -> None:
        self.close()

    def send(self, request: Any, **kwargs: Any) -> Any:
        method, url = request.method.upper(), request.url
        parts = urlsplit(url)
        path = parts.path.lower()
        if method not in ("GET", "HEAD") and not (method == "POST" and path.endswith(GRAPH_PATH)):
            raise ReadOnlyViolation(f"refused {method} {url}: azai scans are read-only")
        self.boundary.check_origin(url)  # the policy's check, again where bytes leave
        message = self._message(request, parts)
        self.limits.bucket(path).acquire()
        connect, silence = self._timeouts(kwargs)
        deadline = self.boundary.request_deadline()
        self.boundary.sent()
        connection = self._connection(deadline, connect)
        try:
            answer, content = self._exchange(connection, message, method, deadline, silence)
        except BaseException:
            connection.close()  # unread or broken: never reused
            raise
        if answer.will_close:
            connection.close()
        else:
            self._release(connection)
        return _response_class()(request, answer, answer.fields, self.boundary.redactor.scrub(content))

    def _timeouts(self, kwargs: dict[str, Any]) -> tuple[float, float]:
        """Connect and read timeouts: the boundary's, or shorter ones a caller gave (each
        socket operation is held to the request's deadline besides)."""
        bounds = self.boundary.limits
        chosen = []
        timeouts = (("connection_timeout", bounds.connect_timeout), ("read_timeout", bounds.read_timeout))
        for option, default in timeouts:
            given = kwargs.get(option)
            chosen.append(min(default, given) if isinstance(given, (int, float)) else default)
        return chosen[0], chosen[1]

    def _connection(self, deadline: Deadline, timeout: float) -> http.client.HTTPConnection:
        """A kept-alive connection that the server has not closed, else a new one."""
        from azure.core.exceptions import ServiceRequestError, ServiceRequestTimeoutError

        while True:
            with self.lock:
                connection = self.idle.pop() if self.idle else None
            if connection is None:
                break
            if connection.sock is not None and not _readable(connection.sock):
                return connection
            connection.close()
        try:
            return self._connect(deadline, timeout)
        except TimeoutError as exc:
            if deadline.left() <= 0:
                raise deadline.passed() from None
            reason = f"Connection timed out. (connect timeout={timeout})"
            raise ServiceRequestTimeoutError(reason, error=exc) from exc
        except (OSError, http.client.HTTPException) as exc:
            raise ServiceRequestError(f"could not connect: {exc}", error=exc) from exc

    def _connect(self, deadline: Deadline, timeout: float) -> http.client.HTTPConnection:
        """A new connection, made within ``timeout`` and the request's deadline: the TCP
        connection (with the proxy's tunnel, its answer read under the deadline), then the
        TLS handshake, given what is left (http.client's HTTPSConnection.connect gives the
        handshake the whole timeout again)."""
        host, port = (self.proxy[0], self.proxy[1]) if self.proxy else (self.host, self.port)
        wait = min(timeout, deadline.left())
        if wait <= 0:
            raise deadline.passed()
        connection = http.client.HTTPSConnection(host, port, timeout=wait, context=self.tls)
        if self.proxy:
            connection.set_tunnel(self.host, self.port, headers=self.proxy[2])
            connection.response_class = _tunnel_answer(deadline, timeout)
        try:
            http.client.HTTPConnection.connect(connection)  # which turns Nagle's algorithm off, as urllib3 did
            wait = min(timeout, deadline.left())
            if wait <= 0:
                raise deadline.passed()
            connection.sock.settimeout(wait)
            connection.sock = self.tls.wrap_socket(connection.sock, server_hostname=self.host)
        except BaseException:
            connection.close()  # the socket, not left to the garbage collector
            raise
        return connection

    def _release(self, connection: http.client.HTTPConnection) -> None:
        with self.lock:
            if len(self.idle) < POOL_SIZE:
                self.idle.append(connection)
                return
        connection.close()

    def _message(self, request: Any, parts: SplitResult) -> bytes:
        """``request`` as it goes on the wire (its URL split into ``parts`` by `send`): its
        head, and its body, Resource Graph's query, JSON text sent as UTF-8 as urllib3 sent
        it. A head that cannot be written is refused before any connection is taken, as a
        `BoundaryError` (a coverage gap, not retried: it would be refused again)."""
        target = quote(parts.path or "/", safe=_SAFE)
        if parts.query:
            target += "?" + quote(parts.query, safe=_SAFE)
        body = request.content
        if isinstance(body, str):
            body = body.encode("utf-8")
        try:
            head = _request_head(request.method, target, self.host_field, request.headers, body)
        except ValueError as exc:
            raise BoundaryError(f"refused to send a request: {exc}") from None
        return head + body if body else head

    def _exchange(
        self,
        connection: http.client.HTTPConnection,
        message: bytes,
        method: str,
        deadline: Deadline,
        silence: float,
    ) -> tuple[Any, bytes]:
        """Send ``message`` and read its answer whole before ``deadline``, failures mapped to
        azure-core's errors (the deadline's own error passes as it is)."""
        from azure.core.exceptions import (
            IncompleteReadError,
            ServiceRequestError,
            ServiceRequestTimeoutError,
            ServiceResponseError,
            ServiceResponseTimeoutError,
        )

        try:
            _write(connection.sock, message, deadline, silence)
        except TimeoutError as exc:
            raise ServiceRequestTimeoutError(f"Write timed out. (timeout={silence})", error=exc) from exc
        except OSError as exc:
            raise ServiceRequestError(f"the request could not be sent: {exc}", error=exc) from exc
        try:
            answer = _answer_class()(_Paced(connection.sock, deadline, silence), method)
            answer.begin()
            return answer, self._read(answer)
        except TimeoutError as exc:
            raise ServiceResponseTimeoutError(f"Read timed out. (read timeout={silence})", error=exc) from exc
        except http.client.IncompleteRead as exc:
            raise IncompleteReadError(f"the answer was cut short: {exc!r}", error=exc) from exc
        except (OSError, http.client.HTTPException) as exc:
            raise ServiceResponseError(f"the answer could not be read: {exc!r}", error=exc) from exc

    def _read(self, answer: http.client.HTTPResponse) -> bytes:
        """The body, within the boundary's size limit (its reader keeps the deadline)."""
        limit = self.boundary.limits.response_bytes
        chunks: list[bytes] = []
        size = 0
        while chunk := answer.read1(64 * 1024):
            size += len(chunk)
            if size > limit:
                raise BoundaryError(f"the answer was larger than {limit:,} bytes")
            chunks.append(chunk)
        if answer.length:  # http.client's read1 ends a Content-Length body cut short quietly
            raise http.client.IncompleteRead(b"".join(chunks), answer.length)
        answer.close()  # read to its end: the connection may carry the next request
        return b"".join(chunks)


def arm_transport(boundary: Boundary, limits: RateLimits, bundle: str | None, proxy: str | None) -> Any:
    """The transport every client of one scan shares (built lazily: azure-core loads only when
    a live scan runs)."""
    return _transport_class()(boundary, limits, bundle, proxy)
