"""Where a finding is shown: the scanned file's position, or the line people wrote.

A plan or a compiled template is not what a team commits or reviews: GitHub code scanning
annotates a pull request only on lines of files in the repository. So a resource can carry a
`Declaration`, its block in the ``.tf`` or ``.bicep`` source, and every report shows the
`Place` that declaration gives, keeping the scanned file's position as a related place.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Place:
    """A file and a 1-based line and column (Unicode code points); ``pointer`` is the JSON
    pointer when the file is JSON. A live resource no file declares has no file."""

    file: str | None
    line: int | None = None
    column: int | None = None
    pointer: str | None = None


@dataclass(frozen=True, slots=True)
class Written:
    """One property as written in a declaration. ``opaque``: its value is an expression the
    parser does not look into (``var.taints``, ``union(...)``), so any deeper property may be
    set by it."""

    line: int
    column: int
    opaque: bool


@dataclass(frozen=True, slots=True)
class Declaration:
    """A resource's block in authored source: its header, and the properties it writes, keyed
    by their lower-cased path (``("default_node_pool", "0", "node_taints")``; ``"*"`` stands
    for any index where a ``dynamic`` block or a loop writes the entries)."""

    file: str
    line: int
    column: int
    written: Mapping[tuple[str, ...], Written] = field(default_factory=dict, repr=False, compare=False)

    def place(self, path: tuple[str, ...]) -> Place:
        """The property's line where the block writes it, else the header.

        A property inside an object the block writes literally, without that key, is not
        written: the header is the place to add it. One inside an expression may come from it.
        """
        lowered = tuple(segment.lower() for segment in path)
        for end in range(len(lowered), 0, -1):
            prefix = lowered[:end]
            entry = self.written.get(prefix) or self.written.get(tuple("*" if s.isdigit() else s for s in prefix))
            if entry is None:
                continue
            if end == len(lowered) or entry.opaque:
                return Place(self.file, entry.line, entry.column)
            break
        return Place(self.file, self.line, self.column)
