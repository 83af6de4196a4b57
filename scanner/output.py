"""Writing reports: atomically, so a crash or a full disk never leaves half a file, and with the
permissions any other tool's file would get (the user's umask), so a CI step run as another
user, or a web server publishing the HTML report, can read it."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from functools import cache
from pathlib import Path
from typing import BinaryIO

from scanner.errors import InputError


def write_atomic(path: str, data: bytes | Iterable[bytes]) -> None:
    """Write ``data`` (bytes, or chunks of them) to ``path`` through a temporary file in the same
    directory and a rename.

    Only regular files are replaced that way: a device or pipe (``/dev/null``, ``/dev/stdout``,
    a FIFO) is written in place, since renaming over it would replace the device itself.
    """
    target = Path(path)
    directory = target.parent if str(target.parent) else Path(".")
    if target.exists() and not target.is_file():
        try:
            with open(target, "wb") as stream:
                _write(stream, data)
        except OSError as exc:
            raise InputError(f"{path}: cannot write ({exc.strerror})") from None
        return
    try:
        directory.mkdir(parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=f".{target.name}.", dir=directory)
        try:
            os.fchmod(handle, 0o666 & ~_umask())  # mkstemp makes 0600, whatever the umask
            with os.fdopen(handle, "wb") as stream:
                _write(stream, data)
                stream.flush()
                os.fsync(stream.fileno())
            os.replace(temporary, target)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise InputError(f"{path}: cannot write ({exc.strerror})") from None


@cache
def _umask() -> int:
    """The process's umask: reading it means setting it, so it is read once and put straight back."""
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _write(stream: BinaryIO, data: bytes | Iterable[bytes]) -> None:
    for chunk in [data] if isinstance(data, bytes) else data:
        stream.write(chunk)
