"""Plan values with Terraform's unknown and sensitive masks applied.

Terraform writes a planned value in ``after`` and marks, in parallel trees, which leaves are
known only after apply (``after_unknown``) and which are sensitive (``after_sensitive``).
An unknown leaf is simply absent from ``after``, so reading ``after`` alone confuses "not
set" with "not known yet" (the root of several Checkov false results). We fold both masks
into one value tree: unknown leaves become `Unknown`, and sensitive leaves become `Unknown`
too, so their real text can never reach a report.
"""

from __future__ import annotations

from typing import Any, Final

from scanner.model.unknown import Unknown

AFTER_APPLY: Final = Unknown("known only after apply")
SENSITIVE: Final = Unknown("sensitive value, not read")


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


MISSING: Final = _Missing()


def overlay(value: Any, unknown: Any = None, sensitive: Any = None) -> Any:
    """``value`` with unknown and sensitive leaves replaced by `Unknown`."""
    if sensitive is True:
        return SENSITIVE
    if unknown is True:
        return AFTER_APPLY
    if not isinstance(unknown, (dict, list)) and not isinstance(sensitive, (dict, list)):
        return value  # no mask below here: the value as it is
    if any(isinstance(v, dict) for v in (value, unknown, sensitive)):
        return _overlay_object(value, unknown, sensitive)
    if any(isinstance(v, list) for v in (value, unknown, sensitive)):
        return _overlay_array(value, unknown, sensitive)
    return value


def _overlay_object(value: Any, unknown: Any, sensitive: Any) -> dict[str, Any]:
    """An object's members overlaid; a member only the unknown mask names is unknown, not absent."""
    base = value if isinstance(value, dict) else {}
    masks_u = unknown if isinstance(unknown, dict) else {}
    masks_s = sensitive if isinstance(sensitive, dict) else {}
    keys = list(base) + [k for k, v in masks_u.items() if k not in base and v not in (False, None)]
    return {  # most members have no mask: kept as they are, without a call each
        k: base[k] if k not in masks_u and k not in masks_s else overlay(base.get(k), masks_u.get(k), masks_s.get(k))
        for k in keys
    }


def _overlay_array(value: Any, unknown: Any, sensitive: Any) -> list[Any]:
    """An array's items overlaid; items only the unknown mask has (appended after apply) are unknown."""
    items = value if isinstance(value, list) else []
    masks_u = unknown if isinstance(unknown, list) else []
    masks_s = sensitive if isinstance(sensitive, list) else []
    return [overlay(_at(items, i), _at(masks_u, i), _at(masks_s, i)) for i in range(max(len(items), len(masks_u)))]


def _at(items: list[Any], index: int) -> Any:
    return items[index] if index < len(items) else None


def read(values: Any, path: str) -> Any:
    """The value at a dotted Terraform attribute path (``scale_settings.0.min_node_count``).

    Returns `MISSING` for an absent or null attribute, which Terraform means as "not set";
    an `Unknown` anywhere on the way is returned as it is.
    """
    if type(values) is dict and "." not in path:  # a top-level attribute: most reads, by far
        current = values.get(path)
        return MISSING if current is None else current
    current = values
    for key in path.split("."):
        if isinstance(current, Unknown):
            return current
        if isinstance(current, dict):
            current = current.get(key)
        elif isinstance(current, list) and key.isdigit() and int(key) < len(current):
            current = current[int(key)]
        else:
            return MISSING
        if current is None:
            return MISSING
    return current
