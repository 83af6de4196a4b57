"""Template instances: the scanned template, and each instance of a module (nested deployment).

A `TemplateFrame` is one template being evaluated in one scope: the scanned file, or one copy
of a nested deployment, inline or linked. It answers what ARM answers at deploy time and a scan
can still know: ``reference('module').outputs.x.value`` (the module's output expression,
evaluated in the module's own scope), and ``reference('resource', api, 'full').location`` (what
the template declares). Modules are built once per copy index and shared by the walk over
resources and by the references to their outputs.

Module parameters are bound the way ARM binds them: ``{"value": ...}``, a Key Vault
``{"reference": ...}`` (a secret: unknown, never read), or a whole entry written as an expression
(Bicep's ``[if(c, createObject('value', a), createObject('value', b))]``). A linked template is
read from ``templateLink.relativePath``, or from a ``uri`` that names a file beside the scanned
template; one that cannot be read is a coverage gap, and the scan is incomplete.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from scanner import azure_types as T
from scanner.errors import InputError
from scanner.jsondoc import Document, load_document, pointer_join
from scanner.model import CoverageGap, parse_resource_id
from scanner.sources.arm.evaluator import ROOT_DEPLOYMENT, Evaluator, Placement, Scope, is_secure, resolve_definition
from scanner.sources.arm.parameters import SECRET_REFERENCE, ParameterFile
from scanner.unknown import Unknown

MAX_NESTING = 20
MAX_COPY = 800  # ARM's limit on a copy loop's count
_INDEXED = re.compile(r"^(?P<name>.+?)\[(?P<index>\d+)\]$")


@dataclass
class Session:
    """What every template instance of one scanned file shares: the cloud, where warnings and
    coverage gaps go, and the folders linked templates may be read from."""

    cloud: str
    roots: tuple[Path, ...]
    warnings: list[str] = field(default_factory=list)
    coverage: list[CoverageGap] = field(default_factory=list)
    _said: set[str] = field(default_factory=set)
    _documents: dict[Path, Document] = field(default_factory=dict)

    def warn(self, message: str) -> None:
        if message not in self._said:
            self._said.add(message)
            self.warnings.append(message)

    def gap(self, scope: str, reason: str) -> None:
        self.coverage.append(CoverageGap(scope, None, reason, kind="template"))


class TemplateFrame:
    """One template instance: its declarations, its scope, and the modules it deploys."""

    def __init__(
        self,
        session: Session,
        document: Document,
        location: Path,
        template: dict[str, Any],
        pointer: str,
        path: str,
        depth: int,
        deployment_name: str,
        scope: Scope | None = None,
        supplied: Any = None,
        placement: Placement | None = None,
    ) -> None:
        self.session = session
        self.document = document
        self.location = location  # the file on disk the template is in
        self.template = template
        self.pointer = pointer  # of the template object within its document
        self._path = path
        self.depth = depth
        self._deployment_name = deployment_name
        self.scope = scope or Scope(template, supplied or {}, placement or Placement(), frame=self)
        self._modules: dict[tuple[str, Any], TemplateFrame | None] = {}
        self._outputs: dict[str, Any] | None = None
        self._named: list[tuple[str, str, str, dict[str, Any], Any]] | None = None
        self.ancestry: frozenset[Path] = frozenset({location.resolve()})  # files up the chain of links

    # -- the Frame protocol the evaluator uses ---------------------------------------------

    @property
    def path(self) -> str:
        return self._path

    @property
    def cloud(self) -> str:
        return self.session.cloud

    @property
    def deployment_name(self) -> str:
        return self._deployment_name

    @property
    def template_uri(self) -> str:
        return self.location.resolve().as_uri()

    def warn(self, message: str) -> None:
        where = f" (module {self._path})" if self._path else ""
        self.session.warn(f"{self.document.path}: {message}{where}")

    def reference(self, target: str, full: bool) -> Any:
        found = self._find(target)
        if found is None:
            return Unknown(f"reference('{_short(target)}') reads a resource this template does not deploy")
        key, raw, index = found
        if raw.get("existing") is True:
            return Unknown(f"reference('{_short(target)}') reads an existing resource's state")
        scope = self.instance_scope(raw, index)
        if _is_deployment(raw, scope):
            module = self.module(key, raw, scope, index)
            if module is None:
                return Unknown(f"module '{key}' could not be evaluated")
            outputs = {"outputs": module.outputs()}
            return {"properties": outputs} if full else outputs
        if not full:
            return Unknown(f"reference('{_short(target)}') reads the deployed resource's state")
        ev = Evaluator(scope)
        return {
            "location": ev.value(raw["location"])
            if "location" in raw
            else Unknown("the resource declares no location"),
            "type": ev.value(raw.get("type")),
            "name": ev.value(raw.get("name")),
        }

    # -- declarations and modules ----------------------------------------------------------

    def declarations(self) -> list[tuple[str, Any]]:
        """(key, declaration) of each resource: the symbolic name in ``languageVersion`` 2.0,
        else the index in the ``resources`` array."""
        raw = self.template.get("resources")
        if isinstance(raw, dict):
            return [(str(k), v) for k, v in raw.items()]
        if isinstance(raw, list):
            return [(str(i), v) for i, v in enumerate(raw)]
        return []

    def instance_path(self, key: str, index: Any) -> str:
        segment = key if index is None else f"{key}[{_index_text(index)}]"
        return f"{self._path}/{segment}" if self._path else segment

    def instance_scope(self, raw: dict[str, Any], index: Any) -> Scope:
        """The scope one copy of a declaration is evaluated in."""
        copy = raw.get("copy")
        if index is None or not isinstance(copy, dict):
            return self.scope
        return self.scope.child(copy_index=index, loops={**self.scope.loops, str(copy.get("name", "")): index})

    def module(self, key: str, raw: dict[str, Any], scope: Scope, index: Any) -> TemplateFrame | None:
        """The template instance one copy of a nested deployment deploys, built once."""
        cache_key = (key, _index_text(index) if index is not None else None)
        if cache_key in self._modules:
            return self._modules[cache_key]
        self._modules[cache_key] = None  # a module that (wrongly) refers to itself stops here
        module = self._build_module(key, raw, scope, index)
        self._modules[cache_key] = module
        return module

    def outputs(self) -> dict[str, Any]:
        """The template's outputs, ``{name: {"type": ..., "value": ...}}``, evaluated once.
        Secure outputs are never read."""
        if self._outputs is not None:
            return self._outputs
        self._outputs = {}
        raw = self.template.get("outputs")
        out: dict[str, Any] = {}
        for name, spec in raw.items() if isinstance(raw, dict) else []:
            if not isinstance(spec, dict):
                continue
            if is_secure(resolve_definition(self.template, spec)):
                value: Any = Unknown(f"secure output '{name}' is not read")
            elif isinstance(spec.get("copy"), dict):
                value = self._output_copy(spec["copy"])
            else:
                value = Evaluator(self.scope).value(spec.get("value"))
            out[str(name)] = {"type": spec.get("type"), "value": value}
        self._outputs = out
        return out

    def _output_copy(self, spec: dict[str, Any]) -> Any:
        count = Evaluator(self.scope).value(spec.get("count"))
        if not isinstance(count, int) or isinstance(count, bool) or not 0 <= count <= MAX_COPY:
            return Unknown("output copy count is not known")
        return [Evaluator(self.scope.child(copy_index=i)).value(spec.get("input")) for i in range(count)]

    def _build_module(self, key: str, raw: dict[str, Any], scope: Scope, index: Any) -> TemplateFrame | None:
        pointer = pointer_join(self.pointer, "resources", key)
        path = self.instance_path(key, index)
        if self.depth >= MAX_NESTING:
            self.session.warn(
                f"{self.document.path}: nested deployments deeper than {MAX_NESTING} at {pointer} were not evaluated"
            )
            return None
        properties = raw.get("properties")
        if not isinstance(properties, dict):
            return None
        ev = Evaluator(scope)
        placement = _placement(raw, ev, scope.placement, path)
        name = ev.value(raw.get("name", ""))
        deployment_name = name if isinstance(name, str) else str(name.symbol or f"{{{path}}}")
        template = properties.get("template")
        if isinstance(template, dict):
            document, location, template_pointer = (
                self.document,
                self.location,
                pointer_join(pointer, "properties", "template"),
            )
            options = properties.get("expressionEvaluationOptions")
            inner = isinstance(options, dict) and str(options.get("scope", "")).lower() == "inner"
        elif "templateLink" in properties:
            linked = self._linked(properties["templateLink"], ev, pointer, "template")
            if linked is None:
                return None
            document, location = linked
            template, template_pointer, inner = document.data, "", True
        else:
            return None
        common = (self.session, document, location, template, template_pointer, path, self.depth + 1, deployment_name)
        if inner:
            module = TemplateFrame(
                *common, supplied=self._module_parameters(properties, ev, pointer), placement=placement
            )
        else:  # outer scope: the parent's parameters and variables, the module's placement
            module = TemplateFrame(*common, scope=scope.child(placement=placement))
        module.ancestry = self.ancestry | {location.resolve()}
        return module

    def _module_parameters(self, properties: dict[str, Any], ev: Evaluator, pointer: str) -> dict[str, Any]:
        given = properties.get("parameters")
        if isinstance(given, str):  # the whole object as one expression
            given = ev.value(given)
        supplied: dict[str, Any] = {}
        if isinstance(given, dict):
            for name, entry in given.items():
                supplied[str(name)] = _parameter_entry(name, entry, ev)
        link = properties.get("parametersLink")
        if link is not None:
            linked = self._linked(link, ev, pointer, "parameters file")
            section = linked[0].data.get("parameters") if linked is not None else None
            for name, entry in section.items() if isinstance(section, dict) else []:
                if isinstance(entry, dict) and "reference" in entry:
                    supplied.setdefault(name, Unknown(SECRET_REFERENCE))
                elif isinstance(entry, dict) and "value" in entry:
                    supplied.setdefault(name, entry["value"])
        return supplied

    # -- linked templates ------------------------------------------------------------------

    def _linked(self, link: Any, ev: Evaluator, pointer: str, what: str) -> tuple[Document, Path] | None:
        """The file a ``templateLink`` or ``parametersLink`` names, read from beside the
        template; a coverage gap (the scan is incomplete) when it cannot be read."""
        where = f"{self.document.path}: linked {what} at {pointer}"
        if not isinstance(link, dict):
            self.session.gap(where, "the link is not an object")
            return None
        candidates, described = self._link_candidates(link, ev)
        if described is None:
            self.session.gap(where, "the link names no file (a template spec, or a uri not known before deploy)")
            return None
        inside = [c for c in candidates if any(c.resolve().is_relative_to(root) for root in self.session.roots)]
        found = next((c for c in inside if c.is_file()), None)
        if found is None:
            reason = "was not found beside the scanned template" if inside else "is outside the scanned folder"
            self.session.gap(where, f"{described} {reason}; not scanned")
            return None
        resolved = found.resolve()
        if resolved in self.ancestry:
            self.session.gap(where, f"{described} links back to a template that links to it; not scanned")
            return None
        document = self.session._documents.get(resolved)
        if document is None:
            display = os.path.normpath(
                os.path.join(os.path.dirname(self.document.path), os.path.relpath(found, self.location.parent))
            )
            try:
                document = load_document(found, display)
            except InputError as exc:
                self.session.gap(where, str(exc))
                return None
            self.session._documents[resolved] = document
        if what == "template" and not isinstance(document.data.get("resources"), (list, dict)):
            self.session.gap(where, f"{document.path} is not an ARM template")
            return None
        return document, found

    def _link_candidates(self, link: dict[str, Any], ev: Evaluator) -> tuple[list[Path], str | None]:
        base = self.location.parent
        relative = ev.value(link["relativePath"]) if "relativePath" in link else None
        if isinstance(relative, str):
            return [base / relative], relative
        uri = ev.value(link["uri"]) if "uri" in link else None
        if not isinstance(uri, str):
            return [], None
        parsed = urllib.parse.urlsplit(uri)
        shown = urllib.parse.urlunsplit((parsed.scheme, parsed.netloc, parsed.path, "", ""))  # no SAS token
        if parsed.scheme == "file":
            return [Path(urllib.parse.unquote(parsed.path))], shown
        parts = [p for p in urllib.parse.unquote(parsed.path).split("/") if p and p != ".."]
        if not parsed.scheme:
            return [base / urllib.parse.unquote(parsed.path)], shown
        # A template published next to this one: the longest tail of the URL path that exists here.
        return [base.joinpath(*parts[i:]) for i in range(len(parts))], shown

    # -- reference() lookup ----------------------------------------------------------------

    def _find(self, target: str) -> tuple[str, dict[str, Any], Any] | None:
        """The declaration (and copy index) ``reference(target)`` names: a symbolic name
        (``m``, ``m[2]``) in ``languageVersion`` 2.0, else a resource or deployment id or name."""
        resources = self.template.get("resources")
        if isinstance(resources, dict):
            match = _INDEXED.match(target)
            name, index = (match.group("name"), int(match.group("index"))) if match else (target, None)
            raw = resources.get(name)
            if raw is None:
                raw = next((v for k, v in resources.items() if str(k).lower() == name.lower()), None)
                name = next((str(k) for k in resources if str(k).lower() == name.lower()), name)
            if isinstance(raw, dict):
                return name, raw, index if isinstance(raw.get("copy"), dict) else None
        parsed = parse_resource_id(target) if target.startswith("/") else None
        wanted_type = (parsed.resource_type or "").lower() if parsed else None
        wanted_name = ((parsed.name_chain if parsed else target) or "").lower()
        for resource_type, resource_name, key, raw, index in self._named_declarations():
            if resource_name == wanted_name and (wanted_type is None or wanted_type == resource_type):
                return key, raw, index
        return None

    def _named_declarations(self) -> list[tuple[str, str, str, dict[str, Any], Any]]:
        """(type, name, key, declaration, copy index) of every declaration whose name evaluates."""
        if self._named is not None:
            return self._named
        self._named = []
        for key, raw in self.declarations():
            if not isinstance(raw, dict):
                continue
            copy = raw.get("copy")
            indexes: list[Any] = [None]
            if isinstance(copy, dict):
                count = Evaluator(self.scope).value(copy.get("count"))
                indexes = list(range(count)) if isinstance(count, int) and 0 <= count <= MAX_COPY else []
            for index in indexes:
                ev = Evaluator(self.instance_scope(raw, index))
                resource_type, name = ev.value(raw.get("type")), ev.value(raw.get("name"))
                if isinstance(resource_type, str) and isinstance(name, str):
                    self._named.append((resource_type.lower(), name.lower(), key, raw, index))
        return self._named


def _parameter_entry(name: str, entry: Any, ev: Evaluator) -> Any:
    """The value one module parameter entry supplies."""
    if isinstance(entry, str):
        entry = ev.value(entry)  # a whole entry as an expression: evaluates to {"value": ...}
        if isinstance(entry, Unknown):
            return Unknown(f"module parameter '{name}' is chosen by an expression not known before deploy")
        evaluated = True
    else:
        evaluated = False
    if isinstance(entry, dict):
        if "reference" in entry:
            return Unknown(SECRET_REFERENCE)
        if "value" in entry:
            return entry["value"] if evaluated else ev.value(entry["value"])
    return Unknown(f"module parameter '{name}' has no value")


def _placement(raw: dict[str, Any], ev: Evaluator, current: Placement, path: str) -> Placement:
    """Where a module deploys: its ``resourceGroup`` and ``subscriptionId``, else its parent's."""
    group = ev.value(raw["resourceGroup"]) if "resourceGroup" in raw else None
    subscription = ev.value(raw["subscriptionId"]) if "subscriptionId" in raw else None
    if group is None and subscription is None:
        return current
    return Placement(
        _placement_text(subscription, current.subscription, f"{{{path}:subscription}}"),
        _placement_text(group, current.resource_group, f"{{{path}:resourceGroup}}"),
    )


def _placement_text(value: Any, current: str, placeholder: str) -> str:
    if value is None:
        return current
    if isinstance(value, Unknown):
        return value.symbol or placeholder  # another group, not known: never the parent's
    return str(value)


def _is_deployment(raw: dict[str, Any], scope: Scope) -> bool:
    resource_type = Evaluator(scope).value(raw.get("type"))
    return isinstance(resource_type, str) and resource_type.lower() == T.DEPLOYMENT.lower()


def _index_text(index: Any) -> str:
    return "?" if isinstance(index, Unknown) else str(index)


def _short(target: str) -> str:
    return target if len(target) <= 120 else target[:117] + "..."


def root_frame(session: Session, document: Document, location: Path, parameters: ParameterFile) -> TemplateFrame:
    """The scanned template's own frame, with the parameters file's values."""
    return TemplateFrame(
        session, document, location, document.data, "", "", 0, ROOT_DEPLOYMENT, supplied=parameters.values
    )
