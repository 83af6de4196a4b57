"""The repository root that SARIF URIs are relative to.

GitHub resolves ``%SRCROOT%`` to the root of the checkout, so a URI relative to the folder azai
happened to run in (``infra/``) names no file there. ``--repo-root`` says where the root is;
otherwise git does, and outside a git work tree the current folder is the root.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

_GIT_SECONDS = 10  # rev-parse answers at once; this only bounds a wedged git


def repository_root(given: str | None) -> Path:
    """``given`` when set (the CLI checked it is a folder), else git's top level, else the
    current folder."""
    if given is not None:
        return Path(given)
    try:
        answer = subprocess.run(
            ["git", "rev-parse", "--show-toplevel"],
            capture_output=True,
            text=True,
            timeout=_GIT_SECONDS,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return Path.cwd()
    top = answer.stdout.strip()
    return Path(top) if answer.returncode == 0 and top else Path.cwd()
