"""Evaluating ARM template values: parameters, variables, functions, copies and lambdas.

Anything that only the deployment can know evaluates to `Unknown`: ``reference()`` of a
resource's runtime state, ``list*()``, a secure parameter (we refuse to read it) and any function
of those. Some unknowns are *symbolic*: a parameter without a value, ``resourceGroup().location``,
``deployment()`` and ``deployer()``, a parameter whose default draws ``utcNow()`` or ``newGuid()``
(one value per deployment: ``{suffix}``), and any deterministic function of them are unknown but
provably equal to themselves, so two resources placed in one unknown region still count as
co-located, and a name built from an unknown parameter (``st{name}``) still identifies one
resource. Resource group and subscription are placeholders in ids (``{resourceGroupName}``). A
string ``format()`` or ``concat()`` builds from known text and symbols keeps which is which
(`SymbolicText`), so ``empty('srch-{suffix}')`` is false, not unknown.

``reference()`` of a module (a nested deployment) answers with the module's outputs, evaluated
in the module's own scope, and ``environment()`` with the cloud the scan is for: the `Frame`
that a template is evaluated in provides both.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from scanner.errors import InputError
from scanner.model.jsondoc import pointer_join
from scanner.model.unknown import Unknown, UnknownValueError
from scanner.sources.arm.clouds import ENVIRONMENTS
from scanner.sources.arm.expressions import (
    Call,
    ExpressionError,
    Index,
    Literal,
    Member,
    Node,
    is_expression,
    parse,
    unescape_literal,
)
from scanner.sources.arm.functions import (
    PURE_FUNCTIONS,
    Partial,
    SymbolicText,
    TemplateFunctionError,
    fixed_at_deployment,
)
from scanner.sources.arm.limits import MAX_COPY, RefusedTemplate, serialized_length, spend_calls, spend_size
from scanner.sources.arm.parameters import UnsetPlaceholder
from scanner.sources.arm.securetypes import SecretTypes, is_secure, resolve_definition

SUBSCRIPTION_ID = "{subscriptionId}"
RESOURCE_GROUP = "{resourceGroupName}"
ROOT_DEPLOYMENT = "{deploymentName}"
_DEPLOYMENT_ONLY = Unknown("known only during deployment")
_MAX_DEPTH = 64


class Frame(Protocol):
    """The template instance an expression is evaluated in (see `deployments.TemplateFrame`)."""

    @property
    def path(self) -> str:
        """The instance's declaration chain (``hub``, ``hubs[1]``); empty for the scanned template."""

    @property
    def cloud(self) -> str: ...

    @property
    def deployment_name(self) -> str: ...

    @property
    def template_uri(self) -> str | Unknown: ...

    def warn(self, message: str) -> None: ...

    def locate(self, *tokens: str | int) -> str:
        """The file and JSON path of a part of this template (``variables``, ``v1``), as an error
        message names them."""

    def reference(self, target: str, full: bool) -> Any:
        """``reference(target)``: a module's outputs, a declared resource's static facts with
        ``'full'``, or Unknown for runtime state."""


class _Detached:
    """The frame of an expression evaluated on its own (tests, user-defined functions)."""

    path = ""
    cloud = "AzureCloud"
    deployment_name = ROOT_DEPLOYMENT
    template_uri: str | Unknown = _DEPLOYMENT_ONLY

    def warn(self, message: str) -> None:
        return None

    def locate(self, *tokens: str | int) -> str:
        return f"at {pointer_join('', *tokens)}"

    def reference(self, target: str, full: bool) -> Any:
        return Unknown(f"reference('{target}') reads the deployed resource's state")


DETACHED: Frame = _Detached()


@dataclass(frozen=True)
class Placement:
    """Where a (nested) deployment lands: subscription and resource group, symbolic or named."""

    subscription: str = SUBSCRIPTION_ID
    resource_group: str = RESOURCE_GROUP

    @property
    def group_id(self) -> str:
        return f"/subscriptions/{self.subscription}/resourceGroups/{self.resource_group}"

    @property
    def group_location(self) -> Unknown:
        return Unknown(
            "the resource group's region is chosen at deployment",
            symbol=f"resourceGroup({self.subscription}/{self.resource_group}).location",
        )


def deployment_value(text: str) -> Any:
    """A subscription, group or deployment name as an expression sees it: a placeholder
    (``{resourceGroupName}``) is an unknown that equals itself, never a known string that
    ``equals(resourceGroup().name, 'rg-prod')`` could compare false."""
    if "{" in text:
        return Unknown("known only at deployment", symbol=text)
    return text


@dataclass(frozen=True)
class Lambda:
    names: tuple[str, ...]
    body: Node
    scope: Scope


