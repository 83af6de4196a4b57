"""Where a finding is shown: the scanned file's position, or the line people wrote.

A plan or a compiled template is not what a team commits or reviews: GitHub code scanning
annotates a pull request only on lines of files in the repository. So a resource can carry a
`Declaration`, its block in the ``.tf`` or ``.bicep`` source, and every report shows the
`Place` that declaration gives, keeping the scanned file's position as a related place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

# A property as the source spells it, lower-cased: ("default_node_pool", "0", "node_taints").
PropertyPath = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Place:
    """A file and a 1-based line and column (Unicode code points); ``pointer`` is the JSON
    pointer when the file is JSON. A live resource no file declares has no file."""

    file: str | None
    line: int | None = None
    column: int | None = None
    pointer: str | None = None


class Written(NamedTuple):  # a tuple: a large module records one per attribute
    """One property as written in a declaration: where it starts, as a byte offset in the
    declaration's text (lines and columns are worked out only for the few places reports show).
    ``opaque``: its value is an expression the parser does not look into (``var.taints``,
    ``union(...)``), so any deeper property may be set by it."""

    offset: int
    opaque: bool


@dataclass(frozen=True, slots=True)
class Declaration:
    """A resource's block in authored source: its header, and the properties it writes, keyed
    by their lower-cased path (``("default_node_pool", "0", "node_taints")``; ``"*"`` stands
    for any index where a ``dynamic`` block or a loop writes the entries)."""

    file: str
    line: int
    column: int
    written: Mapping[PropertyPath, Written] = field(default_factory=dict, repr=False, compare=False)
    text: bytes = field(default=b"", repr=False, compare=False)  # from the start of the header's line

    def _place_of(self, offset: int) -> Place:
        line_start = self.text.rfind(b"\n", 0, offset) + 1
        line = self.line + self.text.count(b"\n", 0, line_start)
        column = len(self.text[line_start:offset].decode("utf-8", "replace")) + 1
        return Place(self.file, line, column)

    def place(self, path: PropertyPath) -> Place:
        """The property's line where the block writes it, else the header.

        A property inside an object the block writes literally, without that key, is not
        written, so the finding is the resource's (its header). One inside an expression may
        come from that expression, so it is pointed at.
        """
        lowered = tuple(segment.lower() for segment in path)
        for end in range(len(lowered), 0, -1):
            prefix = lowered[:end]
            entry = self.written.get(prefix) or self.written.get(tuple("*" if s.isdigit() else s for s in prefix))
            if entry is None:
                continue
            if end == len(lowered) or entry.opaque:
                return self._place_of(entry.offset)
            break
        return Place(self.file, self.line, self.column)
