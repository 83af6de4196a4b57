"""Source positions of JSON values: the fast reader in `scanner.model.jsondoc` against the plain
definition of where a value starts.

A slow reference parser, written here character by character, records where every value of a
document is written; a pointer then resolves as the reader's documentation says (the first
of a duplicated key, arrays by ``"0"``, ``"1"``..., a ``tail`` falling back to keys that differ
only in case, a missing member stopping at the deepest value that exists). Every pointer of
each tricky document, and of seeded random ones with random blanks and escapes, must land
where the reference says. The third-party corpus, too large for the reference, is checked
by decoding the text again at each sampled position.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from scanner.model import jsondoc
from scanner.model.jsondoc import Document, load_document, parse_document, pointer_join
from tests.conftest import CORPUS

BLANKS = " \t\n\r"


@dataclass
class Node:
    """Where one value starts, and for an object or array its members (the first written of a
    duplicated key, in the order written)."""

    offset: int
    members: dict[str, Node] | None = field(default=None)


class Reference:
    """A slow, plain recursive-descent reader of valid JSON text, recording value offsets."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.root = self.value()

    def blanks(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos] in BLANKS:
            self.pos += 1

    def string(self) -> str:
        start = self.pos
        self.pos += 1
        while self.text[self.pos] != '"':
            self.pos += 2 if self.text[self.pos] == "\\" else 1
        self.pos += 1
        decoded: str = json.loads(self.text[start : self.pos])
        return decoded

    def value(self) -> Node:
        self.blanks()
        node = Node(self.pos)
        opener = self.text[self.pos]
        if opener in "{[":
            node.members = {}
            self.pos += 1
            index = 0
            while True:
                self.blanks()
                if self.text[self.pos] in "}]":
                    self.pos += 1
                    return node
                if self.text[self.pos] == ",":
                    self.pos += 1
                    self.blanks()
                if opener == "{":
                    key = self.string()
                    self.blanks()
                    assert self.text[self.pos] == ":"
                    self.pos += 1
                else:
                    key, index = str(index), index + 1
                node.members.setdefault(key, self.value())
        if opener == '"':
            self.string()
        else:
            while self.pos < len(self.text) and self.text[self.pos] not in ",]}" + BLANKS:
                self.pos += 1
        return node

    def line_column(self, offset: int) -> tuple[int, int]:
        return self.text.count("\n", 0, offset) + 1, offset - (self.text.rfind("\n", 0, offset) + 1) + 1

    def position(self, tokens: tuple[str, ...], tail: tuple[str, ...]) -> tuple[int, int, str]:
        """What ``Document.position(pointer_join("", *tokens), tail)`` must answer."""
        node: Node | None = self.root
        for token in tokens:
            node = node.members.get(token) if node is not None and node.members is not None else None
        if node is None:
            return 1, 1, ""
        resolved: list[str] = []
        for token in tail:
            if node.members is None:
                break
            key = token
            child = node.members.get(key)
            if child is None:  # as the reader has always done: the first key equal but for case, else ""
                key = next((k for k in node.members if k.lower() == token.lower()), "")
                child = node.members.get(key)
            if child is None:
                break
            node = child
            resolved.append(key)
        return (*self.line_column(node.offset), pointer_join(pointer_join("", *tokens), *resolved))

    def pointers(self) -> list[tuple[str, ...]]:
        found: list[tuple[str, ...]] = []

        def walk(node: Node, tokens: tuple[str, ...]) -> None:
            found.append(tokens)
            for key, child in (node.members or {}).items():
                walk(child, (*tokens, key))

        walk(self.root, ())
        return found


def _queries(reference: Reference) -> list[tuple[tuple[str, ...], tuple[str, ...]]]:
    """Every pointer, whole and split into pointer and tail at each point, with tails spelled
    in other cases or running into members that do not exist, and pointers that miss."""
    queries: list[tuple[tuple[str, ...], tuple[str, ...]]] = []
    for tokens in reference.pointers():
        for cut in range(len(tokens) + 1):
            head, tail = tokens[:cut], tokens[cut:]
            queries += [(head, tail), (head, (*tail, "missing", "deeper")), (head, tuple(t.upper() for t in tail))]
            queries += [(head, tuple(t.swapcase() for t in tail)), ((*head, "missing"), tail)]
    return queries