@dataclass
class Scope:
    """One template's evaluation context."""

    template: dict[str, Any]
    supplied: Mapping[str, Any]
    placement: Placement
    frame: Frame = DETACHED
    copy_index: Any = None
    loops: dict[str, Any] = field(default_factory=dict)
    lambda_values: dict[str, Any] = field(default_factory=dict)
    # The parameter whose default is being evaluated (`Evaluator.site`), where ARM allows
    # ``utcNow()`` and ``newGuid()``; None elsewhere.
    site: str | None = None
    # Which parameter types hold a secret: one for the whole scan (`deployments.Session`).
    secrets: SecretTypes = field(default_factory=SecretTypes)
    _parameters: dict[str, Any] = field(default_factory=dict)
    _variables: dict[str, Any] = field(default_factory=dict)
    _busy: set[str] = field(default_factory=set)
    _sites: dict[str, int] = field(default_factory=dict)  # deployment-time calls per site

    def child(self, **changes: Any) -> Scope:
        """A scope sharing this template's cached parameters and variables."""
        scope = Scope(
            self.template,
            self.supplied,
            self.placement,
            self.frame,
            self.copy_index,
            dict(self.loops),
            dict(self.lambda_values),
            self.site,
            self.secrets,
        )
        scope._parameters = self._parameters
        scope._variables = self._variables
        scope._busy = self._busy
        scope._sites = self._sites
        for key, value in changes.items():
            setattr(scope, key, value)
        return scope


def _declared(section: Any, name: str) -> tuple[str, Any] | None:
    if not isinstance(section, dict):
        return None
    if name in section:
        return name, section[name]
    lowered = name.lower()
    return next(((k, v) for k, v in section.items() if k.lower() == lowered), None)


