"""ARM templates and compiled Bicep: evaluated into ARM-shaped resources.

Handles the array ``resources`` of classic templates and the symbolic-name object of
``languageVersion: 2.0``, resource ``copy`` loops and ``condition``, child resources declared
inside their parent, and nested deployments, inline or linked (see `deployments`), with their own
resource group. ``existing`` resources are references, not deployments, and are skipped.

Three things a template may leave open before deploy, and how the scan treats them:

- **A name that cannot be evaluated.** Each declaration, and each copy of it, gets its own
  placeholder id built from its declaration chain (``{hub.workspace}``), so two such resources
  never merge; reports show its known text with each unknown part named in braces
  (``oai-{seed}``, ``{hub:pools[…].name}``).
- **A condition that cannot be evaluated** (its own, an enclosing module's, or an unknown copy
  count). The resource may not exist: it is scanned, but its findings are undetermined, with the
  condition as the reason.
- **A linked template that cannot be read**: a coverage gap; the scan is incomplete.

A resource id deployed more than once in the tree is judged in the state ARM ends with (see
`TemplateReader.final_states`).
"""

from __future__ import annotations

import dataclasses
import hashlib
import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from scanner.errors import InputError
from scanner.model import azure_types as T
from scanner.model.jsondoc import Document, deeper, expect, expect_items, member, pointer_join
from scanner.model.resources import CoverageGap, Origin, Resource
from scanner.model.unknown import Unknown
from scanner.sources.arm.deployments import (
    BudgetExceeded,
    Session,
    TemplateFrame,
    root_frame,
    sandbox_root,
)
from scanner.sources.arm.evaluator import (
    Evaluator,
    Placement,
    Scope,
    require_copy_count,
)
from scanner.sources.arm.expressions import Call, ExpressionError, Index, Literal, Member, Node, is_expression, parse
from scanner.sources.arm.limits import RefusedTemplate, budget
from scanner.sources.arm.parameters import TemplateOptions, placeholder_warning
from scanner.sources.arm.securetypes import resolve_definition
from scanner.sources.arm.wellformed import require_arm_document, require_read_shape

_BODY_KEYS = (
    "location",
    "kind",
    "sku",
    "identity",
    "tags",
    "properties",
    "zones",
    "plan",
    "extendedLocation",
    "managedBy",
    "apiVersion",
)
_MARK = "\x00"  # stands for an unknown part while a name is split into its segments


@dataclass(frozen=True)
class _Parent:
    """A resource whose ``resources`` array declares children: its type and name chains."""

    type: str
    key: str  # the name chain its id is built from
    display: str


@dataclass(frozen=True)
class _Name:
    display: str  # what reports show
    key: str  # the name chain the id is built from (a placeholder where unknown)
    body: Any  # the resource's own ``name``


