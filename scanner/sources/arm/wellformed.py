"""What an expression can build that no ARM document can carry, ARM's size limit for a
document, and the JSON types of the values azai reads inside resource bodies. (Messages quote
input as it is: the CLI and the reports escape it where they write.)

A document itself is strict JSON (`scanner.model.jsondoc` refuses lone surrogates and numbers
out of range with their line and column), and at most ARM's 4 MB. But ``json('"\\ud800"')``
builds a string with a lone surrogate, which cannot be written as UTF-8: the function treats
such a value as unknown (`lone_surrogate`), so that no report meets it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from scanner.errors import InputError
from scanner.model import azure_types as T
from scanner.model.jsondoc import Document, expect, pointer_join
from scanner.sources.arm.expressions import is_expression
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


@dataclass(frozen=True)
class Shape:
    """The JSON type of a value azai reads, and the shapes of what it reads inside: members of
    an object (names case-insensitive, as ARM's), or every item of an array."""

    kind: type
    members: Mapping[str, Shape] = field(default_factory=dict)
    items: Shape | None = None


# What the rules read of a resource body, by lower-cased type, with the JSON types of the REST
# API's definitions (Azure/azure-rest-api-specs at df74858bfda6128d16c98265db2a6f42e89b20ff:
# specification/monitor/resource-manager/Microsoft.Insights/stable/2022-10-01/autoscale_API.json:
# AutoscaleSettingResource.properties an AutoscaleSetting object, whose targetResourceUri is a
# string and profiles an array of AutoscaleProfile objects; AutoscaleProfile.rules an array of
# ScaleRule objects; ScaleRule.metricTrigger a MetricTrigger object, whose metricName is a
# string). Nothing else of these bodies is read, so nothing else is refused.
READ_SHAPES: dict[str, Shape] = {
    T.AUTOSCALE_SETTING.lower(): Shape(
        dict,
        {
            "properties": Shape(
                dict,
                {
                    "targetResourceUri": Shape(str),
                    "profiles": Shape(
                        list,
                        items=Shape(
                            dict,
                            {
                                "rules": Shape(
                                    list,
                                    items=Shape(dict, {"metricTrigger": Shape(dict, {"metricName": Shape(str)})}),
                                )
                            },
                        ),
                    ),
                },
            )
        },
    ),
}


def require_read_shape(
    document: Document, resource_type: str, body: Any, pointer: str, expressions: bool = False
) -> None:
    """Refuse a resource body with a value of the wrong JSON type where a rule reads it, with
    the one line `expect` writes for a wrong-typed member anywhere else (file, JSON pointer,
    expected and found types): a what-if rule whose ``metricTrigger`` was ``false`` ended in an
    internal error (issue 37). Absent and null values are not read, so they pass.

    ``expressions``: the body is a template declaration, where any value may be an expression
    (``"[...]"``) that only deploy evaluates; the rule judges what it evaluates to."""
    shape = READ_SHAPES.get(resource_type.lower())
    if shape is not None:
        _require(document, body, shape, pointer, expressions)


def _require(document: Document, value: Any, shape: Shape, pointer: str, expressions: bool) -> None:
    if value is None or (expressions and isinstance(value, str) and is_expression(value)):
        return
    expect(document, value, shape.kind, pointer)
    if isinstance(value, dict):
        for name, inner in shape.members.items():
            key = _member_key(value, name)
            if key is not None:
                _require(document, value[key], inner, pointer_join(pointer, key), expressions)
    elif isinstance(value, list) and shape.items is not None:
        for index, item in enumerate(value):
            _require(document, item, shape.items, pointer_join(pointer, index), expressions)


def _member_key(obj: dict[str, Any], name: str) -> str | None:
    """The key naming member ``name``: as written, else in any case (as `get_path` reads it)."""
    if name in obj:
        return name
    lowered = name.lower()
    return next((key for key in obj if isinstance(key, str) and key.lower() == lowered), None)
