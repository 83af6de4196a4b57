"""The pure ARM template functions, over evaluated arguments.

Every function here is deterministic. Functions that need the deployment (``reference``,
``list*``, ``newGuid``, ``utcNow``, ``environment``) are not here: the evaluator answers them
with `Unknown`. Any `Unknown` argument makes the result Unknown, except where a function can
still decide: ``equals`` of two values known to be the same symbol, and ``equals`` or ``empty``
of a string whose known characters decide (`SymbolicText`).
"""

from __future__ import annotations

import base64
import hashlib
import itertools
import json
import operator
import re
import urllib.parse
from collections.abc import Callable
from typing import Any

from scanner.model.unknown import Unknown, UnknownValueError
from scanner.sources.arm.limits import (
    MAX_ARRAY_LENGTH,
    RefusedTemplate,
    finite_json,
    int64,
    serialized_length,
    spend_calls,
    spend_size,
)
from scanner.sources.arm.wellformed import lone_surrogate

Function = Callable[..., Any]


class TemplateFunctionError(ValueError):
    """A function was called with arguments ARM would reject."""


class Partial(dict[str, Any]):
    """Some members of an object whose other members exist only at deployment (a resource's
    ``reference(..., 'full')``, a deployment's state): a member it lacks is unknown, not absent.

    With a ``symbol`` (see `fixed_at_deployment`), the object is one value for the whole
    deployment, such as ``deployment()``: a member it lacks is unknown but equal to itself
    (``{deployment()}.properties.mode``) wherever it is read."""

    reason = "known only at deployment"
    symbol: str | None = None

    def lacking(self, name: str) -> Unknown:
        symbol = f"{self.symbol}.{name.replace('/', '%2F')}" if self.symbol is not None else None
        return Unknown(f"property '{name}' is {self.reason}", symbol=symbol)


def fixed_at_deployment(symbol: str, **members: Any) -> Partial:
    """An object ARM fixes once per deployment, of which a scan knows ``members``; the members
    it does not know are symbolic, named from ``symbol``."""
    value = Partial(members)
    value.symbol = symbol
    return value


class SymbolicText(Unknown):
    """A string built by ``format()`` or ``concat()`` from known text and symbolic unknowns
    (``srch-{suffix}``): unknown, but its known characters still decide some questions. It is
    never empty when a known character is in it, and it cannot equal a known string its known
    characters do not fit (``'srch-{suffix}'`` is not ``''``), whatever the unknowns turn out to
    be. ``parts`` are its pieces in order, each known text or an unknown's symbol."""

    __slots__ = ("parts",)

    def __init__(self, reason: str, parts: tuple[tuple[str, bool], ...]) -> None:
        super().__init__(reason, symbol="".join(text for text, _ in parts))
        self.parts = parts  # (text, is_unknown)

    @property
    def has_known_text(self) -> bool:
        return any(text and not unknown for text, unknown in self.parts)

    def could_be(self, text: str) -> bool:
        """Whether some values of the unknown pieces make this string ``text``. Each unknown
        piece may stand for any text, so this is matching a pattern of literals and ``*``:
        anchored at both ends, with the literals between found leftmost (linear, not a
        backtracking regular expression a hostile template could make slow)."""
        literals = [""]
        for piece, unknown in self.parts:
            if unknown:
                literals.append("")
            else:
                literals[-1] += piece
        if len(literals) == 1:
            return text == literals[0]
        first, *middle, last = literals
        start, end = len(first), len(text) - len(last)
        if start > end or not text.startswith(first) or not text.endswith(last):
            return False
        for literal in middle:
            found = text.find(literal, start, end)
            if found < 0:
                return False
            start = found + len(literal)
        return True


