"""Writing a user's file whole or not at all.

A write that fails part way (a full disk, a killed process) must not leave a fragment where the
previous file was: the content goes to a temporary file in the target's folder (the same file
system, so the rename is atomic), is flushed to disk, then renamed over the target. The file
keeps the permissions it had (a new one gets those the user's umask gives any new file), not the
owner-only mode of a temporary file.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from ctxlab.exceptions import WriteError
from ctxlab.util._path_args import path_argument

__all__ = ["write_atomic"]

_NAME_BYTES = 120
"""How much of the target's name the temporary name repeats: a file system's names end at 255
bytes, and the temporary name adds a dot, a random part and a suffix to it."""


def write_atomic(path: str | os.PathLike[str], data: str | bytes, *, what: str = "file") -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` atomically; the path written.

    An existing file keeps its mode; a new one gets ``0o666`` less the umask, as ``open`` gives.
    Raises `WriteError` naming ``what`` and the path when the folder is missing, the path is a
    folder, or the write fails (the file that was there is then unchanged); `UsageError` for a
    path no file system takes (`path_argument`).
    """
    target = path_argument(path, "path", what=f"the {what}")
    if target.is_dir():
        msg = f"cannot write the {what} to {str(target)!r}: it is a folder; give a file name"
        raise WriteError(msg)
    if not target.parent.is_dir():
        msg = (
            f"cannot write the {what} to {str(target)!r}: the folder {str(target.parent)!r} "
            "does not exist; create it first"
        )
        raise WriteError(msg)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    mode = _mode_for(target)
    short = target.name.encode("utf-8", "surrogateescape")[:_NAME_BYTES]
    prefix = "." + short.decode("utf-8", "ignore") + "."
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=prefix, suffix=".tmp")
    except OSError as exc:
        msg = f"cannot write the {what} to {str(target)!r}: {exc.strerror or exc}"
        raise WriteError(msg) from exc
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
            os.fchmod(handle.fileno(), mode)
            os.fsync(handle.fileno())
        os.replace(tmp, target)
    except BaseException as exc:
        Path(tmp).unlink(missing_ok=True)
        if isinstance(exc, OSError):
            msg = (
                f"cannot write the {what} to {str(target)!r}: {exc.strerror or exc}; "
                "the file that was there is unchanged"
            )
            raise WriteError(msg) from exc
        raise
    return target


def _mode_for(target: Path) -> int:
    """The permission bits the written file gets: the existing file's, else a new file's."""
    try:
        found = target.stat()
    except OSError:
        return 0o666 & ~current_umask()
    return stat.S_IMODE(found.st_mode) if stat.S_ISREG(found.st_mode) else 0o666 & ~current_umask()


def current_umask() -> int:
    """The process's umask, read without changing it where the system allows (Linux reports it
    in ``/proc/self/status``): setting it to read it back would, for that instant, give files
    other threads create the wrong mode."""
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask
