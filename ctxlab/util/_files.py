"""Writing a user's file whole or not at all.

A write that fails part way (a full disk, a killed process) must not leave a fragment where the
previous file was: the content goes to a temporary file in the target's folder (the same file
system, so the rename is atomic), is flushed to disk, then renamed over the target.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from ctxlab.exceptions import WriteError

__all__ = ["write_atomic"]


def write_atomic(path: str | os.PathLike[str], data: str | bytes, *, what: str = "file") -> Path:
    """Write ``data`` (text as UTF-8) to ``path`` atomically; the path written.

    Raises `WriteError` naming ``what`` and the path when the folder is missing, the path is a
    folder, or the write fails; the file that was there is then unchanged.
    """
    target = Path(path)
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
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as exc:
        msg = f"cannot write the {what} to {str(target)!r}: {exc.strerror or exc}"
        raise WriteError(msg) from exc
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(payload)
            handle.flush()
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
