"""JSON input files: strict loading with one-line errors, and source positions on demand.

Python's fast C decoder gives no positions, and a hand-written positional parser would be
several times slower on a 20 MB plan. So we parse once with `json.loads` and compute the
offset of a JSON pointer only when a report needs it: walking the text container by
container, skipping sibling values with the C decoder's `raw_decode`. Each container's child
offsets are cached, so locating every finding of a large plan costs about one extra parse.
"""

from __future__ import annotations

import bisect
import codecs
import json
import math
import re
import sys
from dataclasses import dataclass, field
from json.decoder import scanstring  # type: ignore[attr-defined]  # typeshed omits it
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from scanner.errors import InputError

T = TypeVar("T")

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
    tokens = pointer.split("/")[1:]
    return [t.replace("~1", "/").replace("~0", "~") for t in tokens] if "~" in pointer else tokens


@dataclass(eq=False)
class Document:
    """One parsed JSON file and the text it came from."""

    path: str
    text: str
    data: dict[str, Any]
    _line_starts: list[int] | None = field(default=None, repr=False)
    _members: dict[int, _Members] = field(default_factory=dict, repr=False)
    # Each pointer walked, by pointer: a resource's findings all start from its pointer.
    _walked: dict[str, int | None] = field(default_factory=dict, repr=False)
    _positions: dict[tuple[str, tuple[str, ...]], Position] = field(default_factory=dict, repr=False)

    def forget_data(self) -> None:
        """Drop the parsed values once the resources are read from them: reports locate
        findings in the text, and a plan's parsed values are the largest part of the heap."""
        self.data = {}

    def position(self, pointer: str, tail: tuple[str, ...] = ()) -> Position:
        """Where the value at ``pointer`` starts; then follow ``tail`` as far as it exists.

        ``tail`` segments match object keys case-insensitively (ARM property names are
        case-insensitive), so an ARM property path can be located in a template that spells
        ``vmsize`` where the model says ``vmSize``. A missing segment stops the walk at the
        deepest value that does exist, which is still the right place to point a reader at.
        """
        query = (pointer, tail)  # asked again for each finding on the same property
        position = self._positions.get(query)
        if position is None:
            position = self._positions[query] = self._locate(pointer, tail)
        return position

    def _locate(self, pointer: str, tail: tuple[str, ...]) -> Position:
        """`position` for a query not asked before."""
        if pointer in self._walked:
            offset = self._walked[pointer]
        else:
            offset = self._walked[pointer] = self._walk(_split_pointer(pointer))
        if offset is None:
            return Position(*self.line_column(0), "")
        found = pointer
        if tail:
            tail_offset, tail_tokens = self._walk_from(offset, tail)
            if tail_tokens:
                offset, found = tail_offset, pointer_join(found, *tail_tokens)
        line, column = self.line_column(offset)
        return Position(line, column, found)

    def line_column(self, offset: int) -> tuple[int, int]:
        starts = self._line_starts
        if starts is None:  # str.find, not a regex: a plan is one 12 MB line
            starts = self._line_starts = [0]
            find, index = self.text.find, self.text.find("\n")
            while index >= 0:
                starts.append(index + 1)
                index = find("\n", index + 1)
        index = bisect.bisect_right(starts, offset) - 1
        return index + 1, offset - starts[index] + 1

    def _walk(self, tokens: list[str]) -> int | None:
        """Where the value at the pointer ``tokens`` starts; None when a member on the way is
        missing."""
        offset = _blanks(self.text, 0).end()  # type: ignore[union-attr]  # matches, if only ""
        for token in tokens:
            members = self._container(offset)
            found = members.find(self.text, token) if members is not None else None
            if found is None:
                return None
            offset = found
        return offset

    def _walk_from(self, offset: int, tail: tuple[str, ...]) -> tuple[int, list[str]]:
        resolved: list[str] = []
        for token in tail:
            members = self._container(offset)
            if members is None:
                break
            found = members.find(self.text, token)
            key = token
            if found is None:  # ARM names are case-insensitive: the template may spell it otherwise
                key = next((k for k in members.offsets if k.lower() == token.lower()), "")
                found = members.offsets.get(key)
            if found is None:
                break
            offset = found
            resolved.append(key)
        return offset, resolved

    def _container(self, offset: int) -> _Members | None:
        """The members of the object or array starting at ``offset``, read lazily; None for a
        scalar."""
        members = self._members.get(offset)
        if members is None and self.text.startswith(("{", "["), offset):
            members = self._members[offset] = _Members(self.text, offset)
        return members