class Evaluator:
    """Evaluates JSON values that may contain expressions, within a scope."""

    def __init__(self, scope: Scope) -> None:
        self.scope = scope

    # -- values ---------------------------------------------------------------------------

    def value(self, raw: Any, depth: int = 0) -> Any:
        if depth > _MAX_DEPTH:
            return Unknown("value nested too deeply to evaluate")
        if isinstance(raw, str):
            if is_expression(raw):
                return self.expression(raw[1:-1])
            return unescape_literal(raw)
        if isinstance(raw, list):
            return [self.value(item, depth + 1) for item in raw]
        if isinstance(raw, dict):
            out: dict[str, Any] = {}
            copies = raw.get("copy")
            for key, item in raw.items():
                if key == "copy" and _is_property_copy(copies):
                    continue
                out[key] = self.value(item, depth + 1)
            if isinstance(copies, list) and _is_property_copy(copies):
                for spec in copies:
                    out[str(spec.get("name"))] = self.property_copy(spec, depth)
            return out
        return raw

    def property_copy(self, spec: dict[str, Any], depth: int) -> Any:
        count = self.value(spec.get("count"), depth + 1)
        if not isinstance(count, int) or isinstance(count, bool):
            return Unknown("copy count is not known")
        name = str(spec.get("name"))
        require_copy_count(count, f"'{name}'", spec.get("count"))
        items = []
        for i in range(count):
            scoped = Evaluator(self.scope.child(loops={**self.scope.loops, name: i}))
            items.append(scoped.value(spec.get("input"), depth + 1))
        return items

    def expression(self, text: str) -> Any:
        try:
            node = parse(text)
        except ExpressionError as exc:
            return Unknown(f"malformed expression [{text[:80]}]: {exc}")
        found = self.node_value(node, text)
        if isinstance(found, Lambda):  # ARM takes a lambda only as an argument of map(), filter()...
            return Unknown(f"cannot evaluate [{text[:80]}]: a lambda is not a value, only a function's argument")
        return found

    def node_value(self, node: Node, text: str = "") -> Any:
        """A parsed expression's value. A function ARM would reject, or nesting too deep to
        evaluate, makes it Unknown: a real template may be wrong and must not crash the scan."""
        shown = f" [{text[:80]}]" if text else ""
        try:
            return self.node(node)
        except (
            TemplateFunctionError,
            TypeError,
            ValueError,
            KeyError,
            IndexError,
            ZeroDivisionError,
            AttributeError,
        ) as exc:
            return Unknown(f"cannot evaluate{shown}: {exc}")
        except UnknownValueError as exc:
            return exc.value
        except RecursionError:
            return Unknown(f"expression{shown} is nested too deeply")

    # -- nodes ----------------------------------------------------------------------------

    def node(self, node: Node) -> Any:
        if isinstance(node, Literal):
            return node.value
        if isinstance(node, Member):
            return _member(self.node(node.target), node.name)
        if isinstance(node, Index):
            return _index(self.node(node.target), self.node(node.index))
        return self.call(node)

    def call(self, node: Call) -> Any:
        spend_calls()
        special = _SPECIAL.get(node.name)
        if special is not None:
            return special(self, node.args)
        if "." in node.name:
            return self.user_function(node)
        if node.name.startswith("list") or node.name in _DEPLOYMENT_FUNCTIONS:
            return Unknown(f"{node.name}() is known only during deployment")
        function = PURE_FUNCTIONS.get(node.name)
        if function is None:
            return Unknown(f"template function {node.name}() is not supported")
        args = [self.node(a) for a in node.args]
        if any(isinstance(a, Lambda) for a in args):  # ARM takes one only where a function calls it
            raise TemplateFunctionError(f"{node.name}() takes no lambda")
        unknown = next((a for a in args if isinstance(a, Unknown)), None)
        if unknown is not None and node.name not in _STRUCTURAL and not _decides_on_text(node.name, args):
            return _unknown_result(node.name, args, unknown.reason)
        return function(*args)

    def deployment_time(self, name: str) -> Unknown:
        """``utcNow()`` or ``newGuid()``: a value ARM draws once, where the call is written.
        ARM allows them only in a parameter's default, and each call there gives its own value
        ("it returns a different value each time it's called": Microsoft Learn, template
        functions: date, utcNow, and string, newGuid; MicrosoftDocs/azure-docs
        articles/azure-resource-manager/templates/template-functions-date.md @05c11e58 and
        template-functions-string.md @0aa2b14a). So each call is its own symbol, named after
        the parameter and the call's place in its default: two calls, in one default or in two,
        are never known to be equal. Anywhere else ARM refuses the call; it is unknown."""
        site = self.scope.site
        if site is None:
            return Unknown(f"{name}() is known only during deployment")
        calls = self.scope._sites.get(site, 0)
        self.scope._sites[site] = calls + 1
        return Unknown(f"{name}() is chosen at deployment", symbol=f"{{{site}#{name}{calls or ''}}}")

    def user_function(self, node: Call) -> Any:
        namespace, _, member = node.name.partition(".")
        for group in self.scope.template.get("functions") or []:
            if not isinstance(group, dict) or str(group.get("namespace", "")).lower() != namespace:
                continue
            found = _declared(group.get("members"), member)
            if found is None:
                continue
            definition = found[1]
            declared = definition.get("parameters") or []
            args = [self.node(a) for a in node.args]
            bound = {str(p.get("name")): v for p, v in zip(declared, args, strict=False) if isinstance(p, dict)}
            inner = Scope({"parameters": {n: {} for n in bound}}, bound, self.scope.placement, self.scope.frame)
            return Evaluator(inner).value((definition.get("output") or {}).get("value"))
        return Unknown(f"user-defined function {node.name}() is not declared")

    # -- parameters and variables ---------------------------------------------------------

    def parameter(self, name: str) -> Any:
        cache = self.scope._parameters
        key = name.lower()
        if key in cache:
            return cache[key]
        declared = _declared(self.scope.template.get("parameters"), name)
        if declared is None:
            self.scope.frame.warn(f"parameter '{name}' is not declared; values that use it are unknown")
            return Unknown(f"parameter '{name}' is not declared")
        real_name, declaration = declared
        definition = resolve_definition(self.scope.template, declaration)
        supplied = _declared(self.scope.supplied, real_name)
        given = supplied is not None and _given(supplied[1])
        if is_secure(self.scope.template, declaration):
            # Never read; only an empty default holds nothing secret (the quickstarts' SAS token).
            # It applies when nothing is given, as when azd leaves out an unset placeholder.
            empty = definition.get("defaultValue") in ("", {}) and not given
            result: Any = (
                definition["defaultValue"] if empty else Unknown(f"secure parameter '{real_name}' is not read")
            )
        elif key in self.scope._busy and not given:
            return Unknown(f"parameter '{real_name}' refers to itself")
        else:
            # An object whose type marks only some members secure is read but for those members.
            plain = self._plain_parameter(real_name, definition, supplied[1] if supplied else None, given)
            result = self.scope.secrets.hide(self.scope.template, declaration, plain, real_name)
        cache[key] = result
        return result

    def _plain_parameter(self, name: str, definition: dict[str, Any], supplied: Any, given: bool) -> Any:
        """A parameter that is not secure as a whole: the value given, else its default, else
        null when it is nullable, else unknown but one value wherever it is used (``{name}``
        in the scanned template, ``{hub:name}`` in a module)."""
        kind = str(definition.get("type", "")).lower()
        if given or (supplied is not None and "defaultValue" not in definition):
            return self._given_value(name, _coerce(supplied, kind))
        if "defaultValue" in definition:
            return self._default(name, definition["defaultValue"], kind)
        if definition.get("nullable") is True:
            return None
        return Unknown(f"parameter '{name}' has no value (pass --parameters)", symbol="{" + self.site(name) + "}")

    def _given_value(self, name: str, value: Any) -> Any:
        """A value given for a parameter. One a module is given that nobody knows before deploy
        (another resource's runtime state) is still one value for the whole module: ``{hub:name}``,
        so that the resources the module names from it link to each other."""
        if isinstance(value, UnsetPlaceholder):  # passed on to a module, it is a plain unknown
            return Unknown(value.reason, symbol=value.symbol)
        if isinstance(value, Unknown) and value.symbol is None and self.scope.frame.path:
            return Unknown(value.reason, symbol="{" + self.site(name) + "}", may_be_null=value.may_be_null)
        return value

    def site(self, name: str) -> str:
        """What a value named ``name`` in this template instance is called in symbols: ``name`` in
        the scanned template, ``hub:name`` in module ``hub`` (one id segment)."""
        frame = self.scope.frame.path.replace("/", ".")
        return f"{frame}:{name}" if frame else name

    def _default(self, name: str, raw: Any, kind: str) -> Any:
        """A parameter's default value. ARM evaluates it once per deployment, so one that calls
        ``utcNow()`` or ``newGuid()`` and comes out unknown as a whole is that parameter's own
        symbol (``{suffix}``): every use of the parameter is the same value, here and in the
        modules it is passed to, while no other parameter's value is known to equal it."""
        site = self.site(name)
        key = name.lower()
        self.scope._busy.add(key)
        try:
            evaluated = Evaluator(self.scope.child(copy_index=None, loops={}, site=site)).value(raw)
        except RefusedTemplate as exc:
            raise InputError(f"{self.scope.frame.locate('parameters', name, 'defaultValue')}: {exc}") from None
        finally:
            self.scope._busy.discard(key)
        if isinstance(evaluated, Unknown) and self.scope._sites.get(site):
            return Unknown(f"parameter '{name}' defaults to a value chosen at deployment", symbol="{" + site + "}")
        return _coerce(evaluated, kind)

    def variable(self, name: str) -> Any:
        cache = self.scope._variables
        key = name.lower()
        if key in cache:
            return cache[key]
        variables = self.scope.template.get("variables")
        declared = _declared(variables, name)
        busy_key = f"var:{key}"
        if busy_key in self.scope._busy:
            return Unknown(f"variable '{name}' refers to itself")
        self.scope._busy.add(busy_key)
        try:
            plain = Evaluator(self.scope.child(copy_index=None, loops={}))
            if declared is not None and declared[0] != "copy":
                result = plain.value(declared[1])
            else:
                copies = variables.get("copy") if isinstance(variables, dict) else None
                spec = next(
                    (c for c in copies or [] if isinstance(c, dict) and str(c.get("name", "")).lower() == key),
                    None,
                )
                if spec is None:
                    self.scope.frame.warn(f"variable '{name}' is not declared; values that use it are unknown")
                    result = Unknown(f"variable '{name}' is not declared")
                else:
                    result = plain.property_copy(spec, 0)
        except RefusedTemplate as exc:
            where = ("variables", declared[0]) if declared is not None else ("variables", "copy")
            raise InputError(f"{self.scope.frame.locate(*where)}: {exc}") from None
        finally:
            self.scope._busy.discard(busy_key)
        cache[key] = result
        return result

    def call_lambda(self, function: Any, *values: Any) -> Any:
        if not isinstance(function, Lambda):
            raise TemplateFunctionError("expected a lambda")
        bound = {**function.scope.lambda_values, **dict(zip(function.names, values, strict=False))}
        return Evaluator(function.scope.child(lambda_values=bound)).node(function.body)


