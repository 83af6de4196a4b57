"""Command-line policy values: the gate severity and ``RULE:KEY=VALUE`` rule options."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Sequence
from typing import Any

from scanner.engine.checkapi import Check, Severity
from scanner.engine.registry import find_check
from scanner.errors import InputError
from scanner.model.durations import parse_duration


def parse_fail_on(text: str) -> Severity | None:
    """The gate's severity; ``none`` turns the gate off."""
    if text.strip().lower() == "none":
        return None
    try:
        return Severity.parse(text)
    except ValueError as exc:
        raise InputError(f"--fail-on: {exc}") from None


# Characters bare text never holds: a value with one is meant as TOML, and must be valid TOML.
_TOML_MARKS = frozenset("[]{}\"'\n\r")
_POSITION = re.compile(r" \(at (line \d+, column \d+|end of document)\)$")


def toml_value(text: str) -> Any:
    """``text`` read as azai.toml reads the value after ``key =``, with the same parser, so
    ``["eastus"]``, ``5``, ``0.30``, ``true`` and ``"PT2H"`` mean on the command line exactly
    what they mean in the file. ValueError says what is wrong, without the parser's position,
    which would count the ``key =`` the user never wrote."""
    try:
        table = tomllib.loads(f"value = {text}")
    except tomllib.TOMLDecodeError as exc:
        raise ValueError(f"not a value azai.toml could hold: {_POSITION.sub('', str(exc)).lower()}") from None
    if list(table) != ["value"]:  # a newline and a second key in the text
        raise ValueError("not one value")
    return table["value"]


def _bare_value(default: Any, text: str) -> Any:
    """Bare text, which azai.toml would not take as this option's value: the text itself, or,
    where the option is a list, the comma-separated names (``marker_values=ai,ml``)."""
    if isinstance(default, (list, tuple)):
        return [item.strip() for item in text.split(",") if item.strip()]
    return text


def option_value(check: Check, key: str, text: str) -> Any:
    """A ``--rule-option`` VALUE for ``check``'s option ``key``.

    First read as azai.toml reads it and checked as a file's value is; the command line may
    therefore never type a value otherwise than the file does (``["eastus"]`` was once taken as
    the one region named ``["eastus"]``, which matched nothing and silently decided nothing).
    Bare text that is not such a value of the option's type (``eastus``, ``PT2H``, ``ai,ml``,
    ``1`` for a tag name) is taken as a string, or a list of names; text with brackets, braces or
    quotes is always meant as TOML, so a typo in it is an error rather than a name.
    """
    try:
        return checked_option(check, key, toml_value(text))
    except ValueError:
        if _TOML_MARKS.intersection(text):
            raise
    return checked_option(check, key, _bare_value(check.options[key], text))


def checked_option(check: Check, key: str, value: Any) -> Any:
    """An option value of the type the rule's default has (a list of names where the default is
    a list), one of its declared choices if it has any, and a duration where the default is one
    (``PT4H``); ValueError names what it must be.
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
    if parse_duration(default) is not None and parse_duration(value) is None:
        # A limit the rule cannot read would silently stop it judging anything (PT2X, 2h).
        raise ValueError(f"{key} must be an ISO-8601 duration, such as {default} or P1D")
    return value


def parse_rule_options(given: Sequence[str], checks: list[Check]) -> dict[str, dict[str, Any]]:
    """``RULE:KEY=VALUE`` settings, checked against the options each rule declares.

    Values are read as the configuration file reads them (``option_value``), so
    ``max_average_percent=5`` is a number, ``require_user_assigned=true`` a flag, and
    ``zone_regions=["eastus"]`` and ``zone_regions=eastus`` the same list.
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
            typed = option_value(check, key, value)
        except ValueError as exc:
            raise InputError(f"--rule-option {text!r}: {exc}") from None
        options.setdefault(check.id, {})[key] = typed
    return options
