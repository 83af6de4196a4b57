"""A path on disk together with the path reports show for it."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class SourcePath:
    """``path`` to read, ``display`` to show: relative as the user gave it (``infra/main.tf``),
    so that text reports name files the way the user refers to them."""

    path: Path
    display: str

    def join(self, relative: str) -> SourcePath:
        return SourcePath(self.path / relative, posixpath.normpath(posixpath.join(self.display, relative)))