def _string(value: Any) -> str:
    if isinstance(value, bool):
        return "True" if value else "False"
    if isinstance(value, (dict, list)):
        spend_size(serialized_length(value), "string() of an object or array")
        return json.dumps(value, separators=(",", ":"))
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _concat(*args: Any) -> Any:
    if args and all(isinstance(a, list) for a in args):
        spend_size(sum(len(a) for a in args), "concat() of arrays", MAX_ARRAY_LENGTH)
        return [item for a in args for item in a]
    parts = [_string(a) for a in args]
    spend_size(sum(len(p) for p in parts), "concat()")
    return "".join(parts)


_FORMAT_ITEM = re.compile(r"\{\{|\}\}|\{(\d+)(?:,[^}:]*)?(?::([^}]*))?\}")


def _format(template: str, *args: Any) -> str:
    def substitute(match: re.Match[str]) -> str:
        token = match.group(0)
        if token == "{{":
            return "{"
        if token == "}}":
            return "}"
        value = args[int(match.group(1))]
        spec = match.group(2) or ""
        if spec[:1] in ("D", "d") and isinstance(value, int):
            digits = spec[1:]
            width = int(digits) if digits.isdigit() and len(digits) <= 10 else 0
            spend_size(width, f"format() item {{0:{_clip(spec)}}}")
            return str(value).zfill(width)
        return _string(value)

    result = _FORMAT_ITEM.sub(substitute, template)
    spend_size(len(result), "format()")
    return result


def _clip(text: str) -> str:
    return text if len(text) <= 20 else text[:17] + "..."


def _whole(value: Any) -> Any:
    """An object whose every member is known; a `Partial` one makes the caller's answer unknown."""
    if isinstance(value, Partial):
        raise UnknownValueError(Unknown(f"an object {Partial.reason} is not fully known"))
    return value


def _length(value: Any) -> int:
    if isinstance(value, (str, list, dict)):
        return len(_whole(value))
    raise TemplateFunctionError("length() needs a string, array or object")


def _empty(value: Any) -> Any:
    if isinstance(value, SymbolicText):
        return False if value.has_known_text else Unknown(value.reason)
    return value is None or (isinstance(value, (str, list, dict)) and len(_whole(value)) == 0)


def _contains(container: Any, item: Any) -> bool:
    if isinstance(container, str):
        return _string(item).lower() in container.lower()
    if isinstance(container, dict):
        if any(k.lower() == _string(item).lower() for k in container):
            return True
        _whole(container)
        return False
    if isinstance(container, list):
        return any(_equals(x, item) is True for x in container)
    raise TemplateFunctionError("contains() needs a string, array or object")


def _equals(a: Any, b: Any) -> Any:
    try:
        return bool(a == b)
    except UnknownValueError as exc:
        return False if _cannot_be(a, b) or _cannot_be(b, a) else exc.value


def _cannot_be(text: Any, other: Any) -> bool:
    """Whether ``text``, a string partly unknown, can never equal the known value ``other``:
    a known string its known characters do not fit, or a value that is not a string at all."""
    if not isinstance(text, SymbolicText) or isinstance(other, Unknown):
        return False
    if isinstance(other, str):
        return not text.could_be(other)
    # Known text makes it a string (``concat()`` of unknowns alone may be of arrays).
    return text.has_known_text


def _union(*args: Any) -> Any:
    unknown = next((a for a in args if isinstance(a, Unknown)), None)
    if unknown is not None:
        return unknown
    if all(isinstance(a, list) for a in args):
        return _union_arrays(args)
    if all(isinstance(a, dict) for a in args):
        return _union_objects(args)
    raise TemplateFunctionError("union() needs all objects or all arrays")


def _union_arrays(arrays: tuple[list[Any], ...]) -> list[Any]:
    """Each item once, in the order first seen; items compare by value, as ARM's do."""
    out: list[Any] = []
    for item in itertools.chain.from_iterable(arrays):
        spend_calls(len(out))  # each comparison is work: union() of two long arrays is quadratic
        if not any(_equals(item, o) is True for o in out):
            out.append(item)
    return out


