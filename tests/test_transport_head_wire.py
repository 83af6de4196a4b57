"""The live transport reading an answer's head: status line, header fields and body framing.

Each test scripts a raw TLS server byte by byte (the harness of `tests.test_transport_wire`),
drives the real client (`ClientFactory`, `arm_collection`) against it and asserts what the client
returned and what the server received. The expectations come from HTTP/1.1 (RFC 9112) and HTTP
semantics (RFC 9110), as a client must read an answer, not from the transport's code.
"""

from __future__ import annotations

from collections.abc import Sequence

import pytest
from azure.core.exceptions import ServiceResponseError
from azure.core.rest import HttpRequest, HttpResponse

from scanner.sources.live.clients import ClientFactory
from tests import test_transport_wire as harness
from tests.test_transport_wire import (
    Received,
    Start,
    Wire,
    chunks,
    groups,
    listing,
    page,
    within,
)

# the fixture: a scripted TLS server on 127.0.0.1, and a factory that trusts its certificate
wire = harness.wire

TARGET = "/subscriptions?api-version=1"
HANG_GUARD = 30.0  # seconds: a call still running then hangs (a guard, not a timing assertion)


# -- helpers ----------------------------------------------------------------------------------


def lines(*items: bytes | str) -> bytes:
    """Each item as one CRLF-ended line (str as ISO-8859-1), then the empty line ending a head."""
    raw = [item if isinstance(item, bytes) else item.encode("latin-1") for item in items]
    return b"".join(line + b"\r\n" for line in raw) + b"\r\n"


def sized(status_line: str, body: bytes, *fields: bytes | str) -> bytes:
    """A whole answer with the given status line, fields, a Content-Length, and the body."""
    return lines(status_line, "Content-Type: application/json", *fields, f"Content-Length: {len(body)}") + body


def get(factory: ClientFactory, path: str = "/subscriptions", method: str = "GET") -> HttpResponse:
    request = HttpRequest(method, factory.url(path, {"api-version": "1"}))
    response: HttpResponse = factory.raw().send_request(request)
    return response


def guarded(factory: ClientFactory, path: str = "/subscriptions", method: str = "GET") -> HttpResponse:
    outcome = within(HANG_GUARD, lambda: get(factory, path, method))
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome


def listed(factory: ClientFactory, path: str) -> list[object]:
    outcome = within(HANG_GUARD, lambda: listing(factory, path))
    if isinstance(outcome, BaseException):
        raise outcome
    return outcome


def connections_of(received: Sequence[Received]) -> list[int]:
    return [request.connection for request in received]


# -- 1. field names and values -----------------------------------------------------------------


def test_field_names_are_case_insensitive_and_values_lose_leading_and_trailing_whitespace(wire: Start) -> None:
    body = page(groups(1))

    def script(request: Received, connection: Wire) -> bool:
        connection.send(
            sized(
                "HTTP/1.1 200 OK",
                body,
                "X-Ms-Request-Id: abc-123",
                "x-padded: \t  value with  inner \t spaces \t ",
                "X-TIGHT:tight",
                "X-Empty:  \t ",
                "x-tab:\tone",
            )
        )
        return True

    server, factory = wire(script)
    response = guarded(factory)

    assert response.status_code == 200
    for name in ("x-ms-request-id", "X-MS-REQUEST-ID", "X-Ms-Request-Id", "x-Ms-rEqUeSt-iD"):
        assert response.headers[name] == "abc-123", name
    assert response.headers["X-Padded"] == "value with  inner \t spaces"  # only the ends are OWS
    assert response.headers["x-tight"] == "tight"
    assert response.headers["X-EMPTY"] == ""
    assert response.headers["X-Tab"] == "one"
    assert response.headers["content-length"] == str(len(body))
    assert response.json() == {"value": groups(1)}
    assert server.targets == [TARGET]


# -- 2. a repeated field ------------------------------------------------------------------------


