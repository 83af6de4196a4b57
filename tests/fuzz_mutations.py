"""Structural mutations of the project's own fixtures, written back as JSON text.

The fuzz tests (tests/test_fuzz.py) start from real plans, templates and what-if results, so a
mutation lands deep inside input the readers accept, where a hand-written bad-input case rarely
goes. A mutated document is a tree of ordinary JSON values with `Raw` pieces spliced in: JSON
text written as is, because `json.dumps` cannot write what a hostile or broken file can hold
(bare ``NaN``, ``1e999``, lone surrogate escapes, 100 000 nested arrays).

Every value a mutation brings is bounded, so that one scan stays well under a second on a
correct reader; a slow example points at a real hang, not at the test.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"

# The demo estate in all three file forms, and rule estates chosen for the reader paths they
# reach: both Terraform providers (AZAI-101, AZAI-501), a languageVersion 2.0 template with a
# copy loop (AZAI-102), a resource copy loop (AZAI-201), a nested deployment (AZAI-301).
FIXTURE_FILES = (
    "demo/plan.json",
    "demo/template.json",
    "demo/whatif.json",
    "rules/AZAI-101/plan-azurerm.json",
    "rules/AZAI-101/plan-azapi.json",
    "rules/AZAI-101/template.json",
    "rules/AZAI-101/whatif.json",
    "rules/AZAI-102/template.json",
    "rules/AZAI-201/template.json",
    "rules/AZAI-301/template.json",
    "rules/AZAI-301/whatif.json",
    "rules/AZAI-501/plan-azurerm.json",
)

# What-if results with autoscale settings, which `autoscale_cases` aims at (AZAI-304 reads their
# rules' metric triggers, AZAI-401 their targets).
AUTOSCALE_FIXTURES = ("rules/AZAI-304/whatif.json", "rules/AZAI-401/whatif.json")

FORMATS = ("text", "markdown", "json", "sarif", "junit", "html")

JsonPath = tuple[str | int, ...]


@dataclass(frozen=True)
class Raw:
    """JSON text spliced into a document as is; ``label`` is what a failing example prints."""

    label: str
    text: str

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.label)


def _string(label: str, value: str) -> Raw:
    return Raw(label, json.dumps(value))


def _nested(label: str, depth: int, opener: str, inner: str, closer: str) -> Raw:
    return Raw(label, opener * depth + inner + closer * depth)


WRONG_TYPES = (
    Raw("0", "0"),
    Raw("-1", "-1"),
    Raw("1.5", "1.5"),
    Raw("empty string", '""'),
    Raw("string x", '"x"'),
    Raw("empty list", "[]"),
    Raw("list [1, 'a']", '[1, "a"]'),
    Raw("empty object", "{}"),
    Raw("object {a: 1}", '{"a": 1}'),
    Raw("null", "null"),
    Raw("true", "true"),
    Raw("false", "false"),
)

NUMBERS = (
    Raw("1e308", "1e308"),
    Raw("-1e308", "-1e308"),
    Raw("1e999 (overflows to infinity)", "1e999"),
    Raw("-1e999", "-1e999"),
    Raw("1e-400 (underflows to 0)", "1e-400"),
    Raw("bare NaN", "NaN"),
    Raw("bare Infinity", "Infinity"),
    Raw("bare -Infinity", "-Infinity"),
    Raw("-0", "-0"),
    Raw("2**63", str(2**63)),
    Raw("30-digit integer", "1" * 30),
    Raw("5000-digit integer (above Python's int-string limit)", "9" * 5000),
)

DEEP = (
    _nested("100 nested arrays", 100, "[", "", "]"),
    _nested("1000 nested arrays", 1000, "[", "", "]"),
    _nested("100000 nested arrays", 100_000, "[", "", "]"),
    _nested("100 nested objects", 100, '{"a": ', "1", "}"),
    _nested("900 nested objects", 900, '{"a": ', "1", "}"),
)

LONG_STRINGS = (
    _string("100k-char string", "a" * 100_000),
    _string("100k-char expression", "[" + "a" * 99_998 + "]"),
    _string("100k spaces", " " * 100_000),
    _string("10k newlines", "\n" * 10_000),
)

UNICODE = (
    Raw("lone high surrogate \\ud800", '"\\ud800"'),
    Raw("lone low surrogate \\udfff", '"\\udfff"'),
    Raw("surrogates reversed \\udc00\\ud800", '"a\\udc00\\ud800b"'),
    _string("NUL", "a\x00b"),
    _string("BEL and ANSI escape", "\x07\x1b[31mred\x1b[0m"),
    _string("newline in a name", "first\nsecond"),
    _string("carriage return", "over\rwrite"),
    _string("C1 control NEL", "a\x85b"),
    _string("line and paragraph separators", "a\u2028b\u2029c"),
    _string("right-to-left override", "\u202eevil\u202c"),
    _string("right-to-left mark", "\u200fname"),
    _string("byte order mark", "\ufeffname"),
    _string("emoji (a surrogate pair)", "gpu-\U0001f600"),
    _string("combining marks", "e" + "\u0301" * 50),
    _string("XML-special characters", '<a href="x">&amp;</a>]]>'),
    _string("markdown table breakers", "| a | b |\n|---|"),
)

VERSIONS = (
    _string("version '1.'", "1."),
    _string("version '1.2.3.4'", "1.2.3.4"),
    _string("version 'v1'", "v1"),
    _string("version '-1.0'", "-1.0"),
    _string("version with 30 digits", "1." + "9" * 30),
)

IDS = (
    _string("id '/'", "/"),
    _string("id '//'", "//"),
    _string("id with empty segments", "/subscriptions//resourceGroups//providers//"),
    _string("id of a provider only", "/providers/Microsoft.Compute"),
    _string("type with empty segments", "Microsoft.Compute//virtualMachines/"),
    _string("type without a namespace", "virtualMachines"),
    _string("type of 40 segments", "/".join(["Microsoft.Compute"] + ["a"] * 39)),
)

# ARM template expressions: malformed, of missing names, failing functions, deeply nested.
EXPRESSIONS = tuple(
    _string(text if len(text) < 60 else f"{text[:40]}... ({len(text)} chars)", text)
    for text in (
        "[",
        "[]",
        "[[",
        "[concat(",
        "[concat('a',,'b')]",
        "['unterminated]",
        "[concat('a', 'b')]]",
        "[parameters('missing')]",
        "[variables('missing')]",
        "[parameters()]",
        "[parameters(1)]",
        "[reference('missing').properties.x]",
        "[resourceId()]",
        "[resourceId('Microsoft.Compute/virtualMachines')]",
        "[json('{')]",
        "[int('x')]",
        "[int('99999999999999999999999999')]",
        "[add(9223372036854775807, 1)]",
        "[div(1, 0)]",
        "[mod(1, 0)]",
        "[base64ToString('!!')]",
        "[format('{0}{1}', 1)]",
        "[format('{', 1)]",
        "[split('a', createArray())]",
        "[first(createArray())]",
        "[last('')]",
        "[substring('abc', 2, 5)]",
        "[skip('abc', -5)]",
        "[take(createArray(1), -1)]",
        "[createObject('a')]",
        "[toLower(1)]",
        "[length(null())]",
        "[empty(1)]",
        "[contains(1, 2)]",
        "[union(1, 2)]",
        "[items(1)]",
        "[indexOf(1, 'a')]",
        "[range(0, 100000)]",
        "[padLeft('a', 100000)]",
        "[dateTimeAdd('x', 'P1D')]",
        "[if(true(), 1)]",
        "[copyIndex()]",
        "[copyIndex('missing')]",
        "[guid()]",
        "[uniqueString()]",
        "[environment().missing.deeper]",
        "[deployment().properties.templateLink.uri]",
        "[subscription().missing]",
        "[createArray(1)[5]]",
        "[createObject('a', 1)['b']]",
        "[lambda('x', lambdaVariables('y'))]",
        "[map(range(0, 3), lambda('i', lambdaVariables('y')))]",
        "[concat(" * 50 + "'a'" + ")" * 50 + "]",
        "[concat(" * 500 + "'a'" + ")" * 500 + "]",
        "[" + "createArray(" * 300 + ")" * 300 + "]",
    )
)

VALUES = WRONG_TYPES + NUMBERS + DEEP + LONG_STRINGS + UNICODE + VERSIONS + IDS + EXPRESSIONS

# Keys a reader gives meaning to: inserting one where it was not expected reaches code paths
# that the fixtures themselves never take.
MEANINGFUL_KEYS = (
    "type",
    "name",
    "id",
    "location",
    "properties",
    "sku",
    "tags",
    "copy",
    "condition",
    "dependsOn",
    "apiVersion",
    "scope",
    "existing",
    "resources",
    "template",
    "templateLink",
    "parameters",
    "variables",
    "functions",
    "definitions",
    "$ref",
    "languageVersion",
    "expressionEvaluationOptions",
    "outputs",
    "mode",
    "count",
    "input",
    "nullable",
    "change",
    "actions",
    "before",
    "after",
    "after_unknown",
    "after_sensitive",
    "values",
    "root_module",
    "child_modules",
    "address",
    "provider_name",
    "configuration",
    "resource_drift",
    "changes",
    "changeType",
    "resourceId",
    "delta",
    "propertyChanges",
    "status",
    "error",
)

NEW_KEYS = (
    *(_string(key, key) for key in MEANINGFUL_KEYS),
    Raw("key: lone surrogate", '"\\ud800"'),
    _string("key: empty", ""),
    _string("key: 10k chars", "k" * 10_000),
    _string("key: with a slash and tilde", "a/b~c"),
)


@dataclass(frozen=True)
class Mutation:
    """One change at one path: ``replace`` the value, ``delete`` it, ``rename`` its key, or
    ``insert`` a member (``key`` into an object, at the end of an array)."""

    kind: str
    path: JsonPath
    value: Raw | None = None
    key: Raw | None = None

    def describe(self) -> str:
        where = "/" + "/".join(str(token) for token in self.path)
        parts = [self.kind, where]
        if self.key is not None:
            parts.append(f"key {self.key.label!r}")
        if self.value is not None:
            parts.append(f"value {self.value.label!r}")
        return " ".join(parts)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.describe())


@dataclass(frozen=True)
class Case:
    """A fixture, the mutations applied to it, and the report format to write."""

    fixture: str
    mutations: tuple[Mutation, ...]
    fmt: str

    def describe(self) -> str:
        return f"{self.fixture} --format {self.fmt}: " + "; ".join(m.describe() for m in self.mutations)

    def _repr_pretty_(self, printer: Any, cycle: bool) -> None:
        printer.text(self.describe())

    def text(self) -> str:
        """The mutated fixture as JSON text."""
        document = _load(self.fixture)
        for mutation in self.mutations:
            document = _apply(document, mutation)
        return _dump(document)


_CACHE: dict[str, Any] = {}


def _load(fixture: str) -> Any:
    """A fresh copy of a fixture's JSON value (parsed once per session)."""
    if fixture not in _CACHE:
        _CACHE[fixture] = (FIXTURES / fixture).read_text(encoding="utf-8")
    return json.loads(_CACHE[fixture])