class TemplateReader:
    """Evaluates one template document and the templates it deploys, inline or linked."""

    def __init__(self, doc: Document, location: Path, options: TemplateOptions) -> None:
        self.doc = doc
        self.location = location
        self.options = options
        self.session = Session(options.cloud, sandbox_root(location))
        self.evaluated: list[Resource] = []
        self._declared_in: dict[Resource, tuple[TemplateFrame, str]] = {}  # the frame and key

    @property
    def warnings(self) -> list[str]:
        return self.session.warnings

    @property
    def coverage(self) -> list[CoverageGap]:
        return self.session.coverage

    @property
    def linked(self) -> set[Path]:
        """Files read as linked templates or parameters files (resolved)."""
        return self.session.linked

    def resources(self) -> Iterator[Resource]:
        """The template's resources. A template ARM would refuse, or one that needs more work than
        a scan gives an input (see `limits`), ends the scan of the file: `InputError`, naming the
        file and the JSON path."""
        require_arm_document(self.doc)
        root = root_frame(self.session, self.doc, self.location, self.options.parameters)
        self._check_parameters()
        try:
            with budget():
                yield from self._template(root, None)
        except RefusedTemplate as exc:  # raised where no part of the template was being read
            raise InputError(f"{self.doc.path}: {exc}") from None
        except BudgetExceeded:
            self.session.gap(
                f"{self.doc.path}",
                f"the template expands to more than {self.session.budget:,} resources and module instances "
                "(ARM deploys at most 800 resources per template); the rest was not evaluated",
            )

    def final_states(self, resources: list[Resource]) -> list[Resource]:
        """The resources as ARM leaves them when one id is deployed more than once in the tree
        (a Search service declared bare, then again, hardened, by a module that depends on it).

        Each deployment PUTs the whole resource, and a later PUT replaces the body an earlier
        one wrote, so the declaration ARM deploys last is the state to judge, and findings point
        at it. "Last" is dependency order (`TemplateFrame.follows`); one that may not be deployed
        (an unknown condition) leaves the earlier one standing, on the condition that it is not.
        Declarations with no order between them deploy in parallel: both are judged, with a
        warning. Resources declared inside the one replaced are not part of its body: they stay.
        """
        groups: dict[str, list[Resource]] = {}
        for resource in resources:
            groups.setdefault(resource.id.lower(), []).append(resource)
        if len(groups) == len(resources):
            return resources
        replaced: set[Resource] = set()
        for group in groups.values():
            if len(group) > 1:
                replaced |= self._replaced(group)
        return [r for r in resources if r not in replaced]

    def _replaced(self, group: list[Resource]) -> set[Resource]:
        """The declarations of one id that a later one replaces; those that a later one only may
        replace get its condition's negation as theirs."""
        gone: set[Resource] = set()
        unless: dict[Resource, list[str]] = {}
        for i, first in enumerate(group):
            for second in group[i + 1 :]:
                last = self._deployed_last(first, second)
                if last is None:
                    self.session.warn(
                        f"{self.doc.path}: {first.type} {first.name} is declared at {self._where(first)} and at "
                        f"{self._where(second)} with no dependsOn between them; ARM may deploy either last, so both "
                        "are judged"
                    )
                    continue
                earlier = second if last is first else first
                if last.origin.condition is None:
                    gone.add(earlier)
                else:
                    where, condition = self._where(last), last.origin.condition
                    reason = f"the later declaration at {where} is not deployed (it is if {condition})"
                    unless.setdefault(earlier, []).append(reason)
        for earlier, reasons in unless.items():
            if earlier not in gone:
                condition = _both(earlier.origin.condition, " and ".join(reasons))
                earlier.origin = dataclasses.replace(earlier.origin, condition=condition)
        return gone

    def _deployed_last(self, a: Resource, b: Resource) -> Resource | None:
        """Which of two declarations ARM deploys last, or None when nothing orders them: they are
        compared where their chains of modules part, in the template instance both are in."""
        for (frame_a, key_a), (frame_b, key_b) in zip(self._chain(a), self._chain(b), strict=False):
            if frame_a is not frame_b:
                return None  # two copies of one module deploy in parallel
            if key_a == key_b:
                continue
            if frame_a.follows(key_b, key_a):
                return b
            return a if frame_a.follows(key_a, key_b) else None
        return None  # copies of one declaration

    def _where(self, resource: Resource) -> str:
        """A declaration's place, as messages name it: its JSON pointer, and its file when linked."""
        origin = resource.origin
        return origin.pointer if origin.file == self.doc.path else f"{origin.file} {origin.pointer}"

    def _chain(self, resource: Resource) -> list[tuple[TemplateFrame, str]]:
        """The template instances from the scanned one down to the resource's, each with the key
        of the declaration that leads on (the module, then the resource itself)."""
        frame, key = self._declared_in[resource]
        chain = [(frame, key)]
        while frame.parent is not None:
            chain.append((frame.parent, frame.declared_as))
            frame = frame.parent
        return chain[::-1]

    def _check_parameters(self) -> None:
        """Warn about parameters-file entries the template does not declare, and say how azd
        placeholders resolved (never showing a secure parameter's value)."""
        given = self.options.parameters
        declared = self.doc.data.get("parameters") or {}  # an object: `check_template` saw to it
        names = {str(k).lower() for k in declared}
        for name in given.values:
            if name.lower() not in names:
                self.session.warn(
                    f"{given.path or 'parameters'}: parameter '{name}' is not declared by {self.doc.path}; ignored"
                )
        shown = {str(k).lower() for k, v in declared.items() if not self.session.secrets.holds(self.doc.data, v)}
        defaulted = {
            str(k).lower() for k, v in declared.items() if "defaultValue" in resolve_definition(self.doc.data, v)
        }
        line = placeholder_warning(given, shown, defaulted)
        if line:
            self.session.warn(line)

    def _template(self, frame: TemplateFrame, condition: str | None) -> Iterator[Resource]:
        for key, raw in frame.declarations():
            pointer = pointer_join(frame.pointer, "resources", key)
            try:
                yield from self._declaration(frame, key, raw, pointer, frame.scope, None, condition)
            except RefusedTemplate as exc:
                raise InputError(f"{frame.document.path}: at {pointer}: {exc}") from None

    def _declaration(
        self,
        frame: TemplateFrame,
        key: str,
        raw: Any,
        pointer: str,
        scope: Scope,
        parent: _Parent | None,
        condition: str | None,
    ) -> Iterator[Resource]:
        raw = expect(frame.document, raw, dict, pointer)
        expect(frame.document, raw.get("type"), str, deeper(pointer, "type"))
        if raw.get("existing") is True or "import" in raw or "extension" in raw:
            return
        _check_declaration(frame.document, raw, pointer)
        copy = raw.get("copy")
        if not isinstance(copy, dict):
            yield from self._instance(frame, key, raw, pointer, scope, parent, condition, None)
            return
        count = Evaluator(scope).value(copy.get("count"))
        loop = str(copy.get("name", ""))
        if isinstance(count, Unknown):
            frame.session.warn(f"{frame.document.path}: copy count at {pointer} is unknown; evaluated one instance")
            index: Any = Unknown("copy index of a loop whose count is unknown")
            looped = scope.child(copy_index=index, loops={**scope.loops, loop: index})
            doubt = _both(condition, f"its copy count {_expression(copy.get('count'))} is above zero")
            yield from self._instance(frame, key, raw, pointer, looped, parent, doubt, index)
            return
        if not isinstance(count, int) or isinstance(count, bool):
            return
        try:
            require_copy_count(count, f"'{loop}'", copy.get("count"))
        except RefusedTemplate as exc:
            where = pointer_join(pointer, "copy", "count")
            raise InputError(f"{frame.document.path}: at {where}: {exc}") from None
        for i in range(count):
            looped = scope.child(copy_index=i, loops={**scope.loops, loop: i})
            yield from self._instance(frame, key, raw, pointer, looped, parent, condition, i)

    def _instance(
        self,
        frame: TemplateFrame,
        key: str,
        raw: dict[str, Any],
        pointer: str,
        scope: Scope,
        parent: _Parent | None,
        condition: str | None,
        index: Any,
    ) -> Iterator[Resource]:
        ev = Evaluator(scope)
        deployed, condition = _deploy_condition(raw, ev, condition)
        if not deployed:
            return
        resource_type = ev.value(raw["type"])
        if not isinstance(resource_type, str):
            frame.session.warn(f"{frame.document.path}: type of the resource at {pointer} cannot be evaluated; skipped")
            return
        require_read_shape(frame.document, resource_type, raw, pointer, expressions=True)
        instance = frame.instance_path(key, index)
        frame.count_deployed(pointer)
        if resource_type.lower() == T.DEPLOYMENT.lower():
            module = frame.module(key, raw, scope, index, pointer)
            if module is not None:
                yield from self._template(module, condition)
            return
        frame.session.spend()
        if parent is not None and ("/" not in resource_type or resource_type.lower().startswith("providers/")):
            resource_type = f"{parent.type}/{resource_type}"
        symbolic = isinstance(frame.template.get("resources"), dict) and parent is None
        placeholder = _placeholder(frame, instance if symbolic else None, raw, resource_type, index)
        name = _naming(raw.get("name", ""), ev, resource_type, parent, placeholder)
        resource_id = _resource_id(raw, ev, frame.placement, resource_type, name.key)
        judged_type = _extension_type(resource_type, name.key)
        body: dict[str, Any] = {"name": name.body, "type": judged_type}
        body.update((k, ev.value(raw[k])) for k in _BODY_KEYS if k in raw)
        body["id"] = resource_id
        resource = Resource(
            id=resource_id,
            type=judged_type,
            name=name.display,
            body=body,
            origin=Origin(
                kind="arm",
                file=frame.document.path,
                pointer=pointer,
                document=frame.document,
                symbolic_name=key if symbolic else None,
                condition=condition,
                instance=instance,
            ),
            key_name=name.key if name.key != name.display else None,
        )
        self._declared_in[resource] = (frame, key)
        yield resource
        here = _Parent(resource_type, name.key, name.display)
        yield from self._children(frame, key, raw, pointer, scope, here, condition)

    def _children(
        self,
        frame: TemplateFrame,
        key: str,
        raw: dict[str, Any],
        pointer: str,
        scope: Scope,
        parent: _Parent,
        condition: str | None,
    ) -> Iterator[Resource]:
        """The child resources a declaration lists in its own ``resources`` array."""
        children = raw.get("resources")
        for i, child in enumerate(children if isinstance(children, list) else []):
            child_pointer = pointer_join(pointer, "resources", i)
            yield from self._declaration(frame, f"{key}/{i}", child, child_pointer, scope, parent, condition)