class _Members:
    """The members of one object or array in a document's text, read only as far as a lookup
    needs: finding ``change`` in a plan's resource entry skips the few short members before it
    and never reads the large value itself. A key written twice is found where it is first
    written (the parsed data holds the last value).

    Locating a large plan's findings reads about a hundred thousand members, so each is read
    with one regex match: the comma and blanks before it, its key and colon, and its value
    when that is a scalar. Only a nested object or array is left to the C decoder, and a key
    with escapes to ``scanstring``."""

    __slots__ = ("_index", "_is_object", "_pending", "_pos", "offsets")

    def __init__(self, text: str, offset: int) -> None:
        self.offsets: dict[str, int] = {}
        self._is_object = text[offset] == "{"
        self._pos = offset + 1  # where the next member's match starts; -1 once all are read
        self._pending = False  # an object or array starts at _pos, found but not yet skipped
        self._index = 0

    @classmethod
    def already_read(cls, text: str, offset: int, offsets: dict[str, int]) -> _Members:
        """The object at ``offset`` whose members were all read while it was parsed."""
        members = cls(text, offset)
        members.offsets, members._pos = offsets, -1
        return members

    def find(self, text: str, key: str) -> int | None:
        """The offset of member ``key``'s value (an array's members are ``"0"``, ``"1"``...),
        reading on until it is found; None when the container has no such member.

        One loop per kind of container, with the state in locals: this is the hot loop."""
        offsets = self.offsets
        found = offsets.get(key)
        if found is not None or self._pos < 0:
            return found
        pos = self._pos
        if self._pending:
            pos = _raw_decode(text, pos)[1]
        # A member's value span is empty where an object or array starts (and, in an array,
        # at the closing bracket; an object's closing brace is where no member matches).
        if self._is_object:
            while (match := _object_member(text, pos)) is not None:
                name = match[1]
                if "\\" in name:
                    name = scanstring(text, match.start(1))[0]
                value, pos = match.span(2)
                if name not in offsets:
                    offsets[name] = value
                    if name == key:
                        self._pos, self._pending = pos, value == pos
                        return value
                if value == pos:
                    pos = _raw_decode(text, pos)[1]
        else:
            index = self._index
            while True:
                value, pos = _array_member(text, pos).span(1)  # type: ignore[union-attr]  # always matches
                if value == pos and text[pos] == "]":
                    break
                name = str(index)
                index += 1
                offsets[name] = value
                if name == key:
                    self._pos, self._pending, self._index = pos, value == pos, index
                    return value
                if value == pos:
                    pos = _raw_decode(text, pos)[1]
        self._pos = -1
        return None


# The patterns read only text the JSON decoder accepted, so they can be lenient where that
# is faster: any run of blanks and commas separates members, and a scalar that is not a
# string is any bare token (a number, true, false or null). A string is first tried as one
# whose closing quote has no backslash before it, a single scan, then with its escapes.
_BLANK = r"[ \t\n\r]*+"
_MEMBER = r'[ \t\n\r,]*+("[^"]*+(?<!\\)"|"[^"\\]*+(?:\\.[^"\\]*+)*+"|[^"{\[\] \t\n\r,}][^\] \t\n\r,}]*+|)'
_array_member = re.compile(_MEMBER).match
_object_member = re.compile(rf'[ \t\n\r,]*+"([^"\\]*+(?:\\.[^"\\]*+)*+)"{_BLANK}:{_MEMBER}').match
_blanks = re.compile(_BLANK).match
_raw_decode = json.JSONDecoder().raw_decode


_JSON_TYPES: dict[type, str] = {dict: "an object", list: "an array", str: "a string", bool: "true or false"}


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true or false"
    if isinstance(value, int | float):
        return "a number"
    return _JSON_TYPES.get(type(value), type(value).__name__)


# Where a value is: a JSON pointer, or a pointer and the tokens below it, joined only for an
# error message, so that checking a valid plan builds no pointer strings.
Where = str | tuple[str | int, ...]


def deeper(where: Where, *tokens: str | int) -> Where:
    """``where`` followed by ``tokens``, still unjoined."""
    return (where, *tokens) if isinstance(where, str) else (*where, *tokens)


def expect(doc: Document, value: Any, kind: type[T], where: Where, context: str = "") -> T:
    """``value`` if it has the JSON type the format promises at ``where``, else the one-line
    error naming the file, the JSON pointer and what was expected (after ``context``, if given).

    Readers check each structural value where they read it, so no code after the check sees a
    number where the format promises an array (hostile input from a pull request included).
    """
    if type(value) is kind or (isinstance(value, kind) and (kind is bool or not isinstance(value, bool))):
        return value
    pointer = where if isinstance(where, str) else pointer_join(str(where[0]), *where[1:])
    expected = _JSON_TYPES.get(kind, "a number")
    raise InputError(f"{doc.path}: {context}{pointer or '/'}: expected {expected}, found {_json_type(value)}")


