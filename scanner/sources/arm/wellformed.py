"""Values a JSON parser accepts but no ARM document can carry, lone surrogates, and input
quoted safely in a one-line message.

``"\\ud800"`` parses to a string that cannot be written as UTF-8, so a report that shows it
fails: it is refused where the document is read, with the JSON path, so that nothing downstream
meets it. The check costs one substring search of the text: the walk over the parsed values runs
only when the text has a ``\\u`` escape at all, and then refuses an infinite number too (one
such as ``1e999`` is otherwise refused where it is used as an integer: `limits.int64`).
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

from scanner.errors import InputError
from scanner.model.jsondoc import Document, pointer_join
from scanner.sources.arm.limits import MAX_TEMPLATE_BYTES

_SURROGATE = re.compile("[\ud800-\udfff]")
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")


def printable(text: str) -> str:
    """Input quoted in a one-line message: control characters (a newline in a symbolic name) and
    lone surrogates escaped as Python writes them (``a\\nb``), everything else as it is."""
    return _CONTROL.sub(lambda m: repr(m.group(0))[1:-1], text)


def require_wellformed(doc: Document) -> None:
    """Refuse a document holding a lone surrogate or a number out of range, naming where."""
    if not _suspect(doc.text):
        return
    found = _first_bad(doc.data, "")
    if found is not None:
        pointer, reason = found
        raise InputError(f"{doc.path}: at {printable(pointer) or '/'}: {reason}")


def _suspect(text: str) -> bool:
    """Whether the text may hold a surrogate escape: one substring search, 3 ms on a 3 MB
    template, where walking the parsed values takes a hundred. (A number out of range, ``1e999``
    or ``NaN``, is refused where it is used as an integer: `limits.int64`.)"""
    return "\\u" in text


def lone_surrogate(value: Any) -> str | None:
    """The JSON path (within ``value``) of a string with a lone surrogate, if there is one."""
    found = _first_bad(value, "")
    return found[0] if found is not None and "surrogate" in found[1] else None


def _first_bad(value: Any, pointer: str) -> tuple[str, str] | None:
    pending: list[tuple[Any, str]] = [(value, pointer)]
    while pending:
        item, where = pending.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return where, "text with a lone surrogate (\\ud800-\\udfff), which is not Unicode"
        elif isinstance(item, float):
            if not math.isfinite(item):
                return where, f"the number {item} is out of range"
        elif isinstance(item, dict):
            for key, child in item.items():
                if _SURROGATE.search(key):
                    return where, f"a property name with a lone surrogate: {printable(key)!r}"
                pending.append((child, pointer_join(where, key)))
        elif isinstance(item, list):
            pending.extend((child, pointer_join(where, i)) for i, child in enumerate(item))
    return None


def require_arm_document(document: Document) -> None:
    """Refuse a template or parameters file ARM would refuse: larger than 4 MB (see `limits`), or
    holding what no ARM document can (above).

    ARM measures the template it is sent, whitespace gone, so a file that is larger only for its
    indentation passes: its compact form is measured only when the file itself is too large."""
    if len(document.text) > MAX_TEMPLATE_BYTES:
        compact = json.dumps(document.data, separators=(",", ":"), ensure_ascii=False)
        size = len(compact.encode("utf-8", "surrogatepass"))
        if size > MAX_TEMPLATE_BYTES:
            raise InputError(
                f"{document.path}: {size:,} bytes without whitespace; ARM's limit for a template or "
                f"parameters file is 4 MB ({MAX_TEMPLATE_BYTES:,} bytes)"
            )
    require_wellformed(document)
