"""JSON input files: strict loading with one-line errors, and source positions on demand.

Python's fast C decoder gives no positions, and a hand-written positional parser would be
several times slower on a 20 MB plan. So we parse once with `json.loads` and compute the
offset of a JSON pointer only when a report needs it: walking the text container by
container, skipping sibling values with the C decoder's `raw_decode`. Each container's child
offsets are cached, so locating every finding of a large plan costs about one extra parse.
"""

from __future__ import annotations

import bisect
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scanner.errors import InputError

_DECODER = json.JSONDecoder()
_WHITESPACE = re.compile(r"[ \t\n\r]*")
_BINARY_SNIFF = 8192


@dataclass(frozen=True, slots=True)
class Position:
    """1-based line and column (Unicode code points) of a JSON value, with its pointer."""

    line: int
    column: int
    pointer: str


def escape_pointer_token(token: str) -> str:
    """RFC 6901 escaping of one JSON-pointer segment."""
    return token.replace("~", "~0").replace("/", "~1")


def pointer_join(base: str, *tokens: str | int) -> str:
    """Append segments to a JSON pointer."""
    return base + "".join("/" + escape_pointer_token(str(t)) for t in tokens)


def _split_pointer(pointer: str) -> list[str]:
    if not pointer:
        return []
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]


@dataclass(eq=False)
class Document:
    """One parsed JSON file and the text it came from."""

    path: str
    text: str
    data: dict[str, Any]
    _line_starts: list[int] | None = field(default=None, repr=False)
    _children: dict[int, dict[str, int]] = field(default_factory=dict, repr=False)

    def position(self, pointer: str, tail: tuple[str, ...] = ()) -> Position:
        """Where the value at ``pointer`` starts; then follow ``tail`` as far as it exists.

        ``tail`` segments match object keys case-insensitively (ARM property names are
        case-insensitive), so an ARM property path can be located in a template that spells
        ``vmsize`` where the model says ``vmSize``. A missing segment stops the walk at the
        deepest value that does exist, which is still the right place to point a reader at.
        """
        offset, resolved = self._walk(_split_pointer(pointer), exact=True)
        if tail and offset is not None:
            tail_offset, tail_tokens = self._walk_from(offset, list(tail))
            if tail_tokens:
                offset, resolved = tail_offset, resolved + tail_tokens
        if offset is None:
            offset, resolved = 0, []
        line, column = self.line_column(offset)
        return Position(line, column, pointer_join("", *resolved))

    def line_column(self, offset: int) -> tuple[int, int]:
        if self._line_starts is None:
            self._line_starts = [0] + [m.end() for m in re.finditer("\n", self.text)]
        index = bisect.bisect_right(self._line_starts, offset) - 1
        return index + 1, offset - self._line_starts[index] + 1

    def _walk(self, tokens: list[str], exact: bool) -> tuple[int | None, list[str]]:
        start = _WHITESPACE.match(self.text, 0)
        offset = start.end() if start else 0
        resolved: list[str] = []
        for token in tokens:
            children = self._container_children(offset)
            if children is None or token not in children:
                return (None, resolved) if exact else (offset, resolved)
            offset = children[token]
            resolved.append(token)
        return offset, resolved

    def _walk_from(self, offset: int, tail: list[str]) -> tuple[int, list[str]]:
        resolved: list[str] = []
        for token in tail:
            children = self._container_children(offset)
            if not children:
                break
            key = token if token in children else next((k for k in children if k.lower() == token.lower()), None)
            if key is None:
                break
            offset = children[key]
            resolved.append(key)
        return offset, resolved

    def _container_children(self, offset: int) -> dict[str, int] | None:
        """Offsets of the members of the object or array starting at ``offset``."""
        cached = self._children.get(offset)
        if cached is not None:
            return cached
        text = self.text
        opener = text[offset : offset + 1]
        if opener not in ("{", "["):
            return None
        children: dict[str, int] = {}
        pos = _WHITESPACE.match(text, offset + 1).end()  # type: ignore[union-attr]
        index = 0
        closer = "}" if opener == "{" else "]"
        while pos < len(text) and text[pos] != closer:
            if opener == "{":
                key, pos = _DECODER.raw_decode(text, pos)
                pos = _WHITESPACE.match(text, pos).end()  # type: ignore[union-attr]
                pos = _WHITESPACE.match(text, pos + 1).end()  # type: ignore[union-attr]  # past ':'
                name = str(key)
            else:
                name = str(index)
                index += 1
            children[name] = pos
            _, pos = _DECODER.raw_decode(text, pos)
            pos = _WHITESPACE.match(text, pos).end()  # type: ignore[union-attr]
            if pos < len(text) and text[pos] == ",":
                pos = _WHITESPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
        self._children[offset] = children
        return children


def read_text(path: Path, display: str) -> str:
    """Read a file as UTF-8 text, refusing missing, empty and binary files in one line."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{display}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{display}: is a directory") from None
    except OSError as exc:
        raise InputError(f"{display}: cannot read ({exc.strerror})") from None
    if not raw.strip():
        raise InputError(f"{display}: empty file")
    if b"\x00" in raw[:_BINARY_SNIFF]:
        raise InputError(f"{display}: binary file, not JSON")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise InputError(f"{display}: not UTF-8 text, so not JSON") from None


def load_document(path: Path, display: str | None = None) -> Document:
    """Parse a JSON file whose top level must be an object."""
    shown = display or str(path)
    text = read_text(path, shown)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(f"{shown}: invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}") from None
    except RecursionError:
        raise InputError(f"{shown}: JSON nesting is too deep to be a plan or template") from None
    except ValueError as exc:  # e.g. an integer with more digits than Python allows
        raise InputError(f"{shown}: unreadable JSON value: {exc}") from None
    if not isinstance(data, dict):
        kind = "an array" if isinstance(data, list) else f"a {type(data).__name__}"
        raise InputError(f"{shown}: expected a JSON object at the top level, found {kind}")
    return Document(path=shown, text=text, data=data)