# A declaration's members and the JSON types they may have, the first the one an error names,
# from the template syntax reference
# (https://learn.microsoft.com/azure/azure-resource-manager/templates/resource-declaration):
# each member ARM lets an expression produce may also be an expression string, such as
# Bicep's ``"properties": "[union(...)]"`` (see ../shared/reference/arm-templates.md §2).
_DECLARED: dict[str, tuple[type, ...]] = {
    "apiVersion": (str,),
    "name": (str,),
    "copy": (dict,),
    "dependsOn": (list,),
    "resources": (list,),
    "condition": (bool, str),
    "properties": (dict, str),
    "tags": (dict, str),
    "sku": (dict, str),
    "identity": (dict, str),
}


def _check_declaration(doc: Document, raw: dict[str, Any], pointer: str) -> None:
    """Refuse a resource declaration whose members do not have the JSON types ARM requires,
    naming the first wrong one, before anything reads them: a ``"copy": "x"`` or a
    ``"condition": [1]`` must not quietly deploy one instance or none. Null is taken as absent,
    as `member` takes it."""
    for key, value in raw.items():  # a declaration's few members, not the table's: the hot path
        allowed = _DECLARED.get(key)
        if allowed is not None and type(value) not in allowed and value is not None:
            expect(doc, value, allowed[0], deeper(pointer, key))
    copy = raw.get("copy")
    if copy is not None:
        member(doc, copy, "name", str, deeper(pointer, "copy"))
        count = copy.get("count")  # an integer, or an expression that evaluates to one
        if count is not None and (type(count) is bool or not isinstance(count, int | float | str)):
            expect(doc, count, int, deeper(pointer, "copy", "count"))
    depends = raw.get("dependsOn")
    if depends:
        expect_items(doc, depends, str, deeper(pointer, "dependsOn"))