def _decides_on_text(name: str, args: list[Any]) -> bool:
    """Whether a function decides on a partly known string: ``empty()`` of one (`SymbolicText`)."""
    return name == "empty" and len(args) == 1 and isinstance(args[0], SymbolicText)


def _unknown_result(name: str, args: list[Any], reason: str) -> Unknown:
    """A deterministic function of unknowns: symbolic when every unknown is (see
    `_symbolic_call`), a string of known and symbolic pieces for ``format()`` and ``concat()``."""
    if any(isinstance(a, Unknown) and a.symbol is None for a in args):
        return Unknown(reason)
    if name in ("format", "concat"):
        text = _symbolic_text(name, args, reason)
        if text is not None:
            return text
    return Unknown(reason, symbol=_symbolic_call(name, args))


# Around an unknown's symbol while ``format()`` or ``concat()`` builds text from it.
_OPEN, _CLOSE = "\x00", "\x01"
_PIECE = re.compile(f"{_OPEN}([^{_OPEN}{_CLOSE}]*){_CLOSE}")


def _symbolic_text(name: str, args: list[Any], reason: str) -> SymbolicText | None:
    """The text ``format()`` or ``concat()`` builds (``st{name}``), with which of its pieces
    are unknown; None when an argument is no text (an array, an object), or when ``format()``'s
    own format string is unknown (its items, not it, make the text)."""
    if name == "format" and args and isinstance(args[0], Unknown):
        return None
    marked = [_marked_text(a) for a in args]
    if not all(isinstance(t, (str, int, float)) for t in marked):
        return None
    try:
        built = str(PURE_FUNCTIONS[name](*marked))
    except (TemplateFunctionError, TypeError, ValueError, IndexError):
        return None
    parts: list[tuple[str, bool]] = []
    at = 0
    for match in _PIECE.finditer(built):
        parts += [(built[at : match.start()], False), (match.group(1), True)]
        at = match.end()
    parts.append((built[at:], False))
    return SymbolicText(reason, tuple(p for p in parts if p[0]))


