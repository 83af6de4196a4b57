"""The single-property check most rules make, declared instead of written out.

Most violations come from one setting: a value that must be one of a few (``disableLocalAuth``
must be ``true``) or must not be one of a few (``allowBlobPublicAccess`` must not be ``true``).
Written by hand, each takes an ``if known(...)`` and a six-line `Violation`; declared, it is one
call, and every rule reads the value the same way: an unknown value leaves the resource
undetermined (never passed), an absent one is ``None``, and text compares case-insensitively
as ARM compares enum values.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from scanner.engine.checkapi import Severity, Violation
from scanner.model.resources import Resource
from scanner.model.unknown import known


def require(
    resource: Resource,
    path: str,
    *accepted: Any,
    message: str,
    expected: str | None = None,
    severity: Severity | None = None,
) -> Iterator[Violation]:
    """A violation unless the value at ``path`` is one of ``accepted`` (absent is ``None``, which
    fails unless accepted). ``expected`` defaults to the accepted values."""
    value = known(resource.get(path))
    if not any(_same(value, choice) for choice in accepted):
        yield Violation(message, path, value, expected or " or ".join(_shown(c) for c in accepted), severity)


def forbid(
    resource: Resource,
    path: str,
    *rejected: Any,
    message: str,
    expected: str,
    severity: Severity | None = None,
) -> Iterator[Violation]:
    """A violation when the value at ``path`` is one of ``rejected`` (pass ``None`` to reject an
    absent value). ``expected`` says what would pass, since the rejected values cannot."""
    value = known(resource.get(path))
    if any(_same(value, choice) for choice in rejected):
        yield Violation(message, path, value, expected, severity)


def _same(value: Any, choice: Any) -> bool:
    """Equality as ARM means it: text case-insensitively; ``True`` is not ``1``."""
    if isinstance(value, str) and isinstance(choice, str):
        return value.lower() == choice.lower()
    return type(value) is type(choice) and value == choice


def _shown(choice: Any) -> str:
    """A value as JSON writes it, the form users see in templates and plans."""
    if isinstance(choice, bool):
        return "true" if choice else "false"
    return "absent" if choice is None else str(choice)
