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
template, and only from inside the repository (or folder) the scanned template is in; one that
cannot be read is a coverage gap, and the scan is incomplete. So is a template that expands to
more than a scan will evaluate.
"""

from __future__ import annotations

import os
import re
import urllib.parse
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, NamedTuple

from scanner.errors import InputError
from scanner.model import azure_types as T
from scanner.model.jsondoc import Document, Where, deeper, expect, load_document, member, pointer_join
from scanner.model.resources import CoverageGap, parse_resource_id
from scanner.model.unknown import Unknown
from scanner.sources.arm.evaluator import (
    ROOT_DEPLOYMENT,
    Evaluator,
    Placement,
    Scope,
    require_copy_count,
)
from scanner.sources.arm.functions import Partial
from scanner.sources.arm.limits import MAX_COPY, MAX_RESOURCES, RefusedTemplate
from scanner.sources.arm.parameters import SECRET_REFERENCE, ParameterFile
from scanner.sources.arm.securetypes import SecretTypes, is_secure
from scanner.sources.arm.wellformed import require_arm_document

# ARM publishes no limit on how deep deployments nest; a scan stops at 20 levels (a coverage gap).
MAX_NESTING = 20
# What one scanned file may expand to (resources and module instances). ARM deploys at most 800
# resources per template; links that branch and rejoin can multiply far beyond that.
MAX_INSTANCES = 20_000


_COPIES = re.compile(r"\[(\d+|\?)\]")


class BudgetExceeded(Exception):
    """The scanned file expands to more instances than a scan evaluates."""


@dataclass
class Session:
    """What every template instance of one scanned file shares: the cloud, where warnings and
    coverage gaps go, the folder linked templates may be read from, and the instance budget."""

    cloud: str
    root: Path  # resolved; linked templates must lie under it
    warnings: list[str] = field(default_factory=list)
    coverage: list[CoverageGap] = field(default_factory=list)
    instances: int = 0
    budget: int = field(default_factory=lambda: MAX_INSTANCES)
    _said: set[str] = field(default_factory=set)
    _documents: dict[Path, Document] = field(default_factory=dict)
    # Which parameter and output types hold a secret, worked out once per template document.
    secrets: SecretTypes = field(default_factory=SecretTypes)

    def warn(self, message: str) -> None:
        if message not in self._said:
            self._said.add(message)
            self.warnings.append(message)

    def gap(self, scope: str, reason: str) -> None:
        gap = CoverageGap(scope, None, reason, kind="template")
        if gap not in self.coverage:
            self.coverage.append(gap)

    def spend(self) -> None:
        self.instances += 1
        if self.instances > self.budget:
            raise BudgetExceeded

    def document(self, path: Path, display: str) -> Document:
        """A linked file, read once however many modules link it."""
        resolved = path.resolve()
        if resolved not in self._documents:
            self._documents[resolved] = load_document(path, display)
        return self._documents[resolved]

    @property
    def linked(self) -> set[Path]:
        """The files read as linked templates or parameters files."""
        return set(self._documents)


class _Named(NamedTuple):
    """A declaration whose type and name evaluate, for ``reference()`` by id or name."""

    type: str
    name: str
    key: str
    raw: dict[str, Any]
    index: Any


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
        check_template(document, template, pointer)
        self.session = session
        self.document = document
        self.location = location  # the file on disk the template is in
        self.template = template
        self.pointer = pointer  # of the template object within its document
        self._path = path
        self.depth = depth
        self._deployment_name = deployment_name
        # Expressions evaluate in ``scope`` (an outer-scope module's is its parent's); the
        # resources deploy to ``placement``.
        self.scope = scope or Scope(
            template, supplied or {}, placement or Placement(), frame=self, secrets=session.secrets
        )
        self.placement = placement or self.scope.placement
        self.ancestry: frozenset[Path] = frozenset({location.resolve()})  # files up the chain of links
        self._template_uri = _file_uri(location, session.root)
        self._modules: dict[tuple[str, Any], TemplateFrame | None] = {}
        self._outputs: dict[str, Any] | None = None
        self._named: list[_Named] | None = None
        self.placeholders: set[str] = set()  # placeholder names given in this frame
        self.deployed = 0  # resources and modules this template deploys, copies counted
        # The template instance that deploys this one, and the key of the declaration that does.
        self.parent: TemplateFrame | None = None
        self.declared_as = ""
        self._dependencies: dict[str, set[str]] = {}

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
        return self._template_uri

    def warn(self, message: str) -> None:
        where = f" (module {self._path})" if self._path else ""
        self.session.warn(f"{self.document.path}: {message}{where}")

    def locate(self, *tokens: str | int) -> str:
        return f"{self.document.path}: at {pointer_join(self.pointer, *tokens)}"

    def count_deployed(self, pointer: str) -> None:
        """One more resource (or module) of this template: ARM deploys at most 800 from one
        template, copies counted (see `limits`)."""
        self.deployed += 1
        if self.deployed > MAX_RESOURCES:
            raise InputError(
                f"{self.document.path}: at {pointer}: the template deploys more than {MAX_RESOURCES} "
                f"resources (copies counted); ARM's limit is {MAX_RESOURCES} resources per template"
            )

    def reference(self, target: str, full: bool) -> Any:
        found = self._find(target)
        if found is None:
            return Unknown(f"reference('{_short(target)}') reads a resource this template does not deploy")
        if found.raw.get("existing") is True:
            return Unknown(f"reference('{_short(target)}') reads an existing resource's state")
        scope = self.instance_scope(found.raw, found.index)
        if _is_deployment(found.raw, scope):
            pointer = pointer_join(self.pointer, "resources", found.key)
            module = self.module(found.key, found.raw, scope, found.index, pointer)
            if module is None:
                return Unknown(f"module '{found.key}' could not be evaluated")
            outputs = Partial(outputs=module.outputs())
            return Partial(properties=outputs) if full else outputs
        if not full:
            return Unknown(f"reference('{_short(target)}') reads the deployed resource's state")
        ev = Evaluator(scope)
        known = Partial(type=ev.value(found.raw.get("type")), name=ev.value(found.raw.get("name")))
        if "location" in found.raw:
            known["location"] = ev.value(found.raw["location"])
        return known

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

    def module(self, key: str, raw: dict[str, Any], scope: Scope, index: Any, pointer: str) -> TemplateFrame | None:
        """The template instance one copy of a nested deployment deploys, built once."""
        cache_key = (key, _index_text(index) if index is not None else None)
        if cache_key in self._modules:
            return self._modules[cache_key]
        self._modules[cache_key] = None  # a module that (wrongly) refers to itself stops here
        module = self._build_module(key, raw, scope, index, pointer)
        self._modules[cache_key] = module
        return module

    def outputs(self) -> dict[str, Any]:
        """The template's outputs, ``{name: {"type": ..., "value": ...}}``, evaluated once.
        Secure outputs, and the secure members of an output's type, are never read; while they
        are being evaluated (a cycle) they are unknown."""
        if self._outputs is not None:
            return self._outputs
        self._outputs = Partial()
        raw = self.template.get("outputs")
        out: dict[str, Any] = {}
        for name, spec in raw.items() if isinstance(raw, dict) else []:
            if not isinstance(spec, dict):
                continue
            if is_secure(self.template, spec):
                value: Any = Unknown(f"secure output '{name}' is not read")
            else:
                copy = spec.get("copy")
                evaluated = (
                    self._output_copy(copy, name)
                    if isinstance(copy, dict)
                    else Evaluator(self.scope).value(spec.get("value"))
                )
                value = self.session.secrets.hide(self.template, spec, evaluated, name)
            out[str(name)] = {"type": spec.get("type"), "value": value}
        self._outputs = out
        return out

    def _output_copy(self, spec: dict[str, Any], name: str) -> Any:
        count = Evaluator(self.scope).value(spec.get("count"))
        if not isinstance(count, int) or isinstance(count, bool):
            return Unknown("output copy count is not known")
        try:
            require_copy_count(count, f"of output '{name}'", spec.get("count"))
        except RefusedTemplate as exc:
            raise InputError(f"{self.locate('outputs', name, 'copy', 'count')}: {exc}") from None
        return [Evaluator(self.scope.child(copy_index=i)).value(spec.get("input")) for i in range(count)]

    def _build_module(
        self, key: str, raw: dict[str, Any], scope: Scope, index: Any, pointer: str
    ) -> TemplateFrame | None:
        path = self.instance_path(key, index)
        # One gap for a declaration, however many copies of it (or of its parents) there are.
        where = f"{self.document.path}: module {_COPIES.sub('', path)} at {pointer}"
        if self.depth >= MAX_NESTING:
            self.session.gap(where, f"nested deployments deeper than {MAX_NESTING} levels were not evaluated")
            return None
        properties = raw.get("properties")
        if not isinstance(properties, dict):
            self.session.gap(where, "the deployment has no properties")
            return None
        self.session.spend()
        ev = Evaluator(scope)
        placement = _placement(raw, ev, scope.placement, path)
        name = ev.value(raw.get("name", ""))
        deployment_name = name if isinstance(name, str) else str(name.symbol or f"{{{path.replace('/', '.')}}}")
        template = properties.get("template")
        if isinstance(template, str):  # Bicep's loadJsonContent(): a variable holds the template
            template = ev.value(template)
            if not isinstance(template, dict):
                self.session.gap(where, "the deployment's template is an expression not known before deploy")
                return None
        if isinstance(template, dict):
            document, location, template_pointer = (
                self.document,
                self.location,
                pointer_join(pointer, "properties", "template"),
            )
            options = properties.get("expressionEvaluationOptions")
            scope_option = str(options.get("scope", "")).lower() if isinstance(options, dict) else ""
            # Parameters can only be given to a template evaluated in its own scope.
            inner = scope_option == "inner" or bool(properties.get("parameters"))
        elif "templateLink" in properties:
            linked = self._linked(properties["templateLink"], ev, where, "template")
            if linked is None:
                return None
            document, location = linked
            template, template_pointer, inner = document.data, "", True
        else:
            self.session.gap(where, "the deployment has neither a template nor a templateLink")
            return None
        common = (self.session, document, location, template, template_pointer, path, self.depth + 1, deployment_name)
        if inner:
            supplied = self._module_parameters(properties, ev, where)
            module = TemplateFrame(*common, supplied=supplied, placement=placement)
        else:  # outer scope: the parent's expressions (and resource group), the module's placement
            module = TemplateFrame(*common, scope=scope, placement=placement)
        module.ancestry = self.ancestry | {location.resolve()}
        module.parent, module.declared_as = self, key
        return module

    def _module_parameters(self, properties: dict[str, Any], ev: Evaluator, where: str) -> dict[str, Any]:
        given = properties.get("parameters")
        evaluated = isinstance(given, str)
        if evaluated:  # the whole object as one expression
            given = ev.value(given)
        supplied: dict[str, Any] = {}
        if isinstance(given, dict):
            for name, entry in given.items():
                supplied[str(name)] = _parameter_entry(name, entry, ev, evaluated)
        link = properties.get("parametersLink")
        if link is not None:
            linked = self._linked(link, ev, where, "parameters file")
            section = linked[0].data.get("parameters") if linked is not None else None
            for name, entry in section.items() if isinstance(section, dict) else []:
                if isinstance(entry, dict) and "reference" in entry:
                    supplied.setdefault(name, Unknown(SECRET_REFERENCE))
                elif isinstance(entry, dict) and "value" in entry:
                    supplied.setdefault(name, entry["value"])
        return supplied

    # -- linked templates ------------------------------------------------------------------

    def _linked(self, link: Any, ev: Evaluator, where: str, what: str) -> tuple[Document, Path] | None:
        """The file a ``templateLink`` or ``parametersLink`` names, read from beside the
        template; a coverage gap (the scan is incomplete) when it cannot be read."""
        where = f"{where}: linked {what}"
        if not isinstance(link, dict):
            self.session.gap(where, "the link is not an object")
            return None
        candidates, described = self._link_candidates(link, ev, relative_allowed=what == "template")
        if described is None:
            self.session.gap(where, "the link names no file here (a template spec, or a uri not known before deploy)")
            return None
        try:
            inside = [c for c in candidates if c.resolve().is_relative_to(self.session.root)]
            found = next((c for c in inside if c.is_file()), None)
        except (OSError, ValueError) as exc:
            self.session.gap(where, f"{described} cannot be opened: {exc}")
            return None
        if found is None:
            outside = len(inside) < len(candidates)
            reason = "is outside the scanned repository" if outside else "was not found beside the scanned template"
            self.session.gap(where, f"{described} {reason}; not scanned")
            return None
        if found.resolve() in self.ancestry:
            self.session.gap(where, f"{described} links back to a template that links to it; not scanned")
            return None
        try:
            document = self.session.document(found, self._display(found))
        except InputError as exc:
            self.session.gap(where, str(exc))
            return None
        require_arm_document(document)  # a linked template ARM would refuse is refused here too
        if urllib.parse.urlsplit(described).scheme in ("http", "https"):
            self.session.warn(f"{where}: {described} was read from {document.path}")
        if what == "template" and not isinstance(document.data.get("resources"), (list, dict)):
            self.session.gap(where, f"{document.path} is not an ARM template")
            return None
        return document, found

    def _display(self, found: Path) -> str:
        """How reports name a linked file: relative to the file that links it, as given."""
        relative = os.path.relpath(found.resolve(), self.location.resolve().parent)
        return os.path.normpath(os.path.join(os.path.dirname(self.document.path), relative))

    def _link_candidates(
        self, link: dict[str, Any], ev: Evaluator, relative_allowed: bool
    ) -> tuple[list[Path], str | None]:
        base = self.location.parent
        relative = ev.value(link["relativePath"]) if relative_allowed and "relativePath" in link else None
        if isinstance(relative, str):
            return [base / relative], relative
        uri = ev.value(link["uri"]) if "uri" in link else None
        if not isinstance(uri, str):
            return [], None
        parsed = urllib.parse.urlsplit(uri)
        shown = urllib.parse.urlunsplit((parsed.scheme, parsed.netloc, parsed.path, "", ""))  # no SAS token
        path = urllib.parse.unquote(parsed.path)
        if parsed.scheme == "file":  # deployment().properties.templateLink.uri: relative to the root
            return [self.session.root / path.lstrip("/")], path.lstrip("/")
        if not parsed.scheme:
            return [base / path], shown
        # A template published next to this one: a tail of the URL path (its file and at least
        # one folder) that exists here, longest first.
        parts = [p for p in path.split("/") if p and p != ".."]
        return [base.joinpath(*parts[i:]) for i in range(max(len(parts) - 1, 0))], shown

    # -- deployment order ------------------------------------------------------------------

    def follows(self, later: str, earlier: str) -> bool:
        """Whether ARM deploys declaration ``later`` (a key, ``search`` or a child's ``account/0``)
        only after ``earlier`` has been deployed: through ``dependsOn``, directly or not, or as a
        child declared inside it. Declarations with no such path between them deploy in parallel."""
        seen: set[str] = set()
        pending = [later]
        while pending:
            key = pending.pop()
            for dependency in self.dependencies(key):
                if dependency == earlier:
                    return True
                if dependency not in seen:
                    seen.add(dependency)
                    pending.append(dependency)
        return False

    def dependencies(self, key: str) -> set[str]:
        """The declarations one waits for: its parent, for a child declared inside it, and what
        its ``dependsOn`` names (a symbolic name, a resource name or id, a module), found as
        ``reference()`` finds them."""
        if key in self._dependencies:
            return self._dependencies[key]
        self._dependencies[key] = found = set()
        head, _, child = key.rpartition("/")
        if child.isdigit() and head:
            found.add(head)
        raw = self._declaration_at(key)
        depends = raw.get("dependsOn") if raw is not None else None
        for entry in depends if isinstance(depends, list) else []:
            target = Evaluator(self.scope).value(entry)
            if isinstance(target, Unknown) and target.symbol is not None:
                target = target.symbol
            named = self._find(target) if isinstance(target, str) else None
            if named is not None:
                found.add(named.key)
        return found

    def _declaration_at(self, key: str) -> dict[str, Any] | None:
        """The declaration a key names: a top-level one, or a child by its indexes (``account/0``)."""
        top, *indexes = key.split("/")
        raw = dict(self.declarations()).get(top)
        for index in indexes:
            children = raw.get("resources") if isinstance(raw, dict) else None
            raw = children[int(index)] if isinstance(children, list) and int(index) < len(children) else None
        return raw if isinstance(raw, dict) else None

    # -- reference() lookup ----------------------------------------------------------------

    def _find(self, target: str) -> _Named | None:
        """The declaration (and copy index) ``reference(target)`` names: a symbolic name
        (``m``, ``m[2]``) in ``languageVersion`` 2.0, else a resource or deployment id or name
        (a bare name prefers a deployment)."""
        return self._find_symbolic(target) or self._find_declared(target)

    def _find_symbolic(self, target: str) -> _Named | None:
        """A ``languageVersion`` 2.0 symbolic name, exact or else in any case."""
        resources = self.template.get("resources")
        if not isinstance(resources, dict):
            return None
        name, index = _split_index(target)
        key = name if name in resources else next((str(k) for k in resources if str(k).lower() == name.lower()), None)
        raw = resources.get(key) if key is not None else None
        if key is None or not isinstance(raw, dict):
            return None
        return _Named("", name, key, raw, index if isinstance(raw.get("copy"), dict) else None)

    def _find_declared(self, target: str) -> _Named | None:
        """A declaration by resource id (type and name) or by name alone, a deployment first:
        ``reference('storage')`` most often means a module's outputs."""
        parsed = parse_resource_id(target) if target.startswith("/") else None
        wanted_type = (parsed.resource_type or "").lower() if parsed else None
        wanted_name = ((parsed.name_chain if parsed else target) or "").lower()
        matches = [d for d in self._named_declarations() if d.name == wanted_name and wanted_type in (None, d.type)]
        deployments = [d for d in matches if d.type == T.DEPLOYMENT.lower()]
        return next(iter(deployments or matches), None)

    def _named_declarations(self) -> list[_Named]:
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
                indexes = list(range(min(count, MAX_COPY))) if isinstance(count, int) and count >= 0 else []
            for index in indexes:
                ev = Evaluator(self.instance_scope(raw, index))
                resource_type, name = ev.value(raw.get("type")), ev.value(raw.get("name"))
                if isinstance(name, Unknown) and name.symbol is not None:  # {deploymentName}-storage
                    name = name.symbol
                if isinstance(resource_type, str) and isinstance(name, str):
                    self._named.append(_Named(resource_type.lower(), name.lower(), key, raw, index))
        return self._named


# The template sections and their JSON types, as the template syntax reference gives them
# (https://learn.microsoft.com/azure/azure-resource-manager/templates/syntax): ``functions`` is
# an array of namespaces, the others are objects keyed by name.
_SECTIONS: tuple[tuple[str, type], ...] = (
    ("parameters", dict),
    ("variables", dict),
    ("outputs", dict),
    ("definitions", dict),
    ("functions", list),
)


def check_template(document: Document, template: dict[str, Any], pointer: Where) -> None:
    """Refuse a template whose sections do not have the JSON types ARM requires, naming the
    first wrong one (`expect`): a ``"resources": 5`` must not scan as a template with nothing in
    it. ``resources`` is an array, or in ``languageVersion`` 2.0 an object keyed by symbolic name;
    each parameter and output an object, a parameter's ``type`` a string."""
    resources = template.get("resources")
    if resources is not None and type(resources) is not list and type(resources) is not dict:
        symbolic = str(template.get("languageVersion", "")).startswith("2")
        expect(document, resources, dict if symbolic else list, deeper(pointer, "resources"))
    for section, kind in _SECTIONS:
        member(document, template, section, kind, pointer)
    for name, definition in (template.get("parameters") or {}).items():
        if type(definition) is not dict or type(definition.get("type", "")) is not str:  # no pointer built if not
            where = deeper(pointer, "parameters", name)
            member(document, expect(document, definition, dict, where), "type", str, where)
    for name, output in (template.get("outputs") or {}).items():
        if type(output) is not dict:
            expect(document, output, dict, deeper(pointer, "outputs", name))
    for i, group in enumerate(template.get("functions") or []):
        expect(document, group, dict, deeper(pointer, "functions", i))


def _split_index(target: str) -> tuple[str, int | None]:
    """``m[2]`` is copy 2 of ``m``; any other target is a name alone."""
    if target.endswith("]") and "[" in target:
        head, _, tail = target[:-1].rpartition("[")
        if tail.isdigit():
            return head, int(tail)
    return target, None


def _parameter_entry(name: str, entry: Any, ev: Evaluator, evaluated: bool) -> Any:
    """The value one module parameter entry supplies (``evaluated``: it is already a value)."""
    if isinstance(entry, str) and not evaluated:
        entry = ev.value(entry)  # a whole entry as an expression: evaluates to {"value": ...}
        if isinstance(entry, Unknown):
            return Unknown(f"module parameter '{name}' is chosen by an expression not known before deploy")
        evaluated = True
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
    segment = path.replace("/", ".")
    return Placement(
        _placement_text(subscription, current.subscription, f"{{{segment}:subscription}}"),
        _placement_text(group, current.resource_group, f"{{{segment}:resourceGroup}}"),
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


def _file_uri(location: Path, root: Path) -> str:
    """``deployment().properties.templateLink.uri``: the template's place in the repository as
    a file URI relative to its root, so that values built from it name no path of this machine."""
    resolved = location.resolve()
    relative = resolved.relative_to(root) if resolved.is_relative_to(root) else PurePosixPath(resolved.name)
    return "file:///" + urllib.parse.quote(PurePosixPath(relative).as_posix())


def sandbox_root(location: Path) -> Path:
    """The folder linked templates may be read from: the repository the scanned template is in
    (the nearest folder holding ``.git``), else the template's own folder."""
    folder = location.resolve().parent
    for candidate in (folder, *folder.parents):
        if (candidate / ".git").exists():
            return candidate
    return folder


def root_frame(session: Session, document: Document, location: Path, parameters: ParameterFile) -> TemplateFrame:
    """The scanned template's own frame, with the parameters file's values."""
    return TemplateFrame(
        session, document, location, document.data, "", "", 0, ROOT_DEPLOYMENT, supplied=parameters.values
    )