def _marked_text(value: Any) -> Any:
    """An argument as ``_symbolic_text`` builds with it: each unknown piece between marks."""
    if isinstance(value, SymbolicText):
        return "".join(f"{_OPEN}{text}{_CLOSE}" if unknown else text for text, unknown in value.parts)
    if isinstance(value, Unknown):
        return f"{_OPEN}{value.symbol}{_CLOSE}"
    return value


def _symbolic_call(name: str, args: list[Any]) -> str:
    """The symbol of a deterministic function of symbolic unknowns, the call written out: a
    short digest of it keeps the names and ids built from it one id segment (and readable)."""
    call = f"{name}({','.join(_symbol_text(a) for a in args)})"
    return f"{{{name}:{hashlib.sha256(call.encode('utf-8')).hexdigest()[:8]}}}"


def _symbol_text(value: Any) -> str:
    if isinstance(value, Unknown):
        return str(value.symbol)
    spend_size(serialized_length(value), "an argument of a call on an unknown value")
    return json.dumps(value, separators=(",", ":"), sort_keys=True, default=str)


def _derived(target: Unknown, suffix: str) -> Unknown:
    """A part of a symbolic unknown (``{p}.name``, ``{p}[0]``) is symbolic too, but is not ``{p}``."""
    part = suffix.replace("/", "%2F")  # one id segment, whatever the key holds
    return Unknown(target.reason, symbol=f"{target.symbol}{part}" if target.symbol is not None else None)


def require_copy_count(count: int, loop: str, raw: Any) -> None:
    """ARM's copy limits, in ARM's words: a count is 0 to 800, for a loop over resources,
    properties, variables or outputs (see `limits`)."""
    if not 0 <= count <= MAX_COPY:
        given = (
            f"'{raw[:77] + '...' if len(raw) > 80 else raw}' (= {count:,})" if isinstance(raw, str) else f"'{count}'"
        )
        raise RefusedTemplate(
            f"the copy loop {loop} has an invalid copy count of: {given}. The copy count must "
            f"be a non-negative integer value and cannot exceed '{MAX_COPY}'."
        )


def _given(value: Any) -> bool:
    """Whether a supplied value replaces the parameter's default: ARM takes null as no value,
    and azd leaves out a parameter whose placeholder has neither a variable nor a default."""
    return value is not None and not isinstance(value, UnsetPlaceholder)


def _is_property_copy(copies: Any) -> bool:
    return isinstance(copies, list) and bool(copies) and all(isinstance(c, dict) and "input" in c for c in copies)


def _coerce(value: Any, kind: str) -> Any:
    """Parameter files often carry numbers and booleans as strings (``"1"``, ``"false"``)."""
    if isinstance(value, str):
        if kind == "int" and value.strip().lstrip("-").isdigit():
            return int(value)
        if kind == "bool" and value.lower() in ("true", "false"):
            return value.lower() == "true"
    return value


def _member(target: Any, name: str) -> Any:
    if isinstance(target, Unknown):
        return _derived(target, f".{name}")
    if isinstance(target, dict):
        found = _declared(target, name)
        if found is None:
            return target.lacking(name) if isinstance(target, Partial) else Unknown(f"property '{name}' is not set")
        return found[1]
    raise TemplateFunctionError(f"cannot read property '{name}' of {type(target).__name__}")


def _index(target: Any, index: Any) -> Any:
    if isinstance(target, Unknown):
        if isinstance(index, Unknown) and index.symbol is None:
            return Unknown(target.reason)
        return _derived(target, f"[{_symbol_text(index)}]")
    if isinstance(index, Unknown):
        return Unknown(index.reason)
    if isinstance(target, dict):
        return _member(target, str(index))
    if isinstance(target, (list, str)) and isinstance(index, int):
        return target[index]
    raise TemplateFunctionError("invalid index")


