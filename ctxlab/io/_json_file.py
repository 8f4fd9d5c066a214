"""One JSON file of a session kept as several (a task folder's files, a storage's), read whole:
a file that is not JSON is said with its line, as what to do."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.util._jsonl import read_text

__all__ = ["json_file"]


def json_file(path: Path) -> Any:
    """The decoded JSON of ``path``; `MessageFormatError` naming the line when it is not JSON."""
    text = read_text(path)
    try:
        return json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        where = f"line {exc.lineno}: {exc.msg}" if isinstance(exc, json.JSONDecodeError) else ""
        msg = (
            f"{path} is not JSON ({where or 'nested too deeply'}); a task or session file of "
            "this tool is one JSON document — copy it again if it was cut off"
        )
        raise MessageFormatError(msg) from exc