def member(doc: Document, obj: dict[str, Any], key: str, kind: type[T], where: Where, context: str = "") -> T | None:
    """The optional member ``key`` of the object at ``where``, checked by `expect`; None when
    absent or null (Terraform omits empty fields)."""
    value = obj.get(key)
    if value is None or type(value) is kind:  # the common case, without building a pointer
        return value
    return expect(doc, value, kind, deeper(where, key), context)


def expect_items(doc: Document, items: list[Any], kind: type[T], where: Where) -> list[T]:
    """``items`` (the array at ``where``) if every item is of ``kind``, else the error for the
    first that is not."""
    for i, item in enumerate(items):
        if type(item) is not kind:
            expect(doc, item, kind, deeper(where, i))
    return items


# The largest file azai reads: parsed JSON takes about ten times its size in memory, so this
# keeps one input under about 3 GB. A 10,000-resource plan is 12 MB; ARM's own limit for a
# template is 4 MB. Checked before reading, so a huge file costs nothing.
MAX_INPUT_BYTES = 256 * 1024 * 1024


STDIN = Path("-")  # the input path that means standard input, as in most Unix tools
STDIN_DISPLAY = "<stdin>"

# Byte-order marks of the wide encodings azai reads: Windows PowerShell 5's `>` writes UTF-16 LE.
_WIDE_BOMS = ((codecs.BOM_UTF16_LE, "utf-16"), (codecs.BOM_UTF16_BE, "utf-16"))


def _read_bytes(path: Path, display: str) -> bytes:
    """The bytes of a file, or of stdin for ``-`` (read once, to its end), within the size cap."""
    if path == STDIN:
        raw = sys.stdin.buffer.read(MAX_INPUT_BYTES + 1)
        size = len(raw)
    else:
        try:
            size = path.stat().st_size
            raw = b"" if size > MAX_INPUT_BYTES else path.read_bytes()
        except FileNotFoundError:
            raise InputError(f"{display}: no such file") from None
        except IsADirectoryError:
            raise InputError(f"{display}: is a directory") from None
        except OSError as exc:
            raise InputError(f"{display}: cannot read ({exc.strerror})") from None
    if size > MAX_INPUT_BYTES:
        more = "more than" if path == STDIN else f"{size:,} bytes, more than"
        raise InputError(
            f"{display}: {more} the {MAX_INPUT_BYTES:,} (256 MiB) azai reads from one "
            "file; split the plan (one per root module) or scan its parts"
        )
    return raw


class NotJson(InputError):
    """A file whose text is not a JSON object (empty, binary, not UTF-8, a syntax error, or
    comments outside an ARM document): so not a plan, template or what-if result either, and
    ``--skip-unknown`` skips it as it skips package.json."""


def read_text(path: Path, display: str) -> str:
    """Read a file, or stdin for ``-``, as text, refusing missing, empty, binary and oversized
    input in one line. UTF-8 with or without a byte-order mark, or UTF-16 with one: what
    Windows PowerShell's ``terraform show -json tfplan > plan.json`` writes."""
    raw = _read_bytes(path, display)
    wide = next((codec for bom, codec in _WIDE_BOMS if raw.startswith(bom)), None)
    if wide is not None:
        try:
            text = raw.decode(wide)
        except UnicodeDecodeError as exc:
            raise InputError(f"{display}: not UTF-16 text after its byte-order mark (byte {exc.start})") from None
        if not text.strip():
            raise InputError(f"{display}: empty file")
        return text
    if not raw.strip():
        raise NotJson(f"{display}: empty file")
    if b"\x00" in raw[:_BINARY_SNIFF]:
        raise NotJson(f"{display}: binary file, not JSON")
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line_start = raw.rfind(b"\n", 0, exc.start) + 1
        line = raw.count(b"\n", 0, exc.start) + 1
        column = len(raw[line_start : exc.start].decode("utf-8-sig")) + 1
        raise NotJson(f"{display}: not UTF-8 text, so not JSON (line {line} column {column})") from None