def _paths(node: Any, prefix: JsonPath = ()) -> Iterator[tuple[JsonPath, Any]]:
    yield prefix, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _paths(value, (*prefix, index))


def _apply(document: Any, mutation: Mutation) -> Any:
    """``document`` with ``mutation`` applied; unchanged when an earlier mutation removed the path."""
    if not mutation.path:
        return mutation.value if mutation.kind == "replace" else document
    parent = document
    for token in mutation.path[:-1]:
        if not _has(parent, token):
            return document
        parent = parent[token]
    last = mutation.path[-1]
    if not _has(parent, last):
        return document
    if mutation.kind == "replace":
        parent[last] = mutation.value
    elif mutation.kind == "delete":
        del parent[last]
    elif mutation.kind == "rename" and isinstance(parent, dict):
        items = list(parent.items())
        parent.clear()
        parent.update((mutation.key if k == last else k, v) for k, v in items)
    elif mutation.kind == "insert" and isinstance(parent[last], dict):
        parent[last][mutation.key] = mutation.value
    elif mutation.kind == "insert" and isinstance(parent[last], list):
        parent[last].append(mutation.value)
    return document


def _has(container: Any, token: str | int) -> bool:
    if isinstance(container, dict):
        return token in container
    return isinstance(container, list) and isinstance(token, int) and 0 <= token < len(container)