def test_a_field_repeated_in_one_answer_reads_as_its_values_joined_in_order(wire: Start) -> None:
    body = page([])

    def script(request: Received, connection: Wire) -> bool:
        connection.send(
            sized(
                "HTTP/1.1 200 OK",
                body,
                "X-Multi: first",
                "X-Other: between",
                "x-multi:  second ",
                "X-MULTI: third, fourth",
                "Cache-Control: no-cache",
                "cache-control: no-store",
            )
        )
        return True

    server, factory = wire(script)
    response = guarded(factory)

    assert response.status_code == 200
    assert response.headers["x-multi"] == "first, second, third, fourth"
    assert response.headers["X-Other"] == "between"
    assert response.headers["Cache-Control"] == "no-cache, no-store"
    assert response.json() == {"value": []}
    assert len(server.received) == 1


# -- 3. interim answers -------------------------------------------------------------------------


INTERIM = {
    "100": lines("HTTP/1.1 100 Continue"),
    "103": lines("HTTP/1.1 103 Early Hints", "Link: </style.css>; rel=preload; as=style", "X-Hint: early"),
    "103-bare": lines("HTTP/1.1 103 Early Hints", "Link: </script.js>; rel=preload; as=script"),
}


@pytest.mark.parametrize("split", [False, True], ids=["one-record", "record-per-answer"])
@pytest.mark.parametrize("sequence", [("100",), ("103",), ("100", "103", "103-bare")], ids="+".join)
def test_interim_1xx_answers_are_skipped_and_only_the_final_answer_is_seen(
    wire: Start, split: bool, sequence: tuple[str, ...]
) -> None:
    items = groups(3)
    final = sized("HTTP/1.1 200 OK", page(items), "X-Hint: final", "X-Final: yes")
    interim = [INTERIM[name] for name in sequence]

    def script(request: Received, connection: Wire) -> bool:
        if split:
            connection.send(*interim, final, pause=0.02)
        else:
            connection.send(b"".join([*interim, final]))
        return True

    server, factory = wire(script)
    response = guarded(factory)

    assert response.status_code == 200
    assert response.headers["X-Hint"] == "final"  # not "early, final"
    assert response.headers["X-Final"] == "yes"
    assert "Link" not in response.headers
    assert response.json() == {"value": items}

    # the final answer's framing was kept: the next request on the connection reads its own answer
    second = guarded(factory)
    assert (second.status_code, second.json()) == (200, {"value": items})
    assert server.targets == [TARGET, TARGET]
    assert server.connections == 1
    assert factory.boundary.retries == 0


def test_interim_answers_are_skipped_in_a_listing(wire: Start) -> None:
    items = groups(5)

    def script(request: Received, connection: Wire) -> bool:
        connection.send(
            lines("HTTP/1.1 103 Early Hints", "Link: </a>; rel=preload"),
            sized("HTTP/1.1 200 OK", page(items)),
        )
        return True

    server, factory = wire(script)
    assert listed(factory, "/subscriptions/s/resourceGroups") == items
    assert server.targets == ["/subscriptions/s/resourceGroups?api-version=2021-04-01"]
    assert factory.boundary.retries == 0


# -- 4. obs-fold --------------------------------------------------------------------------------


def test_an_obs_fold_continues_the_previous_field_and_is_read_as_one_space(wire: Start) -> None:
    body = page([])

    def script(request: Received, connection: Wire) -> bool:
        connection.send(
            lines(
                "HTTP/1.1 200 OK",
                "Content-Type: application/json",
                "X-Folded: first",
                " second",
                "\tthird",
                "X-Padded-Fold: alpha  ",  # obs-fold = OWS CRLF RWS: the OWS before the CRLF is part of it
                " \t  beta",
                "X-After: plain",
                f"Content-Length: {len(body)}",
            )
            + body
        )
        return True

    server, factory = wire(script)
    response = guarded(factory)

    assert response.status_code == 200
    assert response.headers["X-Folded"] == "first second third"
    assert response.headers["X-Padded-Fold"] == "alpha beta"
    assert response.headers["X-After"] == "plain"
    assert response.json() == {"value": []}
    assert len(server.received) == 1