# -- special forms: functions that need the scope or lazy arguments ---------------------------

Special = Callable[[Evaluator, tuple[Node, ...]], Any]


def _args(ev: Evaluator, nodes: tuple[Node, ...]) -> list[Any]:
    return [ev.node(n) for n in nodes]


def _parameters(ev: Evaluator, nodes: tuple[Node, ...]) -> Any:
    name = ev.node(nodes[0])
    return Unknown(name.reason) if isinstance(name, Unknown) else ev.parameter(str(name))


def _variables(ev: Evaluator, nodes: tuple[Node, ...]) -> Any:
    name = ev.node(nodes[0])
    return Unknown(name.reason) if isinstance(name, Unknown) else ev.variable(str(name))


def _copy_index(ev: Evaluator, nodes: tuple[Node, ...]) -> Any:
    args = _args(ev, nodes)
    offset = 0
    current = ev.scope.copy_index
    if args and isinstance(args[0], str):
        current = ev.scope.loops.get(args[0], ev.scope.copy_index)
        offset = args[1] if len(args) > 1 else 0
    elif args:
        offset = args[0]
    if current is None:
        raise TemplateFunctionError("copyIndex() outside a copy loop")
    if isinstance(current, Unknown) or isinstance(offset, Unknown):
        return current if isinstance(current, Unknown) else offset
    return current + offset


def _if(ev: Evaluator, nodes: tuple[Node, ...]) -> Any:
    condition = ev.node(nodes[0])
    if isinstance(condition, Unknown):
        return Unknown(
            f"if() on an unknown condition: {condition.reason}",
            may_be_null=any(_is_null_literal(n) for n in nodes[1:3]),
        )
    return ev.node(nodes[1] if condition else nodes[2])


def _is_null_literal(node: Node) -> bool:
    """``null()`` or ``json('null')``: a branch that leaves a property unset."""
    if not isinstance(node, Call):
        return False
    return node.name == "null" or (node.name == "json" and len(node.args) == 1 and node.args[0] == Literal("null"))


def _logical(ev: Evaluator, nodes: tuple[Node, ...], decisive: bool) -> Any:
    """``and`` stops at the first false, ``or`` at the first true; an unknown operand decides
    the result only when no known operand does."""
    pending: Unknown | None = None
    for n in nodes:
        value = ev.node(n)
        if isinstance(value, Unknown):
            pending = value
        elif bool(value) is decisive:
            return decisive
    return Unknown(pending.reason) if pending is not None else not decisive


def _and(ev: Evaluator, nodes: tuple[Node, ...]) -> Any:
    return _logical(ev, nodes, decisive=False)


def _or(ev: Evaluator, nodes: tuple[Node, ...]) -> Any:
    return _logical(ev, nodes, decisive=True)


def _coalesce(ev: Evaluator, nodes: tuple[Node, ...]) -> Any:
    for i, n in enumerate(nodes):
        value = ev.node(n)
        if isinstance(value, Unknown) and i < len(nodes) - 1:
            return Unknown(value.reason)  # it may be null, and then a later argument wins
        if value is not None:
            return value
    return None


def _try_get(ev: Evaluator, nodes: tuple[Node, ...]) -> Any:
    target = ev.node(nodes[0])
    for n in nodes[1:]:
        if target is None:
            return None
        key = ev.node(n)
        if isinstance(target, Unknown) or isinstance(key, Unknown):
            return Unknown(target.reason if isinstance(target, Unknown) else key.reason)
        if isinstance(target, dict):
            found = _declared(target, str(key))
            if found is None and isinstance(target, Partial):
                return target.lacking(str(key))
            target = found[1] if found else None
        elif isinstance(target, list) and isinstance(key, int):
            target = target[key] if -len(target) <= key < len(target) else None
        else:
            return None
    return target


def _lambda(ev: Evaluator, nodes: tuple[Node, ...]) -> Any:
    names = tuple(str(ev.node(n)) for n in nodes[:-1])
    return Lambda(names, nodes[-1], ev.scope)


def _lambda_variables(ev: Evaluator, nodes: tuple[Node, ...]) -> Any:
    name = str(ev.node(nodes[0]))
    if name not in ev.scope.lambda_values:
        raise TemplateFunctionError(f"lambda variable '{name}' is not bound")
    return ev.scope.lambda_values[name]


def _collection(ev: Evaluator, nodes: tuple[Node, ...]) -> tuple[Any, Any, list[Any]]:
    values = _args(ev, nodes)
    return values[0], values[-1], values[1:-1]


def _map(ev: Evaluator, nodes: tuple[Node, ...]) -> Any:
    items, function, _ = _collection(ev, nodes)
    if isinstance(items, Unknown):
        return Unknown(items.reason)
    return [ev.call_lambda(function, item, i) for i, item in enumerate(items)]


