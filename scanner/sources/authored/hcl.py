"""Terraform ``resource`` blocks in one module folder, with the lines of what they write.

Nested blocks are indexed in the order written (``default_node_pool.0``), as the plan lists
them; a ``dynamic`` block's ``content`` stands for every index (``*``). Object and tuple values
are followed (an azapi ``body = { properties = { ... } }``, also inside ``jsonencode(...)``);
any other expression is opaque: a deeper property may come from it, so it is pointed at.

Only the blocks the plan declares are parsed, each on its own: ``terraform fmt`` starts every
top-level block at column 0, so a block's text runs from its ``resource`` line to the next
top-level keyword. That keeps the work and the memory to what the plan needs (a whole 2.9 MB
file's syntax tree takes 200 MiB). Whatever that finds is still parsed by tree-sitter, and a
slice that does not parse as exactly that block (a keyword inside a heredoc, an unformatted
file) sends the file to a whole-file parse instead.
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from scanner.model.places import Declaration, PropertyPath, Written
from scanner.sources.authored.syntax import HCL, DeclarationText, Source

if TYPE_CHECKING:
    from tree_sitter import Node

_RESOURCE = re.compile(rb'^resource[ \t]+"([^"\n]*)"[ \t]+"([^"\n]*)"[ \t]*\{', re.M)
_TOP_LEVEL = re.compile(
    rb"^(?:resource|data|module|variable|output|locals|provider|terraform|moved|import|removed|check)\b", re.M
)
_QUOTED = re.compile(rb'"([^"\n]*)"')
_WRAPPERS = frozenset(("expression", "collection_value", "function_arguments"))


class _Unsliced(Exception):
    """A located slice is not one well-formed block: parse the whole file instead."""


def read_module(directory: Path, display: str, wanted: set[str], warnings: list[str]) -> dict[str, Declaration]:
    """``TYPE.NAME`` -> its declaration, for the ``wanted`` resource blocks in the folder's ``*.tf``.

    A file that does not parse is skipped with a warning: its resources keep the plan's
    location, which is still right, only less useful.
    """
    found: dict[str, Declaration] = {}
    sliced: list[tuple[bytes, str]] = []
    for path in sorted(directory.glob("*.tf")):
        shown = posixpath.normpath(posixpath.join(display, path.name))
        try:
            data = path.read_bytes()
        except OSError as exc:
            warnings.append(f"{shown}: cannot read ({exc.strerror}); its resources point at the plan")
            continue
        try:
            here = _sliced(data, shown, wanted)
            sliced.append((data, shown))
        except _Unsliced:
            here = _whole(data, shown, wanted, warnings)
        for key, declaration in here.items():
            found.setdefault(key, declaration)
    for data, shown in sliced:  # a block not at column 0: only a whole parse of its file finds it
        if not wanted - found.keys():
            break
        quoted = set(_QUOTED.findall(data))  # one pass, however many blocks are missing
        missing = {key for key in wanted - found.keys() if all(part.encode() in quoted for part in key.split("."))}
        for key, declaration in _whole(data, shown, missing, warnings).items() if missing else ():
            found.setdefault(key, declaration)
    return found


def _sliced(data: bytes, shown: str, wanted: set[str]) -> dict[str, Declaration]:
    """The wanted blocks, each parsed from its own located text. A file with a block comment or
    a heredoc is parsed whole: only a parser knows whether a ``resource`` line is inside one."""
    if b"/*" in data or b"<<" in data:
        raise _Unsliced
    ends = [m.start() for m in _TOP_LEVEL.finditer(data)]
    ends.append(len(data))
    found: dict[str, Declaration] = {}
    line, counted, next_end = 1, 0, 0
    for match in _RESOURCE.finditer(data):
        key = f"{match.group(1).decode('utf-8', 'replace')}.{match.group(2).decode('utf-8', 'replace')}"
        if key not in wanted:
            continue
        if key in found:  # Terraform refuses a second block of one name: let the whole parse decide
            raise _Unsliced
        start = match.start()
        line += data.count(b"\n", counted, start)
        counted = start
        while ends[next_end] <= start:
            next_end += 1
        source = Source(HCL, data[start : ends[next_end]], first_line=line)
        blocks = (
            [c for c in source.root.named_children[0].named_children if c.type == "block"]
            if not source.root.has_error
            else []
        )
        if not blocks or _resource_key(source, blocks[0]) != key:
            raise _Unsliced
        found[key] = _declaration(source, blocks[0], shown)
    return found


def _whole(data: bytes, shown: str, wanted: set[str], warnings: list[str]) -> dict[str, Declaration]:
    source = Source(HCL, data)
    error = source.first_error_line()
    if error is not None:  # tree-sitter recovers around it: the blocks that parse are kept
        warnings.append(f"{shown}:{error}: azai cannot parse this; resources declared there point at the plan")
    found: dict[str, Declaration] = {}
    for block in _blocks(source.root.named_children[0] if source.root.named_children else None):
        key = _resource_key(source, block)
        if key in wanted and key not in found and not block.has_error:
            found[key] = _declaration(source, block, shown)
    return found


def _resource_key(source: Source, block: Node) -> str | None:
    labels = _labels(source, block)
    return f"{labels[0]}.{labels[1]}" if _name(source, block) == "resource" and len(labels) == 2 else None


def _declaration(source: Source, block: Node, shown: str) -> Declaration:
    text = source.declaration(block, shown)
    written: dict[PropertyPath, Written] = {}
    body = _body(block)
    if body is not None:
        _walk_body(text, body, (), written)
    return text.declaration(written)


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


def _blocks(body: Node | None) -> list[Node]:
    return [c for c in body.named_children if c.type == "block"] if body is not None else []


def _body(block: Node) -> Node | None:
    return next((c for c in block.named_children if c.type == "body"), None)


def _walk_body(text: DeclarationText, body: Node, prefix: PropertyPath, written: dict[PropertyPath, Written]) -> None:
    source = text.source
    seen: Counter[str] = Counter()
    for node in body.named_children:
        kind = node.type
        if kind == "attribute":
            children = node.named_children
            _record(text, node, children[-1], (*prefix, source.text(children[0]).lower()), written)
        elif kind == "block":
            name = _name(source, node).lower()
            here = text.written(node, False)
            inner = _body(node)
            labels = _labels(source, node) if name == "dynamic" else []
            if labels:  # dynamic "x" { content { ... } } writes x.* for every index
                key = (*prefix, labels[0].lower(), "*")
                written.setdefault(key[:-1], here)
                written.setdefault(key, here)
                content = (
                    next((b for b in inner.named_children if b.type == "block" and _name(source, b) == "content"), None)
                    if inner
                    else None
                )
                content_body = _body(content) if content is not None else None
                if content_body is not None:
                    _walk_body(text, content_body, key, written)
                continue
            index = str(seen[name])
            seen[name] += 1
            written.setdefault((*prefix, name), here)
            written[(*prefix, name, index)] = here
            if inner is not None:
                _walk_body(text, inner, (*prefix, name, index), written)


def _record(
    text: DeclarationText, at: Node, value: Node, path: PropertyPath, written: dict[PropertyPath, Written]
) -> None:
    """The property at ``path`` starts at ``at``; follow its value where it is a literal collection."""
    source = text.source
    collection = _collection(source, value)
    written[path] = text.written(at, opaque=collection is None)
    if collection is None:
        return
    if collection.type == "object":
        for element in collection.named_children:
            if element.type != "object_elem":
                continue
            key_node, item = element.child_by_field_name("key"), element.child_by_field_name("val")
            key = _key(source, key_node) if key_node is not None else None
            if key is not None and item is not None:
                _record(text, element, item, (*path, key.lower()), written)
    else:
        items = [c for c in collection.named_children if c.type == "expression"]
        for index, item in enumerate(items):
            _record(text, item, item, (*path, str(index)), written)


def _collection(source: Source, node: Node | None) -> Node | None:
    """The object or tuple literal a value is, looking through wrappers and ``jsonencode()``."""
    while node is not None:
        kind = node.type
        if kind == "object" or kind == "tuple":
            return node
        if kind in _WRAPPERS and node.named_child_count == 1:
            node = node.named_children[0]
        elif kind == "function_call" and _name(source, node) == "jsonencode":
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
