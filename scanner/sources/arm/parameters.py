"""ARM parameters files, including the Azure Developer CLI's ``${NAME}`` placeholders.

azd substitutes environment variables into ``main.parameters.json`` before it deploys:
``"${AZURE_LOCATION}"`` takes the variable, ``"${USE_GPU=true}"`` the variable or, when it is not
set, the default. A scan resolves them the same way, so that ``"${ENABLE_X=true}"`` is the
value ``true`` a deployment would get, never the literal (and truthy) text. A placeholder with
neither a variable nor a default is unknown. Key Vault references are secrets: unknown, never read.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scanner.errors import InputError
from scanner.jsondoc import load_document
from scanner.unknown import Unknown

# envsubst's forms, as azd uses them: ${NAME}, ${NAME=default} and ${NAME-default} (default when
# unset), ${NAME:=default} and ${NAME:-default} (also when empty).
_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-=])([^}]*))?\}")
SECRET_REFERENCE = "parameter read from Key Vault at deployment"


@dataclass(frozen=True)
class Placeholder:
    """One azd placeholder in a parameters file and what it resolved to."""

    parameter: str
    text: str
    value: str | None  # None: neither the variable nor a default
    source: str  # "environment", "default" or "unset"


@dataclass(frozen=True)
class ParameterFile:
    """Values for a template's parameters, and where each azd placeholder among them came from."""

    path: str | None = None
    values: Mapping[str, Any] = field(default_factory=dict)
    placeholders: tuple[Placeholder, ...] = ()


def read_parameters(path: str, environ: Mapping[str, str]) -> ParameterFile:
    """Values from an ARM parameters file (``{"parameters": {"name": {"value": ...}}}``)."""
    doc = load_document(Path(path), path)
    section = doc.data.get("parameters")
    if not isinstance(section, dict):
        raise InputError(f"{path}: not an ARM parameters file (no 'parameters' object)")
    values: dict[str, Any] = {}
    placeholders: list[Placeholder] = []
    for name, entry in section.items():
        if isinstance(entry, dict) and "value" in entry:
            values[name] = _substitute(entry["value"], name, environ, placeholders)
        elif isinstance(entry, dict) and "reference" in entry:
            values[name] = Unknown(SECRET_REFERENCE)
    return ParameterFile(path, values, tuple(placeholders))


def _substitute(value: Any, parameter: str, environ: Mapping[str, str], found: list[Placeholder]) -> Any:
    if isinstance(value, str):
        return _substitute_text(value, parameter, environ, found)
    if isinstance(value, list):
        return [_substitute(v, parameter, environ, found) for v in value]
    if isinstance(value, dict):
        return {k: _substitute(v, parameter, environ, found) for k, v in value.items()}
    return value


def _substitute_text(text: str, parameter: str, environ: Mapping[str, str], found: list[Placeholder]) -> Any:
    unresolved: list[str] = []

    def replace(match: re.Match[str]) -> str:
        name, operator, default = match.group(1), match.group(2), match.group(3)
        current = environ.get(name)
        if current is not None and not (operator and operator.startswith(":") and current == ""):
            found.append(Placeholder(parameter, match.group(0), current, "environment"))
            return current
        if operator:
            found.append(Placeholder(parameter, match.group(0), default, "default"))
            return default
        found.append(Placeholder(parameter, match.group(0), None, "unset"))
        unresolved.append(match.group(0))
        return match.group(0)

    substituted = _PLACEHOLDER.sub(replace, text)
    if unresolved:
        # The same unset variable is the same value wherever it is used.
        unset = UnsetPlaceholder if _PLACEHOLDER.fullmatch(text) else Unknown
        return unset(f"azd placeholder {unresolved[0]} is not set and has no default", symbol=text)
    return substituted


class UnsetPlaceholder(Unknown):
    """A parameter whose whole value is an azd placeholder with neither a variable nor a default.
    azd then leaves the parameter out, so the template's own default applies; without one, azd
    asks for a value, which a scan cannot know."""

    __slots__ = ()


def placeholder_warning(parameters: ParameterFile, secure: set[str], defaulted: set[str]) -> str | None:
    """One line naming every azd placeholder of the file and the value it took.

    Values of parameters the template declares secure are never shown; ``defaulted`` are the
    (lower-cased) parameters with a default in the template, which an unset placeholder leaves to it.
    """
    if not parameters.placeholders:
        return None
    parts = []
    for p in parameters.placeholders:
        if p.value is None and p.parameter.lower() in defaulted:
            parts.append(f"{p.text} is not set, so the template's default for '{p.parameter}' applies")
        elif p.value is None:
            parts.append(f"{p.text} is unknown (no such variable and no default)")
        elif p.parameter.lower() in secure:
            parts.append(f"{p.text} = (secure parameter, not shown) from the {p.source}")
        else:
            parts.append(f"{p.text} = {p.value!r} from the {p.source}")
    return f"{parameters.path}: azd placeholders resolved as azd does: " + "; ".join(parts)