def _check(text: str, doc: Document | None = None) -> None:
    """Each query, on one document that keeps what earlier queries read and on a fresh one."""
    reference = Reference(text)
    doc = doc or Document("doc.json", text, json.loads(text))
    for tokens, tail in _queries(reference):
        expected = reference.position(tokens, tail)
        for reader in (doc, Document(doc.path, doc.text, doc.data)):
            position = reader.position(pointer_join("", *tokens), tail)
            assert (position.line, position.column, position.pointer) == expected, (tokens, tail)


TRICKY = {
    "plan-minified": '{"format_version":"1.2","planned_values":{"root_module":{"resources":[{"address":"a.b",'
    '"values":{"name":"x"}}]}},"resource_changes":[{"address":"a.b","change":{"actions":["create"],'
    '"before":null,"after":{"name":"x","tags":{"k":"v"},"rules":[{"bypass":["A","B"]}],"n":-1.5e+10}}},'
    '{"address":"c.d","change":{"actions":["delete"],"before":{},"after":null}}]}',
    "arm-crlf-tabs": '{\r\n\t"$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#",'
    '\r\n\t"resources": [\r\n\t\t{\r\n\t\t\t"type" :\t"Microsoft.Storage/storageAccounts",\r\n\t\t\t"properties"'
    '\r\n\t\t\t:\r\n\t\t\t{ "vmSize" : "x" , "Encryption":{\t} }\r\n\t\t}\r\n\t]\r\n}\r\n',
    "blanks-everywhere": ' \n\t{ \r\n"a" \t:\r\n [ 1 ,\n\t2 ,[ ] ,{ } , "x" ] , "b":{ } ,"c" :\n[\n]\n,"d":true }\n\t',
    "escaped-keys": '{"a\\"b": 1, "c\\\\d": {"e": 2}, "\\u00e9t\\u00e9": 3, "s\\/lash": 4, "x/y": 5, "t~0": 6,'
    ' "m~n": {"~1": [7]}, "\\ud83d\\ude00": 8, "tab\\there": 9, "\\"": 10, "\\\\": 11}',
    "duplicate-keys": '{"a": {"x": 1, "x": 2}, "b": 2, "a": {"y": 3}, "b": [4], "c": [{"k": 1, "k": {"z": 0}}]}',
    "unicode": '{"名前": "値", "emoji": "😀😀", "after": {"k": "é", "ключ": ["ü", {"ß": "x"}]},\n"😀": {"😀": 1}}',
    "nested-arrays": '{"a": [[[]], [1, [2, [3, [4, {"b": [[], {}]}]]]], [], [[[[5]]]]]}',
    "empty": '{"o": {}, "a": [], "o2": { }, "a2": [ \n ], "s": "", "deep": {"x": {"y": {}}}}',
    "brackets-in-strings": '{"a": "}{][\\"", "b": "\\\\", "c": "\\\\\\"", "d": "x\\\\\\\\", "e": "[{",'
    ' "f": {"g": "]}"}}',
    "keys-inside-values": '{"a": "\\"b\\": 1, \\"c\\":", "b": 2, "c": {"\\"d\\":": 3}, "x": ",", ":b": 1, ",": 2,'
    ' "\\",\\"": 3, "y": "\\",", "z": "a\\":"}',
    "keys-inside-values-minified": '{"a":"x",":b":1,",":2,"c":"d,","\\"":{"e,":"f"},"e":[",\\""],"f":"\\",\\""}',
    "numbers-and-literals": '{"a": [0, -0, 1E-2, -0.5e+10, 123456789012345678901234567890, true, false, null],'
    ' "b": -1, "c": 2.5}',
    "keys-that-differ-in-case": '{"vmSize": 1, "VMSIZE": 2, "Name": {"NAME": 3, "name": 4}, "": 5, "e": {"": 6}}',
}


