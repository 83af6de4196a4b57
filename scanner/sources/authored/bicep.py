"""Declarations in a ``.bicep`` file: resources by symbolic name, and modules with their path.

A child resource declared inside its parent's body is ``parent::child``, the symbolic name
``bicep build`` gives it. Property lines follow the body's object and array literals; a
``[for ...]`` array stands for every index (``*``); anything else is an opaque expression.

A file compiles to ``languageVersion`` 2.0, whose ``resources`` object is keyed by symbolic
name, only when it uses a feature that needs it (a user-defined type, an import, ...); else to
1.0, whose ``resources`` array says nothing of names. Each file decides for itself, so a module
tree mixes both. `BicepFile.emitted` is what ``bicep build`` writes into a 1.0 array, in its
order, which is what lets a 1.0 entry be named: the resources that are not ``existing``, in the
order its resource symbol visitor walks them, then the modules. The visitor walks the nested
scopes first, each scope's own nested scopes before its declarations, then the top-level
resources (Azure/bicep at 9beb0fee60ca53458f41492b699af440367b240b:
src/Bicep.Core/Emit/TemplateWriter.cs ``EmitResources``, src/Bicep.Core/Intermediate/
ExpressionBuilder.cs, src/Bicep.Core/Semantics/FileSymbol.cs ``Descendants``,
LocalScope.cs ``Descendants``, DeclarationVisitor.cs; the per-file language version:
src/Bicep.Core/Emit/EmitterSettings.cs).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from scanner.model.places import Declaration, PropertyPath, Written
from scanner.sources.authored.syntax import BICEP, DeclarationText, Source

if TYPE_CHECKING:
    from tree_sitter import Node

FALLBACK = "are shown at the module line that deploys them, else in the compiled template"


@dataclass(frozen=True)
class Module:
    """A ``module`` declaration: its line, and the file it deploys when that is a local path."""

    declaration: Declaration
    file: Path | None
    display: str | None


_DEPLOYMENT = "microsoft.resources/deployments"  # the type a module compiles to


class Emitted(NamedTuple):
    """One entry of a compiled ``languageVersion`` 1.0 ``resources`` array: the declaration's
    symbolic name, and the lower-cased type the entry must have."""

    name: str
    type: str


@dataclass
class BicepFile:
    resources: dict[str, Declaration] = field(default_factory=dict)
    modules: dict[str, Module] = field(default_factory=dict)
    emitted: list[Emitted] = field(default_factory=list)
    clean: bool = True  # every declaration parsed


def read_bicep(path: Path, display: str, warnings: list[str]) -> BicepFile | None:
    """The file's declarations, or None (with a warning) when it cannot be read. A declaration
    that does not parse (tree-sitter recovers around it) is left out, with a warning."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        warnings.append(f"{display}: cannot read ({exc.strerror}); its resources {FALLBACK}")
        return None
    source = Source(BICEP, data)
    error = source.first_error_line()
    if error is not None:  # newer syntax than the grammar knows, or a real error: keep the rest
        warnings.append(f"{display}:{error}: azai cannot parse this; resources declared there {FALLBACK}")
    found = BicepFile(clean=error is None)
    top: list[Emitted | None] = []
    modules: list[Emitted] = []
    for node in source.root.named_children:
        if node.has_error:
            continue
        if node.type == "resource_declaration":
            top.append(_resource(source, node, display, None, found))
        elif node.type == "module_declaration":
            name, target = _identifier(source, node), _string_child(source, node)
            line, column = source.line_column(node)
            local = target is not None and ":" not in target  # br:, br/alias:, ts: are registries
            found.modules[name] = Module(
                Declaration(display, line, column),
                path.parent / target if local and target else None,
                posixpath.normpath(posixpath.join(posixpath.dirname(display), target)) if local and target else None,
            )
            modules.append(Emitted(name, _DEPLOYMENT))
    found.emitted.extend(entry for entry in top if entry is not None)
    found.emitted.extend(modules)
    return found


def _resource(source: Source, node: Node, display: str, parent: Emitted | None, found: BicepFile) -> Emitted | None:
    """Record the declaration and those nested in it; append to ``found.emitted`` what its
    nested scope emits (each nested declaration's own nested ones first, then the nested
    declarations); return its own entry, or None when it is ``existing`` (not emitted)."""
    name = _identifier(source, node)
    symbolic = f"{parent.name}::{name}" if parent else name
    own = Emitted(symbolic, _full_type(source, node, parent))
    text = source.declaration(node, display)
    written: dict[PropertyPath, Written] = {}
    children: list[Emitted | None] = []
    body = _body(node.named_children[-1])
    if body is not None:
        for prop in (c for c in body.named_children if c.type == "object_property"):
            child = next((c for c in prop.named_children if c.type == "resource_declaration"), None)
            if child is not None:
                children.append(_resource(source, child, display, own, found))
            else:
                _property(text, prop, (), written)
    found.emitted.extend(entry for entry in children if entry is not None)
    found.resources.setdefault(symbolic, text.declaration(written))
    return None if any(c.type == "existing" for c in node.children) else own


def _full_type(source: Source, node: Node, parent: Emitted | None) -> str:
    """The lower-cased resource type without its API version: a nested declaration may give
    only its last segment (``'computes'``), which extends its parent's type."""
    written = (_string_child(source, node) or "").split("@", 1)[0].lower()
    return f"{parent.type}/{written}" if parent is not None and "/" not in written else written


def _body(value: Node) -> Node | None:
    """The object a declaration deploys, through ``[for ...: ...]`` and ``if (...)``."""
    node: Node | None = value
    while node is not None and node.type != "object":
        if node.type == "for_statement":
            node = node.child_by_field_name("body")
        elif node.type == "if_statement":
            node = next((c for c in node.named_children if c.type == "object"), None)
        else:
            return None
    return node


def _property(text: DeclarationText, prop: Node, prefix: PropertyPath, written: dict[PropertyPath, Written]) -> None:
    key = _key(text.source, prop.named_children[0]) if prop.named_children else None
    if key is None:
        return
    _value(text, prop, prop.named_children[-1], (*prefix, key.lower()), written)


def _value(
    text: DeclarationText, at: Node, value: Node, path: PropertyPath, written: dict[PropertyPath, Written]
) -> None:
    """The property at ``path`` starts at ``at``; follow object and array literals."""
    literal = value.type in ("object", "array", "for_statement")
    written[path] = text.written(at, opaque=not literal)
    if value.type == "object":
        for prop in (c for c in value.named_children if c.type == "object_property"):
            _property(text, prop, path, written)
    elif value.type == "array":
        for index, item in enumerate(c for c in value.named_children if not c.is_extra):  # comments are extras
            _value(text, item, item, (*path, str(index)), written)
    elif value.type == "for_statement":
        body = _body(value)
        if body is not None:
            _value(text, body, body, (*path, "*"), written)


def _identifier(source: Source, node: Node) -> str:
    return next((source.text(c) for c in node.named_children if c.type == "identifier"), "")


def _string_child(source: Source, node: Node) -> str | None:
    string = next((c for c in node.named_children if c.type == "string"), None)
    return _plain_string(source, string) if string is not None else None


def _plain_string(source: Source, node: Node) -> str | None:
    """A string literal's text; None when it interpolates."""
    if any(c.type == "interpolation" for c in node.named_children):
        return None
    return "".join(source.text(c) for c in node.named_children if c.type == "string_content")


def _key(source: Source, node: Node) -> str | None:
    if node.type == "identifier":
        return source.text(node)
    if node.type == "string":
        return _plain_string(source, node)
    return None