def _filter(ev: Evaluator, nodes: tuple[Node, ...]) -> Any:
    items, function, _ = _collection(ev, nodes)
    if isinstance(items, Unknown):
        return Unknown(items.reason)
    kept = []
    for i, item in enumerate(items):
        keep = ev.call_lambda(function, item, i)
        if isinstance(keep, Unknown):
            return Unknown(f"filter() condition is unknown ({keep.reason})")
        if keep:
            kept.append(item)
    return kept


def _reduce(ev: Evaluator, nodes: tuple[Node, ...]) -> Any:
    items, function, rest = _collection(ev, nodes)
    if isinstance(items, Unknown):
        return Unknown(items.reason)
    accumulator = rest[0] if rest else None
    for i, item in enumerate(items):
        accumulator = ev.call_lambda(function, accumulator, item, i)
    return accumulator


def _to_object(ev: Evaluator, nodes: tuple[Node, ...]) -> Any:
    values = _args(ev, nodes)
    items = values[0]
    if isinstance(items, Unknown):
        return Unknown(items.reason)
    key_fn = values[1]
    value_fn = values[2] if len(values) > 2 else None
    out: dict[str, Any] = {}
    for item in items:
        key = ev.call_lambda(key_fn, item)
        if isinstance(key, Unknown):
            return Unknown("toObject() key is unknown")
        out[str(key)] = ev.call_lambda(value_fn, item) if value_fn is not None else item
    return out


def _sort(ev: Evaluator, nodes: tuple[Node, ...]) -> Any:
    items, function, _ = _collection(ev, nodes)
    if isinstance(items, Unknown):
        return Unknown(items.reason)
    ordered = list(items)
    import functools

    def compare(a: Any, b: Any) -> int:
        before = ev.call_lambda(function, a, b)
        if isinstance(before, Unknown):
            raise UnknownValueError(before)
        return -1 if before else 1

    return sorted(ordered, key=functools.cmp_to_key(compare))


def _resource_group(ev: Evaluator, nodes: tuple[Node, ...]) -> Any:
    placement = ev.scope.placement
    return Partial(
        id=deployment_value(placement.group_id),
        name=deployment_value(placement.resource_group),
        type="Microsoft.Resources/resourceGroups",
        location=placement.group_location,
    )


def _subscription(ev: Evaluator, nodes: tuple[Node, ...]) -> Any:
    subscription = ev.scope.placement.subscription
    return Partial(
        id=deployment_value(f"/subscriptions/{subscription}"),
        subscriptionId=deployment_value(subscription),
        tenantId=deployment_value("{tenantId}"),
        displayName=deployment_value("{subscriptionName}"),
    )


def _deployment(ev: Evaluator, nodes: tuple[Node, ...]) -> Any:
    """The deployment this template runs in. ``properties.templateLink.uri`` is the template's own
    location, as when it is deployed from where it lies, so ``uri(deployment().properties.
    templateLink.uri, 'nested/x.json')`` names the linked template beside it. Its other members
    (``location``, ``properties.mode``, ``properties.templateHash``: Microsoft Learn, template
    functions: deployment, MicrosoftDocs/azure-docs @00f32447) are this deployment's, one value
    each: ``{deployment()}.location`` in the scanned template, ``{hub:deployment()}.location`` in
    module ``hub``."""
    frame = ev.scope.frame
    symbol = "{" + ev.site("deployment()") + "}"
    properties = fixed_at_deployment(f"{symbol}.properties", templateLink={"uri": frame.template_uri})
    return fixed_at_deployment(symbol, name=deployment_value(frame.deployment_name), properties=properties)


def _deployer(ev: Evaluator, nodes: tuple[Node, ...]) -> Any:
    """The principal that starts the deployment (Bicep's ``deployer()``: ``objectId``,
    ``tenantId``, ``userPrincipalName``; Microsoft Learn, Bicep functions: deployment, 2026-01-06):
    not known before deploy, but one principal for every module of the scan."""
    return fixed_at_deployment("{deployer()}")


def _environment(ev: Evaluator, nodes: tuple[Node, ...]) -> Any:
    """The cloud the scan is for (``--cloud``)."""
    return copy.deepcopy(ENVIRONMENTS[ev.scope.frame.cloud])