def test_whitespace_before_the_first_field_is_refused_or_its_line_ignored(wire: Start) -> None:
    """RFC 9112 §2.2: whitespace between the start-line and the first field: the recipient rejects
    the message or consumes each whitespace-preceded line without further processing. Either
    way the line is not a field (and not a fold onto the status line)."""
    body = page(groups(1))

    def script(request: Received, connection: Wire) -> bool:
        connection.send(
            lines("HTTP/1.1 200 OK", " X-Sneaky: 1", "Content-Type: application/json", f"Content-Length: {len(body)}")
            + body
        )
        return False

    server, factory = wire(script)
    outcome = within(HANG_GUARD, lambda: get(factory))
    if isinstance(outcome, BaseException):
        assert isinstance(outcome, ServiceResponseError), repr(outcome)
        assert len(server.received) == 1 + factory.boundary.retries
    else:
        assert outcome.status_code == 200
        assert "X-Sneaky" not in outcome.headers
        assert all("Sneaky" not in name for name in outcome.headers)
        assert outcome.json() == {"value": groups(1)}
        assert server.targets == [TARGET]


# -- 5. body framing ----------------------------------------------------------------------------


def test_a_content_length_body_is_read_exactly_and_the_connection_carries_the_next_request(wire: Start) -> None:
    def script(request: Received, connection: Wire) -> bool:
        name = request.path.split("/")[2]
        connection.send(sized("HTTP/1.1 200 OK", page(groups(2, name))))
        return True

    server, factory = wire(script)
    assert listed(factory, "/subscriptions/a/resourceGroups") == groups(2, "a")
    assert listed(factory, "/subscriptions/b/resourceGroups") == groups(2, "b")
    assert connections_of(server.received) == [1, 1]
    assert server.connections == 1
    assert factory.boundary.retries == 0


@pytest.mark.parametrize(
    "fields",
    [("Content-Length: 13", "Content-Length: 13"), ("Content-Length: 13, 13",), ("Content-Length: 13 ,13",)],
    ids=["field-repeated", "list-value", "list-value-spaced"],
)
def test_identical_content_length_values_are_accepted_as_one_length(wire: Start, fields: tuple[str, ...]) -> None:
    body = b'{"value": []}'
    assert len(body) == 13

    def script(request: Received, connection: Wire) -> bool:
        if request.path.endswith("/first"):
            connection.send(lines("HTTP/1.1 200 OK", "Content-Type: application/json", *fields) + body)
        else:
            connection.send(sized("HTTP/1.1 200 OK", page(groups(1, "next"))))
        return True

    server, factory = wire(script)
    response = guarded(factory, "/subscriptions/first")
    assert response.status_code == 200
    assert response.content == body
    assert response.json() == {"value": []}

    # the length framed the body: what follows on the connection is the next answer, read whole
    assert listed(factory, "/subscriptions/s/then") == groups(1, "next")
    assert server.targets == ["/subscriptions/first?api-version=1", "/subscriptions/s/then?api-version=2021-04-01"]
    assert factory.boundary.retries == 0


@pytest.mark.parametrize("coding", ["chunked", "Chunked", "CHUNKED"])
def test_chunked_transfer_coding_in_any_case_wins_over_content_length(wire: Start, coding: str) -> None:
    items = groups(30)
    body = page(items)

    def script(request: Received, connection: Wire) -> bool:
        connection.send(
            lines(
                "HTTP/1.1 200 OK", "Content-Type: application/json", "Content-Length: 7", f"Transfer-Encoding: {coding}"
            ),
            *chunks(body, [1, 7, 100, 1000]),
        )
        return False  # RFC 9112 §6.3: such a message might be an attack; the server ends the connection

    server, factory = wire(script)
    response = guarded(factory)
    assert response.status_code == 200
    assert response.content == body
    assert response.json() == {"value": items}
    assert server.targets == [TARGET]
    assert factory.boundary.retries == 0


