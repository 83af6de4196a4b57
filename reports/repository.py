"""The repository root that SARIF URIs are relative to.

GitHub resolves ``%SRCROOT%`` to the root of the checkout, so a URI relative to the folder azai
happened to run in (``infra/``, or a folder outside the checkout altogether) names no file
there. ``--repo-root`` says where the root is; otherwise it is the git top level of the scanned
files: the nearest folder above them holding ``.git`` (a folder, or the file a worktree or a
submodule has), found without running git, so a checkout git will not open (another owner's, in
a container) or a machine without git still gets the right root.

Scanned files in different repositories: when one of those repositories holds all the others
(a submodule, a nested checkout), URIs are relative to it; otherwise they are relative to the
repository of the first scanned file, the others' files keep absolute URIs (which code
scanning shows without a file), and a warning says so. Scanned files in no repository (a plan
written to a temporary folder), stdin and live scans: the git top level of the current folder,
else the current folder, as before.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from scanner.engine.results import ScanResult


class _TopLevels:
    """Each folder's git top level, remembered per folder, so a scan of a thousand files in a
    few folders looks at each folder once."""

    def __init__(self) -> None:
        self._known: dict[Path, Path | None] = {}

    def __call__(self, folder: Path) -> Path | None:
        if folder not in self._known:
            holds_git = (folder / ".git").exists()
            parent = folder.parent
            self._known[folder] = folder if holds_git else (None if parent == folder else self(parent))
        return self._known[folder]


def scanned_files(result: ScanResult) -> list[Path]:
    """The files the scan read, in command-line order: not stdin, not a live scope."""
    paths = (Path(str(item.get("path", ""))) for item in result.inputs if item.get("kind") != "live")
    return [path.resolve() for path in paths if path.is_file()]


def _choose(tops: list[Path]) -> tuple[Path, list[str]]:
    """One root for several repositories: the one holding all the others, else the first."""
    for top in tops:
        if all(other.is_relative_to(top) for other in tops):
            return top, []
    others = [top for top in tops if not top.is_relative_to(tops[0])]
    return tops[0], [
        f"the scanned files are in {len(tops)} repositories: SARIF URIs are relative to {tops[0]}, "
        f"the first file's; files in {', '.join(map(str, others))} keep absolute URIs, which code scanning "
        "cannot show (scan each repository on its own, or give --repo-root)"
    ]


def repository_root(given: str | None, files: Iterable[Path] = ()) -> tuple[Path, list[str]]:
    """The folder SARIF URIs are relative to, and a warning when no one folder fits: ``given``
    when set (the CLI checked it is a folder), else the git top level of ``files`` (see the
    module's docstring for files in several repositories or none)."""
    if given is not None:
        return Path(given), []
    top_level = _TopLevels()
    tops = list(dict.fromkeys(top for top in map(top_level, (f.parent for f in files)) if top is not None))
    if tops:
        return _choose(tops)
    here = Path.cwd()
    return top_level(here.resolve()) or here, []