def _deploy_condition(raw: dict[str, Any], ev: Evaluator, outer: str | None) -> tuple[bool, str | None]:
    """Whether a declaration may be deployed, and the condition nobody knows before deploy that it
    then depends on: the enclosing one, joined with its own when its own cannot be evaluated."""
    if "condition" not in raw:
        return True, outer
    decided = ev.value(raw["condition"])
    if isinstance(decided, Unknown):
        return True, _both(outer, f"{_expression(raw['condition'])} is true")
    return _truthy(decided), outer


def _placeholder(
    frame: TemplateFrame, instance: str | None, raw: dict[str, Any], resource_type: str, index: Any
) -> str:
    """The id segment of a name that cannot be evaluated, unique to its declaration and copy,
    and stable when other resources move: the symbolic chain (``{hub.workspace}``), or, in an
    array of resources, a digest of the type and name expression (``{3f2a9c1b}``)."""
    if instance is None:
        digest = hashlib.sha256(f"{resource_type}|{raw.get('name')}".encode()).hexdigest()[:8]
        own = digest if index is None else f"{digest}[{'?' if isinstance(index, Unknown) else index}]"
        instance = f"{frame.path}/{own}" if frame.path else own
    text = "{" + instance.replace("/", ".") + "}"
    while text in frame.placeholders:  # the same type and expression twice in one array
        text = text[:-1] + "'}"
    frame.placeholders.add(text)
    return text


_HASHED = re.compile(r"\{([a-z0-9]+):[0-9a-f]{8}\}")