@pytest.mark.parametrize("coding", ["chunked", "Chunked"])
def test_a_chunked_body_without_content_length_in_any_case_keeps_the_connection(wire: Start, coding: str) -> None:
    def script(request: Received, connection: Wire) -> bool:
        name = request.path.split("/")[2]
        connection.send(
            lines("HTTP/1.1 200 OK", "Content-Type: application/json", f"Transfer-Encoding: {coding}"),
            *chunks(page(groups(3, name)), [2, 50]),
        )
        return True

    server, factory = wire(script)
    assert listed(factory, "/subscriptions/a/resourceGroups") == groups(3, "a")
    assert listed(factory, "/subscriptions/b/resourceGroups") == groups(3, "b")
    assert connections_of(server.received) == [1, 1]
    assert factory.boundary.retries == 0


def test_an_http11_body_without_length_is_read_to_the_close(wire: Start) -> None:
    items = groups(20)

    def script(request: Received, connection: Wire) -> bool:
        name = request.path.split("/")[2]
        body = page(groups(20) if name == "s" else [])
        # no Content-Length, no Transfer-Encoding, no Connection field: RFC 9112 §6.3 rule 8
        connection.send(lines("HTTP/1.1 200 OK", "Content-Type: application/json"), body[:50], body[50:], pause=0.02)
        return False

    server, factory = wire(script)
    assert listed(factory, "/subscriptions/s/resourceGroups") == items
    assert listed(factory, "/subscriptions/t/resourceGroups") == []
    assert connections_of(server.received) == [1, 2]
    assert server.connections == 2
    assert factory.boundary.retries == 0


def test_an_http10_answer_without_keep_alive_is_read_to_the_close_and_not_reused(wire: Start) -> None:
    def script(request: Received, connection: Wire) -> bool:
        name = request.path.split("/")[2]
        body = page(groups(4, name))
        connection.send(lines("HTTP/1.0 200 OK", "Content-Type: application/json"), body[:10], body[10:], pause=0.02)
        return False

    server, factory = wire(script)
    assert listed(factory, "/subscriptions/a/resourceGroups") == groups(4, "a")
    assert listed(factory, "/subscriptions/b/resourceGroups") == groups(4, "b")
    assert connections_of(server.received) == [1, 2]
    assert server.connections == 2
    assert factory.boundary.retries == 0


def test_a_sized_http10_answer_without_keep_alive_does_not_keep_its_connection(wire: Start) -> None:
    """RFC 9112 §9.3: an HTTP/1.0 answer without the keep-alive option closes the connection
    after it, even if the server leaves the socket open a moment."""

    def script(request: Received, connection: Wire) -> bool:
        name = request.path.split("/")[2]
        connection.send(sized("HTTP/1.0 200 OK", page(groups(2, name))))
        connection.linger(0.5)  # a request sent on it anyway is caught
        return False

    server, factory = wire(script)
    assert listed(factory, "/subscriptions/a/resourceGroups") == groups(2, "a")
    assert listed(factory, "/subscriptions/b/resourceGroups") == groups(2, "b")
    assert connections_of(server.received) == [1, 2]
    assert server.late == []
    assert server.connections == 2
    assert factory.boundary.retries == 0


@pytest.mark.parametrize("option", ["keep-alive", "Keep-Alive"])
def test_an_http10_answer_with_keep_alive_and_a_length_keeps_its_connection(wire: Start, option: str) -> None:
    def script(request: Received, connection: Wire) -> bool:
        name = request.path.split("/")[2]
        connection.send(sized("HTTP/1.0 200 OK", page(groups(2, name)), f"Connection: {option}"))
        return True

    server, factory = wire(script)
    for name in "abc":
        assert listed(factory, f"/subscriptions/{name}/resourceGroups") == groups(2, name)
    assert connections_of(server.received) == [1, 1, 1]
    assert server.connections == 1
    assert factory.boundary.retries == 0