def load_document(path: Path, display: str | None = None) -> Document:
    """Parse a JSON file whose top level must be an object.

    Strict JSON, except that an ARM template or parameters file may carry ``//`` and ``/* */``
    comments, as ARM itself, the Azure CLI and PowerShell accept them
    (https://learn.microsoft.com/azure/azure-resource-manager/templates/syntax#comments).
    Comments are tried only when strict parsing fails, so plans pay nothing for them, and are
    kept only when the document then proves to be ARM's: a plan or what-if with a comment is
    refused with the strict parser's own error.
    """
    shown = display or str(path)
    return parse_document(read_text(path, shown), shown)


def parse_document(text: str, shown: str) -> Document:
    """A JSON document from text already read (a compiled template handed over in memory)."""
    try:
        data, top = _parse(text, shown)
    except json.JSONDecodeError as strict:
        data, top, text = _with_comments(text, shown, strict)
    if not isinstance(data, dict):
        kind = "an array" if isinstance(data, list) else f"a {type(data).__name__}"
        raise NotJson(f"{shown}: expected a JSON object at the top level, found {kind}")
    document = Document(path=shown, text=text, data=data)
    if top is not None:
        document._members[top.start] = _Members.already_read(text, top.start, top.offsets)
    return document


def is_arm_json(data: Any) -> bool:
    """Whether a parsed document is one ARM reads: a template (by ``$schema`` or its shape) or
    a parameters file, as opposed to a Terraform plan or a what-if result."""
    if not isinstance(data, dict):
        return False
    schema = data.get("$schema")
    lowered = schema.lower() if isinstance(schema, str) else ""
    if "deploymenttemplate" in lowered or "deploymentparameters" in lowered:
        return True
    return "resources" in data and ("contentVersion" in data or "parameters" in data)


class _NotJson(ValueError):
    """A token Python's decoder accepts that JSON does not (RFC 8259 §6 has no NaN or infinity)."""


def _reject_constant(token: str) -> Any:
    raise _NotJson(f"{token} is not a JSON number")


def _finite_float(token: str) -> float:
    value = float(token)
    if math.isinf(value):
        raise _NotJson("number too large to represent")
    return value


# The decoder `_parse` reads with: the same settings as its ``json.loads``.
_decode_value = json.JSONDecoder(parse_constant=_reject_constant, parse_float=_finite_float).raw_decode


class _TopLevel(NamedTuple):
    """Where a document's top-level object starts, and where each of its members' values does."""

    start: int
    offsets: dict[str, int]


def _parse(text: str, shown: str) -> tuple[Any, _TopLevel | None]:
    """``json.loads`` that refuses what is not JSON, each with its line and column; and, for an
    object, where its members are (see `_read_top_level`)."""
    read = _read_top_level(text)
    if read is not None:
        data, top = read
    else:
        top = None
        try:
            data = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)
        except json.JSONDecodeError:
            raise
        except RecursionError:
            raise InputError(f"{shown}: JSON nesting is too deep to be a plan or template") from None
        except ValueError as exc:  # _NotJson, or an integer with more digits than int() converts
            reason = str(exc) if isinstance(exc, _NotJson) else f"unreadable JSON value: {exc}"
            raise _unreadable_value(shown, text, reason) from None
    if _SURROGATE_ESCAPE.search(text):
        _refuse_lone_surrogates(text, shown)
    return data, top


def _read_top_level(text: str) -> tuple[dict[str, Any], _TopLevel] | None:
    """The top-level object, decoded one member at a time, with where each member's value starts.

    The C decoder still decodes every value, so this is no slower than ``json.loads``, and a
    report that locates its findings needs not decode the members before the one it wants
    again: a plan's ``planned_values``, a third of the file, stood before ``resource_changes``.
    None for anything but an object this reads exactly as ``json.loads`` would (a key written
    twice keeps its last value in its first place); ``json.loads`` then reads it, and gives the
    error if there is one.
    """
    try:
        start = _blanks(text, 0).end()  # type: ignore[union-attr]  # matches, if only ""
        if not text.startswith("{", start):
            return None
        data: dict[str, Any] = {}
        offsets: dict[str, int] = {}
        pos = _blanks(text, start + 1).end()  # type: ignore[union-attr]
        more = not text.startswith("}", pos)
        while more:
            if not text.startswith('"', pos):
                return None
            key, pos = scanstring(text, pos + 1)
            pos = _blanks(text, pos).end()  # type: ignore[union-attr]
            if not text.startswith(":", pos):
                return None
            pos = _blanks(text, pos + 1).end()  # type: ignore[union-attr]
            offsets.setdefault(key, pos)
            data[key], pos = _decode_value(text, pos)
            pos = _blanks(text, pos).end()  # type: ignore[union-attr]
            more = text.startswith(",", pos)
            if more:
                pos = _blanks(text, pos + 1).end()  # type: ignore[union-attr]
        if not text.startswith("}", pos) or _blanks(text, pos + 1).end() != len(text):  # type: ignore[union-attr]
            return None
    except (ValueError, RecursionError):  # json.loads raises it again, and says where
        return None
    return data, _TopLevel(start, offsets)