def _naming(raw_name: Any, ev: Evaluator, resource_type: str, parent: _Parent | None, placeholder: str) -> _Name:
    """The resource's name for display, and the name chain its id is built from.

    A name known before deploy, or built only from symbolic unknowns (``st{name}``), is both;
    one built with other functions of unknowns is keyed by a digest of the call and shown without
    it (``sa{uniquestring(…)}``). Otherwise each segment that cannot be evaluated becomes the
    declaration's placeholder in the key, and the display names what it is read from (see
    `_readable`). A child's segments that can be evaluated still link it to its parent.
    """
    value = ev.value(raw_name)
    if isinstance(value, Unknown) and value.symbol is not None:
        display, key = _shown_symbol(value.symbol), value.symbol
        body: Any = value.symbol.rsplit("/", 1)[-1]
    elif isinstance(value, str):
        display = key = value
        body = value.rsplit("/", 1)[-1]
    else:
        node = _name_call(raw_name)
        values = [ev.node_value(arg) for arg in node.args] if node is not None else []
        display = _readable(raw_name, node, values, ev)
        key = _placeholder_chain(node, values, placeholder)
        body = value
    if parent is not None and resource_type.count("/") - 1 > key.count("/"):
        key = f"{parent.key}/{key}"
        display = f"{parent.display}/{display}"
    return _Name(display, key, body)


def _shown_symbol(symbol: str) -> str:
    """A symbol as reports show it: a digest of a call as the call (``{uniquestring(…)}``)."""
    return _HASHED.sub(r"{\1(…)}", symbol)


def _placeholder_chain(node: Call | None, values: list[Any], placeholder: str) -> str:
    """The name chain of a name that cannot be evaluated, keeping the segments that can:
    ``format('{0}/{1}', parameters('ws'), x)`` with ``ws`` known keeps the workspace's name."""
    text = _partial_name(node, values)
    if text is None:
        return placeholder
    segments = text.split("/")
    unknown = [i for i, s in enumerate(segments) if _MARK in s]
    if len(unknown) == 1:
        segments[unknown[0]] = placeholder
    else:
        for n, i in enumerate(unknown):
            segments[i] = placeholder[:-1] + f"#{n}}}"
    return "/".join(segments)


def _partial_name(node: Call | None, values: list[Any]) -> str | None:
    """A ``format()`` or ``concat()`` name with each unknown argument replaced by a mark."""
    if node is None:
        return None
    return _filled(node, [_marked(v) for v in values])


def _filled(node: Call, parts: list[Any]) -> str | None:
    """What ``format()`` or ``concat()`` makes of name pieces; None unless each is text or a number."""
    if not all(isinstance(p, (str, int)) and not isinstance(p, bool) for p in parts):
        return None
    if node.name == "concat":
        return "".join(str(p) for p in parts)
    return _formatted(parts)


def _readable(raw_name: Any, node: Call | None, values: list[Any], ev: Evaluator) -> str:
    """How reports show a name that cannot be evaluated: its known text, with each unknown
    part named by what it is read from, in braces (``oai-{seed}``, ``{hub:name}`` for module
    ``hub``'s parameter, ``{reference(…).outputs.name.value}``). No ``/`` is shown inside braces,
    so a name's segments stay its resources' (``ws-named/{seed}``), and two modules' resources
    named by their own ``name`` parameter are told apart."""
    if node is not None:
        parts = [_readable_part(v, arg, ev) for v, arg in zip(values, node.args, strict=True)]
        text = _filled(node, parts)
        if text is not None:
            return text
    whole = _parsed(raw_name)
    if whole is None:
        return raw_name if isinstance(raw_name, str) else str(raw_name)
    return "{" + _source_text(whole, ev) + "}"


def _readable_part(value: Any, node: Node, ev: Evaluator) -> Any:
    if not isinstance(value, Unknown):
        return value
    if value.symbol is not None:
        return _shown_symbol(value.symbol)
    return "{" + _source_text(node, ev) + "}"


