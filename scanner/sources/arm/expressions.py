"""Parsing ARM template expressions (``[concat('a', parameters('b'))]``) into a small tree.

Grammar: ``expr := primary ('.' name | '[' expr ']')*`` and
``primary := 'string' | number | name ['.' name] '(' [expr (',' expr)*] ')'``.
Malformed text raises `ExpressionError`; the evaluator turns that into an `Unknown`, because a
real template (StableAzure's ``"[resourceId(..., variables('vmName')]]"``) can be malformed and
must not crash the scan.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any


class ExpressionError(ValueError):
    """The text is not a valid ARM expression."""


@dataclass(frozen=True, slots=True)
class Literal:
    value: Any


@dataclass(frozen=True, slots=True)
class Call:
    name: str
    args: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Member:
    target: Node
    name: str


@dataclass(frozen=True, slots=True)
class Index:
    target: Node
    index: Node


Node = Literal | Call | Member | Index

_TOKEN = re.compile(
    r"\s*(?:(?P<string>'(?:[^']|'')*')|(?P<number>-?\d+(?:\.\d+)?)|(?P<name>[A-Za-z_$][A-Za-z0-9_$]*)|(?P<punct>[().,\[\]]))"
)


def is_expression(text: str) -> bool:
    """A JSON string is an expression when it is wrapped in ``[`` ``]`` and not escaped as ``[[``."""
    return len(text) >= 2 and text[0] == "[" and text[-1] == "]" and not text.startswith("[[")


def unescape_literal(text: str) -> str:
    """``[[x]`` in a template is the literal string ``[x]``."""
    return text[1:] if text.startswith("[[") else text


def _tokenize(text: str) -> list[tuple[str, str]]:
    tokens: list[tuple[str, str]] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        match = _TOKEN.match(text, pos)
        if not match or match.end() == pos:
            raise ExpressionError(f"unexpected character {text[pos : pos + 10]!r}")
        kind = match.lastgroup or ""
        tokens.append((kind, match.group(kind)))
        pos = match.end()
    return tokens


class _Parser:
    def __init__(self, tokens: list[tuple[str, str]]) -> None:
        self.tokens = tokens
        self.pos = 0

    def peek(self) -> tuple[str, str] | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self, value: str | None = None) -> tuple[str, str]:
        token = self.peek()
        if token is None or (value is not None and token[1] != value):
            raise ExpressionError(f"expected {value or 'more input'}, found {token[1] if token else 'end'}")
        self.pos += 1
        return token

    def expression(self) -> Node:
        node = self.primary()
        while True:
            token = self.peek()
            if token == ("punct", "."):
                self.take()
                node = Member(node, self.take()[1])
            elif token == ("punct", "["):
                self.take()
                index = self.expression()
                self.take("]")
                node = Index(node, index)
            else:
                return node

    def primary(self) -> Node:
        kind, value = self.take()
        if kind == "string":
            return Literal(value[1:-1].replace("''", "'"))
        if kind == "number":
            return Literal(float(value) if "." in value else int(value))
        if kind != "name":
            raise ExpressionError(f"unexpected {value!r}")
        name = value
        if (
            self.peek() == ("punct", ".")
            and self.pos + 2 < len(self.tokens)
            and self.tokens[self.pos + 2] == ("punct", "(")
        ):
            self.take()
            name = f"{name}.{self.take()[1]}"
        self.take("(")
        args: list[Node] = []
        if self.peek() != ("punct", ")"):
            args.append(self.expression())
            while self.peek() == ("punct", ","):
                self.take()
                args.append(self.expression())
        self.take(")")
        return Call(name.lower(), tuple(args))


@functools.lru_cache(maxsize=8192)
def parse(text: str) -> Node:
    """Parse the inside of an expression (without the surrounding brackets).

    Cached: compiled Bicep repeats the same expressions in every copy of a module, and the
    tree is immutable."""
    parser = _Parser(_tokenize(text))
    node = parser.expression()
    if parser.peek() is not None:
        raise ExpressionError(f"unexpected {parser.peek()[1]!r} after the expression")  # type: ignore[index]
    return node
