"""ARM parameters files, including the Azure Developer CLI's ``${NAME}`` placeholders.

azd substitutes environment variables into ``main.parameters.json`` before it deploys:
``"${AZURE_LOCATION}"`` takes the variable, ``"${USE_GPU=true}"`` the variable or, when it is not
set, the default. A scan resolves them the same way, so that ``"${ENABLE_X=true}"`` is the
value ``true`` a deployment would get, never the literal (and truthy) text. A whole value whose
placeholder has neither a variable nor a default (or comes out empty) is left out, as azd leaves
it out: the template's default applies, and without one it is unknown. Key Vault references are
secrets: unknown, never read.

A parameters file comes with the pull request a scan checks, so it chooses which variables of
the CI job's environment it names. Variables whose names look like credentials are never read,
and no report quotes a value read from the environment for a secure or undeclared parameter.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scanner.errors import InputError
from scanner.model.jsondoc import expect, load_document
from scanner.model.unknown import Unknown
from scanner.sources.arm.wellformed import require_arm_document

# envsubst's forms, as azd uses them: ${NAME}, ${NAME=default} and ${NAME-default} (default when
# unset), ${NAME:=default} and ${NAME:-default} (also when empty).
_PLACEHOLDER = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-=])([^}]*))?\}")
# Names of variables that hold credentials, in CI jobs and by convention: never read.
_CREDENTIAL = re.compile(
    r"TOKEN|SECRET|PASSWORD|PASSWD|CREDENTIAL|CONNECTION_?STRING|APIKEY|PRIVATE_?KEY|COOKIE|"
    r"(^|_)(KEY|PAT|SAS|PWD)$|^(ACTIONS|RUNNER)_",
    re.IGNORECASE,
)
SECRET_REFERENCE = "parameter read from Key Vault at deployment"


@dataclass(frozen=True)
class Placeholder:
    """One azd placeholder in a parameters file and what it resolved to."""

    parameter: str
    variable: str
    value: str | None  # None: neither the variable nor a default
    source: str  # "environment", "default", "unset" or "refused" (the name looks like a credential)
    whole: bool  # the placeholder is the parameter's whole value


@dataclass(frozen=True)
class ParameterFile:
    """Values for a template's parameters, and where each azd placeholder among them came from."""

    path: str | None = None
    values: Mapping[str, Any] = field(default_factory=dict)
    placeholders: tuple[Placeholder, ...] = ()


class UnsetPlaceholder(Unknown):
    """A parameter whose whole value is an azd placeholder that resolved to nothing. azd then
    leaves the parameter out, so the template's own default applies; without one, azd asks for
    a value, which a scan cannot know."""

    __slots__ = ()


def read_parameters(path: str, environ: Mapping[str, str]) -> ParameterFile:
    """Values from an ARM parameters file (``{"parameters": {"name": {"value": ...}}}``)."""
    doc = load_document(Path(path), path)
    require_arm_document(doc)
    section = doc.data.get("parameters")
    if section is None:
        raise InputError(f"{path}: not an ARM parameters file (no 'parameters' object)")
    values: dict[str, Any] = {}
    placeholders: list[Placeholder] = []
    for name, raw in expect(doc, section, dict, "/parameters").items():
        entry = expect(doc, raw, dict, ("/parameters", name))  # {"value": ...} or {"reference": ...}
        if "value" in entry:
            values[name] = _substitute(entry["value"], name, environ, placeholders)
        elif "reference" in entry:
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
    whole = _PLACEHOLDER.fullmatch(text) is not None
    unresolved: list[str] = []

    def replace(match: re.Match[str]) -> str:
        name, operator, default = match.group(1), match.group(2), match.group(3)
        refused = _CREDENTIAL.search(name) is not None
        current = None if refused else environ.get(name)
        if current is not None and not (operator and operator.startswith(":") and current == ""):
            found.append(Placeholder(parameter, name, current, "environment", whole))
            return current
        if operator:
            found.append(Placeholder(parameter, name, default, "refused" if refused else "default", whole))
            return default
        found.append(Placeholder(parameter, name, None, "refused" if refused else "unset", whole))
        unresolved.append(name)
        return match.group(0)

    substituted = _PLACEHOLDER.sub(replace, text)
    if whole and (unresolved or substituted == ""):
        return UnsetPlaceholder(f"azd variable {found[-1].variable} gives no value", symbol=text)
    if unresolved:
        # The same unset variable is the same value wherever it is used.
        return Unknown(f"azd variable {unresolved[0]} is not set and has no default", symbol=text)
    return substituted


def placeholder_warning(parameters: ParameterFile, shown: set[str], defaulted: set[str]) -> str | None:
    """One line naming every azd placeholder of the file and the value it took.

    Values are quoted only for ``shown`` parameters (declared by the template, not secure);
    ``defaulted`` are the parameters with a default in the template (all names lower-cased).
    """
    if not parameters.placeholders:
        return None
    parts = []
    for p in parameters.placeholders:
        name = f"${{{p.variable}}} ({p.parameter})"
        left_out = p.whole and (p.value is None or p.value == "")
        if left_out and p.parameter.lower() in defaulted:
            outcome = "gives no value, so the template's default applies"
        elif p.value is None:
            outcome = "is unknown (no such variable and no default)"
        else:
            origin = "the environment" if p.source == "environment" else "its default"
            value = repr(p.value) if p.parameter.lower() in shown else "(not shown)"
            outcome = f"= {value} from {origin}"
        if p.source == "refused":
            outcome += " (the variable was not read: its name looks like a credential)"
        parts.append(f"{name} {outcome}")
    return f"{parameters.path}: azd placeholders resolved as azd does: " + "; ".join(parts)


@dataclass(frozen=True)
class TemplateOptions:
    """How templates are evaluated: the parameters file's values and the cloud (``environment()``).

    Here, not beside the template reader, so that every scan can carry them without importing
    the template evaluator, which a plan or what-if scan never runs."""

    parameters: ParameterFile = field(default_factory=ParameterFile)
    cloud: str = "AzureCloud"