def _dump(node: Any) -> str:
    if isinstance(node, Raw):
        return node.text
    if isinstance(node, dict):
        members = (f"{k.text if isinstance(k, Raw) else json.dumps(k)}: {_dump(v)}" for k, v in node.items())
        return "{" + ", ".join(members) + "}"
    if isinstance(node, list):
        return "[" + ", ".join(_dump(v) for v in node) + "]"
    return json.dumps(node)


def _references(document: Any) -> tuple[Raw, ...]:
    """Expressions naming the template's own parameters and variables: placed at the right
    path, one refers to itself, or to a name whose value is now of the wrong type."""
    if not isinstance(document, dict):
        return ()
    found: list[Raw] = []
    for function in ("parameters", "variables"):
        names = document.get(function)
        for name in names if isinstance(names, dict) else ():
            for text in (f"[{function}('{name}')]", f"[concat({function}('{name}'), '-x')]"):
                found.append(_string(text, text))
    return tuple(found)


def autoscale_nodes(document: Any) -> list[tuple[JsonPath, Any]]:
    """Inside each autoscale setting's ``after.properties`` in a what-if result: every object and
    array (profiles, capacities, rules, metric triggers, scale actions) and the strings the rules
    read, where a value of another type meets a reader (issue 37: a ``metricTrigger`` that was
    ``false`` ended in an internal error). Leaves such as thresholds are left to `cases`."""
    found: list[tuple[JsonPath, Any]] = []
    for path, node in _paths(document):
        if path[-1:] != ("after",) or not isinstance(node, dict) or not isinstance(node.get("properties"), dict):
            continue
        if str(node.get("type", "")).lower() != "microsoft.insights/autoscalesettings":
            continue
        for inner, value in _paths(node["properties"], (*path, "properties")):
            if isinstance(value, dict | list) or inner[-1] in _AUTOSCALE_READS:
                found.append((inner, value))
    return found


