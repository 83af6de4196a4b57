"""The ``azai.toml`` (or ``[tool.azai]`` in pyproject.toml) configuration file.

Found by walking up from the working directory, the way ruff and pytest find theirs, so a
repository's policy applies wherever in it azai runs; ``--config`` names a file instead.
Command-line options override the file. Unknown keys are errors: a typo in a suppression
must not silently suppress nothing.
"""

from __future__ import annotations

import datetime as dt
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scanner.engine.checkapi import Check, Severity
from scanner.engine.registry import find_check
from scanner.errors import InputError
from scanner.policy.options import checked_option

CONFIG_NAME = "azai.toml"
_TOP_KEYS = {"fail-on", "select", "ignore", "rules", "suppressions", "owner-tag", "expected-writers"}
_SUPPRESSION_KEYS = {"rule", "resource", "justification", "expires"}


@dataclass(frozen=True)
class Suppression:
    """Accept a known finding: a rule, a resource pattern, a reason and an optional end date."""

    rule: str
    resource: str
    justification: str
    expires: dt.date | None = None
    source: str = CONFIG_NAME


@dataclass
class Config:
    path: str | None = None
    fail_on: str | None = None
    select: list[str] = field(default_factory=list)
    ignore: list[str] = field(default_factory=list)
    severities: dict[str, Severity] = field(default_factory=dict)
    options: dict[str, dict[str, Any]] = field(default_factory=dict)
    suppressions: list[Suppression] = field(default_factory=list)
    owner_tag: str | None = None
    # The identities that deploy through the reviewed path (``azai drift --expected-writer``):
    # a change Resource Graph records as theirs is "deployed outside the IaC under review".
    expected_writers: list[str] = field(default_factory=list)


def find_config(start: Path) -> Path | None:
    """The nearest ``azai.toml``, or ``pyproject.toml`` with a ``[tool.azai]`` table, upward
    from ``start`` to the root of the repository it is in: a file above the repository (in a
    home folder) belongs to someone else's project."""
    for directory in (start, *start.parents):
        candidate = directory / CONFIG_NAME
        if candidate.is_file():
            return candidate
        pyproject = directory / "pyproject.toml"
        if pyproject.is_file() and "azai" in _read_toml(pyproject).get("tool", {}):
            return pyproject
        if (directory / ".git").exists():
            return None
    return None


def _read_toml(path: Path) -> dict[str, Any]:
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{path}: cannot read configuration ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: invalid TOML: {exc}") from None


def load_config(explicit: str | None, checks: list[Check], cwd: Path | None = None) -> Config:
    """The configuration to use: ``explicit`` if given, else the nearest one found, else none."""
    if explicit and not Path(explicit).is_file():
        raise InputError(f"{explicit}: no such configuration file")
    path = Path(explicit) if explicit else find_config(cwd or Path.cwd())
    if path is None:
        return Config()
    data = _read_toml(path)
    if path.name == "pyproject.toml":
        data = data.get("tool", {}).get("azai", {})
    return parse_config(data, checks, str(path))


def parse_config(data: Mapping[str, Any], checks: list[Check], where: str) -> Config:
    unknown = set(data) - _TOP_KEYS
    if unknown:
        raise InputError(f"{where}: unknown configuration key(s) {', '.join(sorted(unknown))}")
    config = Config(path=where)
    fail_on = data.get("fail-on")
    if fail_on is not None:
        _severity_or_none(str(fail_on), where, "fail-on")
        config.fail_on = str(fail_on)
    owner = data.get("owner-tag")
    if owner is not None and not isinstance(owner, str):
        raise InputError(f"{where}: 'owner-tag' must be a tag name")
    config.owner_tag = owner
    config.select = _strings(data.get("select", []), where, "select")
    config.ignore = _strings(data.get("ignore", []), where, "ignore")
    config.expected_writers = _writers(data.get("expected-writers", []), where)
    rules = data.get("rules", {})
    if not isinstance(rules, dict):
        raise InputError(f"{where}: [rules] must be a table of rule ids or slugs")
    for key, settings in rules.items():
        check = find_check(checks, key)
        if check is None or not isinstance(settings, dict):
            raise InputError(f"{where}: [rules.{key}] names no known rule")
        for name, value in settings.items():
            if name == "severity":
                config.severities[check.id] = _severity(str(value), where, f"rules.{key}.severity")
            elif name in check.options:
                try:
                    config.options.setdefault(check.id, {})[name] = checked_option(check, name, value)
                except ValueError as exc:
                    raise InputError(f"{where}: rules.{key}.{exc}") from None
            else:
                declared = ", ".join(sorted(check.options)) or "none"
                raise InputError(f"{where}: rules.{key}.{name} is not an option of {check.id} (options: {declared})")
    for index, entry in enumerate(data.get("suppressions", [])):
        config.suppressions.append(_suppression(entry, checks, f"{where}: suppressions[{index}]"))
    return config


