"""Hostile answers the emulator can give, so tests can hold a live scan to its boundary.

A real ARM endpoint, or something posing as one, can answer anything: a next-page link to
another host or to itself, a connection that stalls or trickles, a ``Retry-After`` of a day,
a 500 on every try, an empty body, the caller's own token echoed back. `Answer` describes one
such answer; `Faults.answers` and `Faults.next_links` (in `server`) say where it is given.
The `Witness` is a second HTTPS server on another loopback port, trusted like the emulator,
that records whether a request reached it with an ``Authorization`` header: the off-host
destination a hostile ``nextLink`` points at.
"""

from __future__ import annotations

import io
import json
import ssl
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Answer:
    """One answer to every request whose path ends with a given suffix.

    In a string of ``body``, ``{token}`` becomes the caller's bearer token and ``{offhost}``
    the witness's origin; ``bytes`` are sent as they are (``b""``: an empty body). ``delivery``
    is "whole", "stall" (the headers never come), "trickle" (the status line and headers
    whole, then the body one byte every ``interval`` seconds) or "trickle-head" (everything,
    from the status line's first byte, one byte every ``interval`` seconds). A trickle ends
    when the client goes away or the emulator stops.
    """

    status: int = 200
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delivery: str = "whole"
    interval: float = 0.05  # seconds between the bytes of a trickle


DELIVERIES = ("whole", "stall", "trickle", "trickle-head")
STALL_SECONDS = 60.0  # a stalled handler gives up after this, or when the emulator stops


def render(answer: Answer, token: str, offhost: str) -> bytes:
    """The answer's body bytes, placeholders filled."""
    if isinstance(answer.body, bytes):
        return answer.body
    text = json.dumps(answer.body)
    return text.replace("{token}", token).replace("{offhost}", offhost).encode("utf-8")


class _Trickle(io.BufferedIOBase):
    """A handler's output written one byte every ``interval`` seconds; once the emulator stops,
    nothing more is written."""

    def __init__(self, out: io.BufferedIOBase, interval: float, stopping: threading.Event) -> None:
        super().__init__()
        self.out, self.interval, self.stopping = out, interval, stopping

    def write(self, data: Any, /) -> int:
        view = memoryview(data).cast("B")
        for index in range(len(view)):
            if self.stopping.wait(self.interval):
                break
            self.out.write(view[index : index + 1])
            self.out.flush()
        return len(view)

    def flush(self) -> None:
        self.out.flush()


def deliver(handler: BaseHTTPRequestHandler, answer: Answer, data: bytes, stopping: threading.Event) -> None:
    """Send ``data`` as the answer says. A trickle writes through `_Trickle` from the first
    byte of the head ("trickle-head") or of the body ("trickle"); a client that goes away
    ends it, and its connection is closed, since what it was sent may stop part-way."""
    if answer.delivery not in DELIVERIES:
        raise ValueError(f"unknown delivery {answer.delivery!r}: one of {', '.join(DELIVERIES)}")
    if answer.delivery == "stall":
        stopping.wait(STALL_SECONDS)
        return
    out = handler.wfile
    trickle = _Trickle(out, answer.interval, stopping)
    try:
        if answer.delivery == "trickle-head":
            handler.wfile = trickle
        handler.send_response(answer.status)
        handler.send_header("Content-Type", "application/json; charset=utf-8")
        handler.send_header("Content-Length", str(len(data)))
        for key, value in answer.headers.items():
            handler.send_header(key, value)
        handler.end_headers()
        if answer.delivery == "trickle":
            handler.wfile = trickle
        handler.wfile.write(data)
    except OSError:  # the client stopped reading
        pass
    finally:
        handler.wfile = out
    if answer.delivery != "whole":
        handler.close_connection = True


class Witness:
    """An HTTPS server on another port that answers every request with an empty ARM list and
    records, per request, its path and whether it carried an ``Authorization`` header."""

    def __init__(self, certificate: Path, key: Path) -> None:
        self.seen: list[tuple[str, bool]] = []
        lock = threading.Lock()
        seen = self.seen

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_: Any) -> None:
                return

            def do_GET(self) -> None:
                with lock:
                    seen.append((self.path, "Authorization" in self.headers))
                data = b'{"value": []}'
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_POST = do_GET

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(certificate, key)
        self.server.socket = context.wrap_socket(self.server.socket, server_side=True)

    @property
    def endpoint(self) -> str:
        return f"https://127.0.0.1:{self.server.server_address[1]}"

    @property
    def tokens_seen(self) -> int:
        """Requests that reached the witness with an Authorization header."""
        return sum(1 for _, authorized in self.seen if authorized)
