"""``azai scan main.bicep``: compile with the Bicep CLI on PATH, or say how to.

The standalone ``bicep`` is tried first, then ``az bicep``, the two ways Microsoft ships the
compiler. Nothing is written: ``--stdout`` hands the template over in memory, so a scan never
leaves a ``main.json`` in the user's tree.
"""

from __future__ import annotations

import shutil
import subprocess

from scanner.errors import InputError
from scanner.sources.authored.paths import SourcePath

_BUILD_SECONDS = 300  # a large module tree with registry restores; only bounds a wedged build


def build_command(bicep: SourcePath) -> list[str]:
    """The command that compiles ``bicep`` to stdout, or a one-line error saying how to compile."""
    standalone = shutil.which("bicep")
    if standalone:
        return [standalone, "build", "--stdout", str(bicep.path)]
    az = shutil.which("az")
    if az:
        return [az, "bicep", "build", "--file", str(bicep.path), "--stdout"]
    raise InputError(
        f"{bicep.display}: no Bicep CLI on PATH; compile it with 'bicep build {bicep.display}' "
        f"(or 'az bicep build --file {bicep.display}') and scan the .json it writes"
    )


def compile_bicep(bicep: SourcePath) -> str:
    """The compiled ARM template's text."""
    command = build_command(bicep)
    try:
        done = subprocess.run(
            command,
            capture_output=True,
            encoding="utf-8",  # what bicep writes, whatever the locale
            errors="replace",
            timeout=_BUILD_SECONDS,
            check=False,
        )
    except subprocess.TimeoutExpired:
        raise InputError(f"{bicep.display}: the Bicep build did not finish in {_BUILD_SECONDS} s") from None
    except OSError as exc:
        raise InputError(f"{bicep.display}: cannot run {command[0]} ({exc.strerror})") from None
    if done.returncode != 0:
        lines = [line.strip() for line in done.stderr.splitlines() if line.strip()]
        first = next((line for line in lines if ": Error " in line or "Error BCP" in line), lines[0] if lines else "")
        raise InputError(f"{bicep.display}: the Bicep build failed: {first or f'exit {done.returncode}'}")
    return done.stdout