def _source_text(node: Node, ev: Evaluator) -> str:
    """A short text for the expression an unknown value comes from: a parameter or variable by
    its name (qualified by its module, as a symbol is), a function call by its function, and the
    members and indexes read from it (without any ``/``, which would split the name)."""
    suffix = ""
    while isinstance(node, (Member, Index)):
        if isinstance(node, Member):
            suffix = f".{node.name}{suffix}"
        else:
            index = node.index.value if isinstance(node.index, Literal) else "…"
            suffix = f"[{index}]{suffix}"
        node = node.target
    if isinstance(node, Literal):
        head = str(node.value)
    elif node.name in ("parameters", "variables") and len(node.args) == 1 and isinstance(node.args[0], Literal):
        head = ev.site(str(node.args[0].value))
    else:
        head = f"{node.name}({'…' if node.args else ''})"
    return (head + suffix).replace("/", "%2F")


def _name_call(raw_name: Any) -> Call | None:
    """The ``format()`` or ``concat()`` call a name expression makes, if it makes one: the only
    names whose known segments survive unknown arguments."""
    node = _parsed(raw_name)
    if not isinstance(node, Call) or node.name not in ("format", "concat") or not node.args:
        return None
    return node


def _parsed(raw_name: Any) -> Node | None:
    """A name's expression, parsed; None for a name that is no (well-formed) expression."""
    if not (isinstance(raw_name, str) and is_expression(raw_name)):
        return None
    try:
        return parse(raw_name[1:-1])
    except ExpressionError:
        return None


def _marked(value: Any) -> Any:
    """A name argument's value: an unknown one as its symbol, else as the mark."""
    if isinstance(value, Unknown):
        return value.symbol if value.symbol is not None else _MARK
    return value


def _formatted(parts: list[Any]) -> str | None:
    """``format(template, args...)``, or None when the template is not one Python can fill."""
    template = parts[0]
    if not isinstance(template, str):
        return None
    try:
        return template.format(*parts[1:]) if "{" in template else template
    except (IndexError, KeyError, ValueError):
        return None


def _extension_type(resource_type: str, chain: str) -> str:
    """The type ARM deploys for an extension resource written in the older nested form, which
    Microsoft's docs and the landing-zone policies still use: type
    ``Microsoft.CognitiveServices/accounts/providers/diagnosticSettings`` named
    ``acct/Microsoft.Insights/logs`` (or ``providers/diagnosticSettings`` named
    ``Microsoft.Insights/logs`` among the account's own resources) is a
    ``Microsoft.Insights/diagnosticSettings`` on the account, as a ``scope`` would declare it.
    Any other type is returned as it is."""
    types = resource_type.split("/")[1:]
    lowered = [t.lower() for t in types]
    if "providers" not in lowered:
        return resource_type
    at = lowered.index("providers")
    names = chain.split("/")
    if at >= len(names) or at + 1 >= len(types):
        return resource_type
    return "/".join((names[at], *types[at + 1 :]))


def _resource_id(raw: dict[str, Any], ev: Evaluator, placement: Placement, resource_type: str, chain: str) -> str:
    namespace, *types = resource_type.split("/")
    names = chain.split("/")
    path = "/".join(f"{t}/{n}" for t, n in zip(types, names, strict=False))
    if "scope" in raw:  # an extension resource: its id continues the id of what it extends
        extended = ev.value(raw["scope"])
        if isinstance(extended, Unknown) and extended.symbol is not None:
            extended = extended.symbol
        if isinstance(extended, str):
            # Bicep 2.0 writes the scope relative to the deployment's group: 'Microsoft.X/y/{0}'.
            base = extended if extended.startswith("/") else f"{placement.group_id}/providers/{extended}"
            return f"{base.rstrip('/')}/providers/{namespace}/{path}"
    return f"{placement.group_id}/providers/{namespace}/{path}"


def _truthy(value: Any) -> bool:
    if isinstance(value, str):
        return value.strip().lower() != "false"
    return bool(value)


def _both(outer: str | None, inner: str) -> str:
    return inner if outer is None else f"{outer} and {inner}"


def _expression(raw: Any) -> str:
    text = raw if isinstance(raw, str) else str(raw)
    return text if len(text) <= 160 else text[:157] + "...]"


def read_template(doc: Document, location: Path, options: TemplateOptions) -> TemplateReader:
    """Evaluate one template; the reader holds its resources, warnings, coverage gaps and the
    files it linked."""
    reader = TemplateReader(doc, location, options)
    reader.evaluated = reader.final_states(list(reader.resources()))
    return reader