def _with_comments(text: str, shown: str, strict: json.JSONDecodeError) -> tuple[Any, _TopLevel | None, str]:
    """An ARM document read with its comments blanked, and the blanked text (same length and
    line breaks, so every position stays where it was). Anything else is refused with the
    strict error, or with the later error an ARM document's comments were hiding."""
    error = strict
    blanked, unclosed = _blank_comments(text) if "/" in text else (text, None)
    if unclosed is not None:
        line, column = _line_column(text, unclosed)
        raise NotJson(f"{shown}: invalid JSON at line {line} column {column}: a /* comment is never closed")
    if blanked != text:
        try:
            data, top = _parse(blanked, shown)
        except json.JSONDecodeError as exc:
            error = exc if exc.pos > strict.pos else strict
        else:
            if is_arm_json(data):
                return data, top, blanked
    raise NotJson(f"{shown}: invalid JSON at line {error.lineno} column {error.colno}: {error.msg}") from None


# Each token pattern below matches a whole JSON string first, so nothing inside a string is
# taken for a token; a string left open runs to the end of the text instead of failing. The
# alternatives start with different characters and a number is tried only from its first
# character, so each pattern scans the text once, whatever the input.
# Only the surrogate sniff runs on every file; the others serve errors and comments, so they
# are left as text for the re module to compile (and cache) the first time one is needed.
_STRING = r'(?s:"(?:[^"\\]|\\.)*+"?)'
_VALUE = _STRING + r"|(?<![-+.\w])(-?Infinity|NaN|-?[0-9]++(?:\.[0-9]++)?(?:[eE][-+]?[0-9]++)?)"
_COMMENT = _STRING + r"|(?s:(//[^\n\r]*+|/\*(?:[^*]|\*(?!/))*+(?:\*/)?))"
_SPACES = r"[^\n\r]"
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_ESCAPE = r"(?s:\\(?:u[dD]([89abAB])[0-9a-fA-F]{2}(\\u[dD][c-fC-F][0-9a-fA-F]{2})?|u[dD][c-fC-F][0-9a-fA-F]{2}()|.))"


def _unreadable_value(shown: str, text: str, reason: str) -> InputError:
    """The error for the first value outside strings that Python cannot hold as JSON means it."""
    for match in re.finditer(_VALUE, text):
        token = match.group(1)
        if token is not None and _unreadable(token):
            line, column = _line_column(text, match.start(1))
            return InputError(f"{shown}: invalid JSON at line {line} column {column}: {reason}")
    return InputError(f"{shown}: invalid JSON: {reason}")


def _unreadable(token: str) -> bool:
    """NaN or an infinity, a number that overflows to one, or an integer too long for int()."""
    if token[-1] in "yN":
        return True
    if any(c in token for c in ".eE"):
        return math.isinf(float(token))
    limit = sys.get_int_max_str_digits()
    return 0 < limit < len(token.lstrip("-"))


def _refuse_lone_surrogates(text: str, shown: str) -> None:
    """Refuse a ``\\ud800``-style escape not paired high-then-low: it is no Unicode character,
    so no text can hold it (RFC 8259 §8.2), and a report writing it out would fail."""
    for match in re.finditer(_ESCAPE, text):
        high, low, lone_low = match.groups()
        if lone_low is not None or (high is not None and low is None):
            line, column = _line_column(text, match.start())
            reason = f"{match.group()} is a lone surrogate, not a character"
            raise InputError(f"{shown}: invalid JSON at line {line} column {column}: {reason}")


def _blank_comments(text: str) -> tuple[str, int | None]:
    """``text`` with each comment outside strings turned into spaces, line breaks kept, and
    the offset of a block comment that is never closed (None when all are)."""
    unclosed: list[int] = []

    def blank(match: re.Match[str]) -> str:
        comment = match.group(1)
        if comment is None:
            return match.group()
        if comment.startswith("/*") and (len(comment) < 4 or not comment.endswith("*/")):
            unclosed.append(match.start(1))
        return re.sub(_SPACES, " ", comment)

    return re.sub(_COMMENT, blank, text), (unclosed[0] if unclosed else None)


def _line_column(text: str, offset: int) -> tuple[int, int]:
    line_start = text.rfind("\n", 0, offset) + 1
    return text.count("\n", 0, offset) + 1, offset - line_start + 1
