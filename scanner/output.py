"""Writing reports: atomically, so a crash or a full disk never leaves half a file."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from scanner.errors import InputError


def write_atomic(path: str, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file in the same directory and a rename.

    Only regular files are replaced that way: a device or pipe (``/dev/null``, ``/dev/stdout``,
    a FIFO) is written in place, since renaming over it would replace the device itself.
    """
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    if target.exists() and not target.is_file():
        try:
            with open(target, "wb") as stream:
                stream.write(data)
        except OSError as exc:
            raise InputError(f"{path}: cannot write ({exc.strerror})") from None
        return
    try:
        directory.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=directory)
        try:
            with os.fdopen(handle, "wb") as stream:
                stream.write(data)
                stream.flush()
                os.fsync(stream.fileno())
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise InputError(f"{path}: cannot write ({exc.strerror})") from None