def _suppression(entry: Any, checks: list[Check], where: str) -> Suppression:
    if not isinstance(entry, dict):
        raise InputError(f"{where} must be a table")
    extra = set(entry) - _SUPPRESSION_KEYS
    if extra:
        raise InputError(f"{where}: unknown key(s) {', '.join(sorted(extra))}")
    rule, resource, justification = entry.get("rule"), entry.get("resource"), entry.get("justification")
    if not isinstance(rule, str) or find_check(checks, rule) is None:
        raise InputError(f"{where}: 'rule' must name a known rule id or slug")
    if not isinstance(resource, str) or not resource:
        raise InputError(f"{where}: 'resource' must be a resource id, name or address pattern")
    if not isinstance(justification, str) or not justification.strip():
        raise InputError(f"{where}: a suppression needs a 'justification'")
    expires = entry.get("expires")
    if isinstance(expires, str):
        try:
            expires = dt.date.fromisoformat(expires)
        except ValueError:
            raise InputError(f"{where}: 'expires' must be a date (YYYY-MM-DD)") from None
    elif isinstance(expires, dt.datetime):
        expires = expires.date()
    elif expires is not None and not isinstance(expires, dt.date):
        raise InputError(f"{where}: 'expires' must be a date (YYYY-MM-DD)")
    check = find_check(checks, rule)
    assert check is not None
    return Suppression(check.id, resource, justification.strip(), expires, where.split(":")[0])


def _strings(value: Any, where: str, key: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InputError(f"{where}: '{key}' must be a list of rule ids, slugs or pillars")
    return list(value)


def _writers(value: Any, where: str) -> list[str]:
    """``expected-writers``: the ids (as Resource Graph records them in ``changedBy``) of the
    service principals and managed identities that deploy through the reviewed path."""
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise InputError(f"{where}: 'expected-writers' must be a list of identity ids")
    return [v.strip() for v in value]


def _severity(text: str, where: str, key: str) -> Severity:
    try:
        return Severity.parse(text)
    except ValueError as exc:
        raise InputError(f"{where}: {key}: {exc}") from None


def _severity_or_none(text: str, where: str, key: str) -> Severity | None:
    return None if text.lower() == "none" else _severity(text, where, key)


def select_checks(checks: list[Check], select: list[str], ignore: list[str]) -> list[Check]:
    """The checks to run: those matching any ``select`` entry (all if none), minus ``ignore``.

    Entries match a rule id, a slug or a pillar (its name or first word), case-insensitively; an entry matching
    nothing is an error, so a misspelt ``--ignore`` cannot leave a rule silently running.
    """

    def matches(check: Check, key: str) -> bool:
        wanted = key.strip().lower()
        return wanted in (check.id.lower(), check.slug) or check.pillar.named(wanted)

    for key in [*select, *ignore]:
        if not any(matches(c, key) for c in checks):
            raise InputError(f"'{key}' matches no rule id, slug or pillar (see 'azai rules')")
    chosen = [c for c in checks if not select or any(matches(c, k) for k in select)]
    return [c for c in chosen if not any(matches(c, k) for k in ignore)]
