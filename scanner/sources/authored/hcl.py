"""Terraform ``resource`` blocks in one module folder, with the lines of what they write.

Nested blocks are indexed in the order written (``default_node_pool.0``), as the plan lists
them; a ``dynamic`` block's ``content`` stands for every index (``*``). Object and tuple values
are followed (an azapi ``body = { properties = { ... } }``, also inside ``jsonencode(...)``);
any other expression is opaque: a deeper property may come from it, so it is pointed at.
"""

from __future__ import annotations

import posixpath
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from scanner.model.places import Declaration, Written
from scanner.sources.authored.syntax import HCL, Source

if TYPE_CHECKING:
    from tree_sitter import Node

Path_ = tuple[str, ...]


def read_module(directory: Path, display: str, warnings: list[str]) -> dict[str, Declaration]:
    """``TYPE.NAME`` -> its declaration, for every ``resource`` block in the folder's ``*.tf``.

    A file that does not parse is skipped with a warning: its resources keep the plan's
    location, which is still right, only less useful.
    """
    found: dict[str, Declaration] = {}
    for path in sorted(directory.glob("*.tf")):
        shown = posixpath.normpath(posixpath.join(display, path.name))
        try:
            data = path.read_bytes()
        except OSError as exc:
            warnings.append(f"{shown}: cannot read ({exc.strerror}); its resources point at the plan")
            continue
        source = Source(HCL, data)
        error = source.first_error_line()
        if error is not None:
            warnings.append(f"{shown}:{error}: not valid HCL; its resources point at the plan")
            continue
        for block in _children(source.root, "body", "block"):
            labels = _labels(source, block)
            if _name(source, block) == "resource" and len(labels) == 2:
                written: dict[Path_, Written] = {}
                body = _body(block)
                if body is not None:
                    _walk_body(source, body, (), written)
                line, column = source.line_column(block)
                found.setdefault(f"{labels[0]}.{labels[1]}", Declaration(shown, line, column, written))
    return found


def _children(node: Node, *types: str) -> list[Node]:
    """The named children down a chain of node types (``body`` then ``block``)."""
    level = [node]
    for wanted in types:
        level = [c for n in level for c in n.named_children if c.type == wanted]
    return level


def _name(source: Source, block: Node) -> str:
    return source.text(block.named_children[0]) if block.named_children else ""


def _labels(source: Source, block: Node) -> list[str]:
    return [_string(source, c) or "" for c in block.named_children if c.type == "string_lit"]


def _string(source: Source, node: Node) -> str | None:
    """The text of a string literal without interpolation, else None."""
    parts = [c for c in node.named_children if c.type not in ("quoted_template_start", "quoted_template_end")]
    if not parts:
        return ""
    return source.text(parts[0]) if len(parts) == 1 and parts[0].type == "template_literal" else None


def _body(block: Node) -> Node | None:
    return next((c for c in block.named_children if c.type == "body"), None)


def _walk_body(source: Source, body: Node, prefix: Path_, written: dict[Path_, Written]) -> None:
    seen: Counter[str] = Counter()
    for node in body.named_children:
        if node.type == "attribute":
            name = source.text(node.named_children[0]).lower()
            _record(source, node, node.named_children[-1], (*prefix, name), written)
        elif node.type == "block":
            name = _name(source, node).lower()
            labels = _labels(source, node)
            inner = _body(node)
            if name == "dynamic" and labels:
                key = (*prefix, labels[0].lower())
                written.setdefault(key, source.written(node, False))
                written.setdefault((*key, "*"), source.written(node, False))
                content = (
                    next((b for b in _children(inner, "block") if _name(source, b) == "content"), None)
                    if inner
                    else None
                )
                content_body = _body(content) if content is not None else None
                if content_body is not None:
                    _walk_body(source, content_body, (*key, "*"), written)
                continue
            index = str(seen[name])
            seen[name] += 1
            written.setdefault((*prefix, name), source.written(node, False))
            written[(*prefix, name, index)] = source.written(node, False)
            if inner is not None:
                _walk_body(source, inner, (*prefix, name, index), written)


def _record(source: Source, at: Node, value: Node, path: Path_, written: dict[Path_, Written]) -> None:
    """The property at ``path`` starts at ``at``; follow its value where it is a literal collection."""
    collection = _collection(source, value)
    written[path] = source.written(at, opaque=collection is None)
    if collection is None:
        return
    if collection.type == "object":
        for element in (c for c in collection.named_children if c.type == "object_elem"):
            key_node, item = element.child_by_field_name("key"), element.child_by_field_name("val")
            key = _key(source, key_node) if key_node is not None else None
            if key is not None and item is not None:
                _record(source, element, item, (*path, key.lower()), written)
    else:
        items = [c for c in collection.named_children if c.type == "expression"]
        for index, item in enumerate(items):
            _record(source, item, item, (*path, str(index)), written)


def _collection(source: Source, node: Node | None) -> Node | None:
    """The object or tuple literal a value is, looking through wrappers and ``jsonencode()``."""
    while node is not None:
        if node.type in ("object", "tuple"):
            return node
        if node.type in ("expression", "collection_value", "function_arguments") and node.named_child_count == 1:
            node = node.named_children[0]
        elif node.type == "function_call" and _name(source, node) == "jsonencode":
            node = next((c for c in node.named_children if c.type == "function_arguments"), None)
        else:
            return None
    return None


def _key(source: Source, node: Node) -> str | None:
    """An object key written as a name or a plain string; None for a computed key."""
    inner = node.named_children[0] if node.type == "expression" and node.named_child_count == 1 else node
    if inner.type == "variable_expr" and inner.named_child_count == 1:
        return source.text(inner.named_children[0])
    if inner.type == "literal_value" and inner.named_child_count == 1 and inner.named_children[0].type == "string_lit":
        return _string(source, inner.named_children[0])
    return None