def _reference(ev: Evaluator, nodes: tuple[Node, ...]) -> Any:
    """``reference(target[, apiVersion[, 'full']])``: a module's outputs, or what a declared
    resource's deployment fixes (its id and location, with ``'full'``); runtime state is unknown.
    A target named from a value fixed at deployment (``concat('foundry-', variables('suffix'))``,
    the suffix a ``uniqueString()`` of ``deployment().name``) is the declaration whose name is that
    same symbol, as it is in ``dependsOn``."""
    args = _args(ev, nodes)
    target = args[0] if args else None
    if isinstance(target, Unknown) and target.symbol is not None:
        target = target.symbol
    if isinstance(target, Unknown):
        return Unknown(f"reference() of an unknown resource: {target.reason}")
    if not isinstance(target, str):
        raise TemplateFunctionError("reference() needs a resource name or id")
    full = len(args) > 2 and isinstance(args[2], str) and args[2].lower() == "full"
    return ev.scope.frame.reference(target, full)


def _resource_id(ev: Evaluator, nodes: tuple[Node, ...]) -> Any:
    args = _args(ev, nodes)
    return build_template_id(args, ev.scope.placement, scope="group")


def _subscription_resource_id(ev: Evaluator, nodes: tuple[Node, ...]) -> Any:
    return build_template_id(_args(ev, nodes), ev.scope.placement, scope="subscription")


def _tenant_resource_id(ev: Evaluator, nodes: tuple[Node, ...]) -> Any:
    return build_template_id(_args(ev, nodes), ev.scope.placement, scope="tenant")


def _extension_resource_id(ev: Evaluator, nodes: tuple[Node, ...]) -> Any:
    args = _args(ev, nodes)
    base, rest = args[0], args[1:]
    if any(isinstance(a, Unknown) and a.symbol is None for a in args):
        return Unknown("extension resource id of an unknown value")
    return f"{base}{build_template_id(rest, ev.scope.placement, scope='tenant')}"


def build_template_id(args: list[Any], placement: Placement, scope: str) -> Any:
    """``resourceId([subscriptionId], [resourceGroupName], type, name1, name2, ...)``.

    A symbolic unknown name stands in the id as its symbol (``.../storageAccounts/st{name}``),
    the same text the resource declared with that name is identified by.
    """
    unknown = next((a for a in args if isinstance(a, Unknown) and a.symbol is None), None)
    if unknown is not None:
        return Unknown(unknown.reason)
    texts = [str(a) for a in args]
    type_at = next((i for i, a in enumerate(texts) if "/" in a and "." in a.split("/")[0]), None)
    if type_at is None:
        raise TemplateFunctionError("resourceId() without a resource type")
    subscription, group = _id_placement(texts[:type_at], placement, scope)
    namespace, *types = texts[type_at].split("/")
    names = texts[type_at + 1 :]
    path = "/".join(f"{t}/{n}" for t, n in zip(types, names, strict=False))
    provider = f"/providers/{namespace}/{path}"
    if scope == "tenant":
        return provider
    if scope == "subscription":
        return f"/subscriptions/{subscription}{provider}"
    return f"/subscriptions/{subscription}/resourceGroups/{group}{provider}"


def _id_placement(before: list[str], placement: Placement, scope: str) -> tuple[str, str]:
    """The subscription and resource group a resource id names before its type, else the
    deployment's: one argument is the group (the subscription, for a subscription-scope id),
    two are both."""
    if len(before) >= 2:
        return before[0], before[1]
    if len(before) == 1 and scope == "subscription":
        return before[0], placement.resource_group
    if len(before) == 1:
        return placement.subscription, before[0]
    return placement.subscription, placement.resource_group


# Functions that build values: an Unknown argument stays an Unknown member of the result,
# so an object with one unknown property still tells the truth about the others.
_STRUCTURAL = frozenset({"createobject", "createarray", "equals"})

_DEPLOYMENT_FUNCTIONS = frozenset(
    {
        "pickzones",
        "providers",
        "managementgroup",
        "tenant",
        "resourceinfo",
        "readenvironmentvariable",
    }
)

_SPECIAL: dict[str, Special] = {
    "parameters": _parameters,
    "variables": _variables,
    "copyindex": _copy_index,
    "if": _if,
    "and": _and,
    "or": _or,
    "coalesce": _coalesce,
    "tryget": _try_get,
    "lambda": _lambda,
    "lambdavariables": _lambda_variables,
    "map": _map,
    "filter": _filter,
    "reduce": _reduce,
    "toobject": _to_object,
    "sort": _sort,
    "resourcegroup": _resource_group,
    "subscription": _subscription,
    "deployment": _deployment,
    "deployer": _deployer,
    "utcnow": lambda ev, nodes: ev.deployment_time("utcNow"),
    "newguid": lambda ev, nodes: ev.deployment_time("newGuid"),
    "environment": _environment,
    "reference": _reference,
    "resourceid": _resource_id,
    "subscriptionresourceid": _subscription_resource_id,
    "tenantresourceid": _tenant_resource_id,
    "extensionresourceid": _extension_resource_id,
}
