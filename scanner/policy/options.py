"""Command-line policy values: the gate severity and ``RULE:KEY=VALUE`` rule options."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scanner.engine.checkapi import Check, Severity
from scanner.engine.registry import find_check
from scanner.errors import InputError


def parse_fail_on(text: str) -> Severity | None:
    """The gate's severity; ``none`` turns the gate off."""
    if text.strip().lower() == "none":
        return None
    try:
        return Severity.parse(text)
    except ValueError as exc:
        raise InputError(f"--fail-on: {exc}") from None


_FLAGS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}


def _typed_option(default: Any, value: str) -> Any:
    """A command-line option value in the type of the rule's default."""
    if isinstance(default, bool):
        if value.strip().lower() not in _FLAGS:
            raise ValueError(value)
        return _FLAGS[value.strip().lower()]
    if isinstance(default, (int, float)):
        return type(default)(value)
    if isinstance(default, (list, tuple)):
        return [item.strip() for item in value.split(",") if item.strip()]
    return value


def checked_option(check: Check, key: str, value: Any) -> Any:
    """An option value of the type the rule's default has (a list of names where the default is
    a list), and one of its declared choices if it has any; ValueError names what it must be.
    The command line and the config file both pass through here, so that neither can hand a
    rule a value it would misread (a string iterated as letters, a typo that decides nothing)."""
    default = check.options[key]
    if isinstance(default, bool):
        valid = isinstance(value, bool)
    elif isinstance(default, (int, float)):
        valid = isinstance(value, (int, float)) and not isinstance(value, bool)
    elif isinstance(default, (list, tuple)):
        valid = isinstance(value, list) and all(isinstance(item, str) for item in value)
    else:
        valid = isinstance(value, type(default))
    if not valid:
        kind = "list of names" if isinstance(default, (list, tuple)) else type(default).__name__
        raise ValueError(f"{key} must be a {kind}")
    allowed = check.choices.get(key)
    if allowed and str(value).strip().lower() not in {c.lower() for c in allowed}:
        raise ValueError(f"{key} must be one of {', '.join(allowed)}")
    return value


def parse_rule_options(given: Sequence[str], checks: list[Check]) -> dict[str, dict[str, Any]]:
    """``RULE:KEY=VALUE`` settings, checked against the options each rule declares.

    Values take the type of the rule's default, so ``max_average_percent=5`` is a number,
    ``require_user_assigned=true`` a flag and ``marker_values=ai,ml`` a list.
    """
    options: dict[str, dict[str, Any]] = {}
    for text in given:
        target, _, assignment = text.partition(":")
        key, equals, value = assignment.partition("=")
        check = find_check(checks, target)
        if check is None or not equals:
            raise InputError(f"--rule-option {text!r}: expected RULE:KEY=VALUE with a known rule id or slug")
        if key not in check.options:
            declared = ", ".join(sorted(check.options)) or "none"
            raise InputError(f"--rule-option {text!r}: {check.id} has no option {key!r} (options: {declared})")
        try:
            typed = _typed_option(check.options[key], value)
        except ValueError:
            kind = type(check.options[key]).__name__
            raise InputError(f"--rule-option {text!r}: {key} must be a {kind}") from None
        try:
            checked_option(check, key, typed)
        except ValueError as exc:
            raise InputError(f"--rule-option {text!r}: {exc}") from None
        options.setdefault(check.id, {})[key] = typed
    return options