# -- 6. answers without a body ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("method", "head", "status", "field"),
    [
        # a 204 while the server keeps the connection open: a client waiting for a body would hang
        pytest.param(
            "GET", ("HTTP/1.1 204 No Content", "X-Ms-Request-Id: r-204"), 204, ("x-ms-request-id", "r-204"), id="204"
        ),
        # RFC 9110 section 8.6: a 304's Content-Length is the selected representation's, not a body
        pytest.param(
            "GET", ("HTTP/1.1 304 Not Modified", 'ETag: "v1"', "Content-Length: 4096"), 304, ("etag", '"v1"'), id="304"
        ),
        # RFC 9112 section 6.3 rule 1: an answer to HEAD never has content, whatever its fields say
        pytest.param(
            "HEAD",
            ("HTTP/1.1 200 OK", "Content-Type: application/json", "Content-Length: 4096"),
            200,
            ("Content-Length", "4096"),
            id="head",
        ),
        pytest.param("GET", ("HTTP/1.1 200 OK", "Content-Length: 0"), 200, ("content-length", "0"), id="zero-length"),
    ],
)
def test_an_answer_without_content_ends_at_its_head_while_the_server_keeps_the_connection_open(
    wire: Start, method: str, head: tuple[str, ...], status: int, field: tuple[str, str]
) -> None:
    def script(request: Received, connection: Wire) -> bool:
        if request.path.endswith("/probe"):
            connection.send(lines(*head))
        else:
            connection.send(sized("HTTP/1.1 200 OK", page(groups(1, "after"))))
        return True  # the connection stays open

    server, factory = wire(script)
    response = guarded(factory, "/subscriptions/probe", method=method)
    assert (response.status_code, response.content) == (status, b"")
    assert response.headers[field[0]] == field[1]

    assert listed(factory, "/subscriptions/s/resourceGroups") == groups(1, "after")
    assert [(r.method, r.connection) for r in server.received] == [(method, 1), ("GET", 1)]
    assert factory.boundary.retries == 0


# -- 7. and 8. broken answers -------------------------------------------------------------------


def assert_broken(server_received: Sequence[Received], factory: ClientFactory, outcome: object) -> None:
    """The call failed as a broken answer, after the retry policy tried again on each."""
    assert isinstance(outcome, ServiceResponseError), repr(outcome)
    assert factory.boundary.retries >= 1, "a GET with a broken answer is retried"
    assert len(server_received) == 1 + factory.boundary.retries
    assert all(received.target == TARGET for received in server_received)


@pytest.mark.parametrize(
    "answer",
    [
        b"HTTP/1.1 2OO OK\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n" + b'{"value": []}',
        b"FOO 200 OK\r\nContent-Type: application/json\r\nContent-Length: 13\r\n\r\n" + b'{"value": []}',
        b"",
    ],
    ids=["letters-in-status-code", "not-http", "empty-answer"],
)
def test_a_malformed_status_line_is_a_broken_answer(wire: Start, answer: bytes) -> None:
    def script(request: Received, connection: Wire) -> bool:
        if answer:
            connection.send(answer)
        return False  # then the connection ends (at once, for the empty answer)

    server, factory = wire(script)
    outcome = within(HANG_GUARD, lambda: get(factory))
    assert_broken(server.received, factory, outcome)
    assert server.connections == len(server.received)


def test_a_malformed_status_line_fails_a_listing(wire: Start) -> None:
    def script(request: Received, connection: Wire) -> bool:
        connection.send(b"HTTP/1.1 2OO OK\r\nContent-Length: 13\r\n\r\n" + b'{"value": []}')
        return False

    server, factory = wire(script)
    outcome = within(HANG_GUARD, lambda: listing(factory, "/subscriptions/s/resourceGroups"))
    assert isinstance(outcome, ServiceResponseError), repr(outcome)
    assert len(server.received) == 1 + factory.boundary.retries
    assert factory.boundary.retries >= 1