def _union_objects(objects: tuple[dict[str, Any], ...]) -> dict[str, Any]:
    """Later members win, except that two objects under one key merge, as ARM's union() does."""
    merged: dict[str, Any] = {}
    for current in objects:
        for key, value in current.items():
            nested = isinstance(value, dict) and isinstance(merged.get(key), dict)
            merged[key] = _union_objects((merged[key], value)) if nested else value
    return merged


def _shallow_merge(items: list[Any]) -> Any:
    merged: dict[str, Any] = {}
    for item in items:
        if isinstance(item, Unknown):
            return item
        if isinstance(item, dict):
            merged.update(item)
    return merged


def _intersection(*args: Any) -> Any:
    first = args[0]
    if isinstance(first, dict):
        return {
            k: v
            for k, v in first.items()
            if all(isinstance(a, dict) and k in a and _equals(a[k], v) is True for a in args[1:])
        }
    spend_calls(len(first) * sum(len(a) for a in args[1:]))  # the comparisons below, at most
    return [x for x in first if all(any(_equals(x, y) is True for y in a) for a in args[1:])]


def _json(text: str) -> Any:
    try:
        value = finite_json(text)
    except json.JSONDecodeError as exc:
        raise TemplateFunctionError(f"json() of invalid JSON: {exc.msg}") from None
    except RefusedTemplate as exc:
        raise RefusedTemplate(f"json(): {exc}") from None
    if "\\u" in text and lone_surrogate(value) is not None:
        raise TemplateFunctionError("json() of text with a lone surrogate, which is not Unicode")
    return value


def _int(value: Any) -> int:
    if isinstance(value, bool):
        raise TemplateFunctionError("int() of a bool")
    return int64(value, "int()")


def _bool(value: Any) -> bool:
    if isinstance(value, str):
        if value.lower() in ("true", "false"):
            return value.lower() == "true"
        raise TemplateFunctionError(f"bool() of {value!r}")
    return bool(value)


def _first(value: Any) -> Any:
    if isinstance(value, str):
        return value[:1]
    return value[0] if value else None


def _last(value: Any) -> Any:
    if isinstance(value, str):
        return value[-1:]
    return value[-1] if value else None


def _take(value: Any, count: int) -> Any:
    return value[: max(count, 0)]


def _skip(value: Any, count: int) -> Any:
    return value[max(count, 0) :]


def _unique_string(*args: Any) -> str:
    """A stand-in for ARM's uniqueString: deterministic for the same inputs, 13 characters.

    The real value depends on ids only the deployment knows; names derived from it only need
    to stay consistent within a scan so that references between resources still resolve.
    """
    digest = hashlib.sha256("|".join(_string(a) for a in args).encode("utf-8")).digest()
    return base64.b32encode(digest).decode("ascii").lower()[:13]


def _guid(*args: Any) -> str:
    digest = hashlib.sha256("|".join(_string(a) for a in args).encode("utf-8")).hexdigest()
    return f"{digest[:8]}-{digest[8:12]}-{digest[12:16]}-{digest[16:20]}-{digest[20:32]}"


def _split(text: str, delimiter: Any) -> list[str]:
    if isinstance(delimiter, list):
        pattern = "|".join(re.escape(d) for d in delimiter)
        return re.split(pattern, text)
    return text.split(delimiter)


def _items(value: dict[str, Any]) -> list[dict[str, Any]]:
    value = _whole(value)
    return [{"key": k, "value": v} for k, v in sorted(value.items(), key=lambda kv: kv[0].lower())]


def _range(start: int, count: int) -> list[int]:
    spend_size(count, "range()", MAX_ARRAY_LENGTH)
    return list(range(start, start + count))


def _pad_left(value: Any, width: int, char: str = " ") -> str:
    spend_size(width, "padLeft()")
    return _string(value).rjust(width, char[:1] or " ")


def _replace(text: str, old: str, new: str) -> str:
    spend_size(len(text) + text.count(old) * (len(new) - len(old)), "replace()")
    return text.replace(old, new)


def _join(items: list[Any], separator: str) -> str:
    parts = [_string(i) for i in items]
    spend_size(sum(len(p) for p in parts) + len(separator) * max(len(parts) - 1, 0), "join()")
    return separator.join(parts)