@pytest.mark.parametrize("name", sorted(TRICKY))
def test_every_pointer_of_a_tricky_document_lands_where_its_value_is_written(name: str) -> None:
    _check(TRICKY[name])


def _random_value(rng: random.Random, depth: int) -> Any:
    roll = rng.random()
    if depth > 3 or roll < 0.4:
        return rng.choice([0, -2.5, 1e30, True, False, None, "", "x", '"', "\\", "}{][", '"a":', "é😀", "a/b~c"])
    keys = ["a", "A", "", "é", "😀", '"', "\\", ",", ":", "a/b", "m~n", "{", "0", "1"]
    if roll < 0.75:
        return {"pairs": [(rng.choice(keys), _random_value(rng, depth + 1)) for _ in range(rng.randint(0, 4))]}
    return [_random_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]


def _random_text(rng: random.Random, value: Any) -> str:
    """``value`` as JSON text with random blanks around every token, some characters escaped
    (``\\uXXXX``, ``\\/``) and objects' keys repeated as drawn."""

    def blank() -> str:
        return "".join(rng.choice([" ", "\t", "\n", "\r\n"]) for _ in range(rng.choice([0, 0, 1, 2])))

    def string(s: str) -> str:
        out = []
        for ch in s:
            if rng.random() < 0.15 and ord(ch) < 0x10000:
                out.append(f"\\u{ord(ch):04x}")
            elif ch == "/" and rng.random() < 0.5:
                out.append("\\/")
            else:
                out.append(json.dumps(ch, ensure_ascii=False)[1:-1])
        return '"' + "".join(out) + '"'

    def dump(v: Any) -> str:
        if isinstance(v, dict):
            items = [blank() + string(k) + blank() + ":" + blank() + dump(x) + blank() for k, x in v["pairs"]]
            return "{" + (",".join(items) or blank()) + "}"
        if isinstance(v, list):
            return "[" + (",".join(blank() + dump(x) + blank() for x in v) or blank()) + "]"
        return string(v) if isinstance(v, str) else json.dumps(v)

    return blank() + dump(value) + blank()