_AUTOSCALE_READS = frozenset({"targetResourceUri", "metricName"})


Aim = Callable[[Any], list[tuple[JsonPath, Any]]]
"""Picks the (path, node) pairs of a document that mutations may land on."""


@functools.cache
def _places(fixture: str, aim: Aim | None) -> st.SearchStrategy[tuple[JsonPath, Any]]:
    """Where a mutation of ``fixture`` may land: ``aim``'s nodes, or every node. Made once per
    fixture, not once per example: walking a whole fixture, and Hypothesis labelling a strategy
    that samples thousands of nodes (it hashes every one), cost more than a scan of it. The
    nodes are only looked at; `Case.text` applies the mutations to a fresh copy."""
    document = _load(fixture)
    return st.sampled_from(aim(document) if aim is not None else list(_paths(document)))


@functools.cache
def _values(fixture: str) -> st.SearchStrategy[Raw]:
    """What a mutation of ``fixture`` may bring: any of `VALUES`, or a reference to one of its
    own parameters or variables."""
    return st.sampled_from(VALUES + _references(_load(fixture)))


@st.composite
def mutations(
    draw: st.DrawFn, places: st.SearchStrategy[tuple[JsonPath, Any]], values: st.SearchStrategy[Raw]
) -> Mutation:
    """One mutation at one of ``places``, of a kind that fits the node found there, bringing one
    of ``values``."""
    path, node = draw(places)
    kinds = ["replace"]
    if path:
        kinds.append("delete")
        if isinstance(path[-1], str):
            kinds.append("rename")
    if isinstance(node, dict | list):
        kinds.append("insert")
    kind = draw(st.sampled_from(kinds))
    if kind == "replace":
        return Mutation(kind, path, value=draw(values))
    if kind == "delete":
        return Mutation(kind, path)
    if kind == "rename":
        return Mutation(kind, path, key=draw(st.sampled_from(NEW_KEYS)))
    key = draw(st.sampled_from(NEW_KEYS)) if isinstance(node, dict) else None
    return Mutation(kind, path, value=draw(values), key=key)


@st.composite
def cases(
    draw: st.DrawFn,
    fixtures: tuple[str, ...] = FIXTURE_FILES,
    aim: Aim | None = None,
    values: st.SearchStrategy[Raw] | None = None,
) -> Case:
    """One of ``fixtures`` with one to three mutations, and a report format; ``aim`` picks the
    nodes the mutations may land on, and ``values`` what they bring (by default any of `VALUES`
    or a reference)."""
    fixture = draw(st.sampled_from(fixtures))
    brought = values if values is not None else _values(fixture)
    changes = draw(st.lists(mutations(_places(fixture, aim), brought), min_size=1, max_size=3))
    return Case(fixture, tuple(changes), draw(st.sampled_from(FORMATS)))


def autoscale_cases() -> st.SearchStrategy[Case]:
    """What-if autoscale settings mutated inside (`autoscale_nodes`), a value of the wrong JSON
    type as likely as all the other values together."""
    wrong_first = st.one_of(st.sampled_from(WRONG_TYPES), st.sampled_from(VALUES))
    return cases(AUTOSCALE_FIXTURES, autoscale_nodes, wrong_first)
