"""What an expression can build that no ARM document can carry, and ARM's size limit for a
document. (Messages quote input as it is: the CLI and the reports escape it where they write.)

A document itself is strict JSON (`scanner.model.jsondoc` refuses lone surrogates and numbers
out of range with their line and column), and at most ARM's 4 MB. But ``json('"\\ud800"')``
builds a string with a lone surrogate, which cannot be written as UTF-8: the function treats
such a value as unknown (`lone_surrogate`), so that no report meets it.
"""

from __future__ import annotations

import json
import re
from typing import Any

from scanner.errors import InputError
from scanner.model.jsondoc import Document, pointer_join
from scanner.sources.arm.limits import MAX_TEMPLATE_BYTES

_SURROGATE = re.compile("[\ud800-\udfff]")


def lone_surrogate(value: Any) -> str | None:
    """The JSON path (within ``value``) of a string or property name with a lone surrogate."""
    pending: list[tuple[Any, str]] = [(value, "")]
    while pending:
        item, where = pending.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                return where
        elif isinstance(item, dict):
            for key, child in item.items():
                if _SURROGATE.search(key):
                    return where
                pending.append((child, pointer_join(where, key)))
        elif isinstance(item, list):
            pending.extend((child, pointer_join(where, i)) for i, child in enumerate(item))
    return None


def require_arm_document(document: Document) -> None:
    """Refuse a template or parameters file larger than ARM's 4 MB (see `limits`).

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