def _flatten(items: list[Any]) -> list[Any]:
    spend_size(sum(len(i) if isinstance(i, list) else 1 for i in items), "flatten()", MAX_ARRAY_LENGTH)
    return [x for i in items for x in (i if isinstance(i, list) else [i])]


def _sub_string(text: str, start: int = 0, length: int | None = None) -> str:
    return text[start:] if length is None else text[start : start + length]


def _arithmetic(name: str, operation: Callable[[Any, Any], Any]) -> Function:
    """ARM's integer arithmetic: numbers only (``mul('x', 1000000000)`` must not build a
    gigabyte of text) and 64-bit results."""

    def apply(a: Any, b: Any) -> int:
        for operand in (a, b):
            if isinstance(operand, bool) or not isinstance(operand, (int, float)):
                raise TemplateFunctionError(f"{name}() needs numbers")
            int64(operand, f"an operand of {name}()")
        return int64(operation(a, b), f"{name}()")

    return apply


def _date_time_add(*_: Any) -> Any:
    return Unknown("time functions depend on the deployment time")


PURE_FUNCTIONS: dict[str, Function] = {
    "concat": _concat,
    "format": _format,
    "tolower": lambda s: s.lower(),
    "toupper": lambda s: s.upper(),
    "trim": lambda s: s.strip(),
    "replace": _replace,
    "split": _split,
    "join": _join,
    "substring": _sub_string,
    "indexof": lambda s, x: s.lower().find(x.lower()),
    "lastindexof": lambda s, x: s.lower().rfind(x.lower()),
    "startswith": lambda s, x: s.lower().startswith(x.lower()),
    "endswith": lambda s, x: s.lower().endswith(x.lower()),
    "contains": _contains,
    "empty": _empty,
    "length": _length,
    "padleft": _pad_left,
    "string": _string,
    "int": _int,
    "float": float,
    "bool": _bool,
    "json": _json,
    "first": _first,
    "last": _last,
    "take": _take,
    "skip": _skip,
    "equals": _equals,
    "not": lambda v: not v,
    "greater": lambda a, b: a > b,
    "greaterorequals": lambda a, b: a >= b,
    "less": lambda a, b: a < b,
    "lessorequals": lambda a, b: a <= b,
    "add": _arithmetic("add", operator.add),
    "sub": _arithmetic("sub", operator.sub),
    "mul": _arithmetic("mul", operator.mul),
    "div": _arithmetic("div", lambda a, b: int(a / b)),
    "mod": _arithmetic("mod", operator.mod),
    "min": lambda *a: min(a[0]) if len(a) == 1 and isinstance(a[0], list) else min(a),
    "max": lambda *a: max(a[0]) if len(a) == 1 and isinstance(a[0], list) else max(a),
    "range": _range,
    "array": lambda v: v if isinstance(v, list) else [v],
    "createarray": lambda *a: list(a),
    "createobject": lambda *a: {str(a[i]): a[i + 1] for i in range(0, len(a) - 1, 2)},
    "union": _union,
    "intersection": _intersection,
    "shallowmerge": _shallow_merge,
    "items": _items,
    "objectkeys": lambda o: list(_whole(o).keys()),
    "flatten": _flatten,
    "uniquestring": _unique_string,
    "guid": _guid,
    "base64": lambda s: base64.b64encode(s.encode("utf-8")).decode("ascii"),
    "base64tostring": lambda s: base64.b64decode(s).decode("utf-8", "replace"),
    "uricomponent": lambda s: urllib.parse.quote(s, safe=""),
    "uricomponenttostring": urllib.parse.unquote,
    "uri": lambda base, rel: urllib.parse.urljoin(base, rel),
    "null": lambda: None,
    "true": lambda: True,
    "false": lambda: False,
    "datetimeadd": _date_time_add,
    "datetimefromepoch": _date_time_add,
    "datetimetoepoch": _date_time_add,
}