def test_a_head_of_more_than_100_field_lines_is_a_broken_answer(wire: Start) -> None:
    body = page([])
    fields = [f"X-Fill-{n}: {n}" for n in range(99)]  # with Content-Type and Content-Length: 101 lines
    assert len(fields) + 2 == 101

    def script(request: Received, connection: Wire) -> bool:
        connection.send(sized("HTTP/1.1 200 OK", body, *fields))
        return False

    server, factory = wire(script)
    outcome = within(HANG_GUARD, lambda: get(factory))
    assert_broken(server.received, factory, outcome)


def test_a_head_of_exactly_100_field_lines_is_read(wire: Start) -> None:
    body = page(groups(1))
    fields = [f"X-Fill-{n}: {n}" for n in range(98)]  # with Content-Type and Content-Length: 100 lines

    def script(request: Received, connection: Wire) -> bool:
        connection.send(sized("HTTP/1.1 200 OK", body, *fields))
        return True

    server, factory = wire(script)
    response = guarded(factory)
    assert response.status_code == 200
    assert server.targets == [TARGET]
    assert response.headers["x-fill-0"] == "0" and response.headers["X-FILL-97"] == "97"
    assert response.json() == {"value": groups(1)}
    assert factory.boundary.retries == 0


@pytest.mark.parametrize("length", [65537 + 100, 200_000])
def test_a_field_line_longer_than_65536_bytes_is_a_broken_answer(wire: Start, length: int) -> None:
    body = page([])
    name = "X-Huge: "
    long_line = name + "a" * (length - len(name))
    assert len(long_line) == length

    def script(request: Received, connection: Wire) -> bool:
        connection.send(sized("HTTP/1.1 200 OK", body, long_line))
        return False

    server, factory = wire(script)
    outcome = within(HANG_GUARD, lambda: get(factory))
    assert_broken(server.received, factory, outcome)


# -- 9. non-ASCII octets in a value -------------------------------------------------------------


def test_non_ascii_octets_in_a_field_value_read_as_iso_8859_1(wire: Start) -> None:
    body = page([])

    def script(request: Received, connection: Wire) -> bool:
        connection.send(sized("HTTP/1.1 200 OK", body, b"X-Name: caf\xe9", b"X-Octets: \xff\xe9t\xe9 \x80\xbf"))
        return True

    server, factory = wire(script)
    response = guarded(factory)
    assert response.status_code == 200
    assert response.headers["X-Name"] == "caf\u00e9"
    assert response.headers["x-octets"] == "\u00ff\u00e9t\u00e9 \u0080\u00bf"
    assert response.json() == {"value": []}
    assert len(server.received) == 1


@pytest.mark.parametrize(
    ("raw", "value"),
    [
        (b"\xa0padded\xa0", "\u00a0padded\u00a0"),
        (b" \t\x85 nel \x85\t ", "\u0085 nel \u0085"),
        (b"\xa0", "\u00a0"),
    ],
    ids=["no-break-space", "next-line", "only-no-break-space"],
)
def test_only_sp_and_htab_are_trimmed_not_obs_text_at_the_ends_of_a_value(wire: Start, raw: bytes, value: str) -> None:
    """RFC 9110 §5.5: OWS is SP / HTAB; 0x80-0xFF octets are obs-text, part of the value even at
    its ends. Read as ISO-8859-1, 0xA0 and 0x85 are characters that Python counts as whitespace."""

    def script(request: Received, connection: Wire) -> bool:
        connection.send(sized("HTTP/1.1 200 OK", page([]), b"X-Edge: " + raw))
        return True

    server, factory = wire(script)
    response = guarded(factory)
    assert response.status_code == 200
    assert response.headers["X-Edge"] == value
    assert server.targets == [TARGET]