@pytest.mark.parametrize("seed", range(40))
def test_every_pointer_of_a_random_document_lands_where_its_value_is_written(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(10):
        value = _random_value(rng, 0)
        _check(_random_text(rng, value if isinstance(value, dict) else {"pairs": [("v", value)]}))


def test_a_tail_spelled_in_another_case_finds_the_key_as_written() -> None:
    text = '{"resources": [{"type": "t", "properties": {"hardwareProfile": {"vmSize": "x"}}}]}'
    doc = Document("t.json", text, json.loads(text))
    position = doc.position("/resources/0", ("Properties", "HARDWAREPROFILE", "vmsize"))
    assert position.pointer == "/resources/0/properties/hardwareProfile/vmSize"
    assert text[position.column - 1 :].startswith('"x"')


def test_a_missing_member_stops_at_the_deepest_value_that_exists() -> None:
    text = '{\n  "resources": [\n    {"properties": {"a": 1}}\n  ]\n}'
    doc = Document("t.json", text, json.loads(text))
    position = doc.position("/resources/0", ("properties", "missing", "a"))
    assert (position.line, position.column, position.pointer) == (3, 20, "/resources/0/properties")
    nowhere = doc.position("/nothing")
    assert (nowhere.line, nowhere.column, nowhere.pointer) == (1, 1, "")
    assert doc.position("/resources/1", ("properties",)) == nowhere


def test_a_key_written_twice_is_found_where_it_is_first_written() -> None:
    text = '{"a": {"x": 1},\n "a": {"y": 2}}'
    doc = Document("t.json", text, json.loads(text))
    assert (doc.position("/a").line, doc.position("/a").column) == (1, 7)
    assert doc.position("/a", ("y",)).pointer == "/a"  # the first "a" has no "y"


def test_a_loaded_document_knows_its_top_level_members_without_decoding_them_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Loading decodes the top-level members one by one and keeps where each starts, so locating
    a plan's ``resource_changes`` does not decode ``planned_values`` a second time. The data and
    the positions are those of ``json.loads`` and of a reading from scratch; a key written twice
    keeps its last value, in its first place."""
    text = '{"planned": {"big": [1, 2, [3]]},\n "changes": [{"a": 1}], "changes": [{"b": 2}], "x": "y"}'
    doc = parse_document(text, "plan.json")
    assert json.dumps(doc.data) == json.dumps(json.loads(text))
    decoded: list[int] = []
    decode = jsondoc._raw_decode
    monkeypatch.setattr(jsondoc, "_raw_decode", lambda t, i: decoded.append(i) or decode(t, i))
    found = [doc.position("/changes"), doc.position("/x"), doc.position("/changes/0", ("a",))]
    assert decoded == []  # nothing before them was decoded to reach them
    fresh = Document("plan.json", text, json.loads(text))
    assert [(p.line, p.column, p.pointer) for p in found] == [
        (p.line, p.column, p.pointer)
        for p in (fresh.position("/changes"), fresh.position("/x"), fresh.position("/changes/0", ("a",)))
    ]
    assert decoded  # the fresh reading decoded "planned" to get past it
    for empty in ("{}", " { } "):  # an empty object is read the same way: its members are known
        document = parse_document(empty, "e.json")
        assert document.data == {} and document._members


def test_positions_in_a_template_with_comments_are_those_of_its_text(tmp_path: Path) -> None:
    """Comments are blanked to spaces, line breaks kept, so a position in the blanked text is
    the same line and column in the file as written."""
    text = (
        "// a template\r\n{\r\n"
        '  "$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#", /* x */\r\n'
        '  "contentVersion": "1.0.0.0",\r\n'
        '  "resources": [ /* first */ {"type": "t", // why\r\n'
        '    "properties": { /* "vmSize": "no" */ "vmSize": "x", "url": "http://a/*b*/" }}]\r\n'
        "}\r\n"
    )
    doc = parse_document(text, "t.json")
    assert doc.text != text and len(doc.text) == len(text)
    _check(doc.text, doc)
    lines = text.split("\n")
    for tokens in Reference(doc.text).pointers():
        position = doc.position(pointer_join("", *tokens))
        assert lines[position.line - 1][position.column - 1] in '{["0123456789-tfn'


def _line_starts(text: str) -> list[int]:
    starts = [0]
    for part in text.split("\n")[:-1]:
        starts.append(starts[-1] + len(part) + 1)
    return starts


def _sample(data: Any, rng: random.Random, limit: int) -> list[tuple[tuple[str, ...], Any]]:
    every: list[tuple[tuple[str, ...], Any]] = []
    stack: list[tuple[tuple[str, ...], Any]] = [((), data)]
    while stack:
        tokens, value = stack.pop()
        every.append((tokens, value))
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        stack += [((*tokens, str(k)), v) for k, v in items]
    return rng.sample(every, min(limit, len(every)))


def test_sampled_pointers_of_the_corpus_decode_back_to_their_values() -> None:
    """Each sampled value decodes again from where its position says it starts, and a pointer
    split into pointer and tail lands on the same place."""
    if not CORPUS.is_dir():
        pytest.skip(f"the third-party corpus is not checked out at {CORPUS}")
    files = sorted(CORPUS.rglob("*.json"))
    assert files
    decoder = json.JSONDecoder()
    for path in files:
        doc = load_document(path)
        starts = _line_starts(doc.text)
        rng = random.Random(str(path.relative_to(CORPUS)))
        for tokens, value in _sample(doc.data, rng, 150):
            position = doc.position(pointer_join("", *tokens))
            assert position.pointer == pointer_join("", *tokens), (path, tokens)
            offset = starts[position.line - 1] + position.column - 1
            assert decoder.raw_decode(doc.text, offset)[0] == value, (path, tokens)
            before = offset - 1  # a value starts a document, or follows ":", "," or an opener
            while before >= 0 and doc.text[before] in BLANKS:
                before -= 1
            assert before < 0 or doc.text[before] in ":,[{", (path, tokens)
            cut = rng.randint(0, len(tokens))
            split = doc.position(pointer_join("", *tokens[:cut]), tokens[cut:])
            assert split == position, (path, tokens, cut)
