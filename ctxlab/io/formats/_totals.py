"""A session's totals: the token counts a file records over a whole session or turn (Goose's
and Continue's session usage, Copilot's totals by model, ``codex exec``'s turn usage, Gemini
CLI's stream stats), kept in ``meta`` beside the requests' usage and never put on a request.

They are checked as a request's counts are (`token_count`): a total no bill has — NaN, a
negative, a count past `MAX_TOKENS`, text, a bool — refuses the file with a `MessageFormatError`
naming the record and the field, as docs/errors.md promises of every usage count. A figure of
another kind beside them (a cost in dollars, a duration) is kept as the file has it.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.messages._usage import token_count

__all__ = ["checked_totals"]


def checked_totals(
    totals: Mapping[str, Any], where: str, what: str, *, counts: Collection[str] = ()
) -> dict[str, Any]:
    """A copy of ``totals`` whose token counts are whole numbers (``int``).

    A token count is a field whose name holds "token" (``input_tokens``, ``promptTokens``),
    one named in ``counts`` (Gemini's ``cached``), or any number inside a mapping under such a
    name (Continue's ``promptTokensDetails``); a null one stays null (the file does not say).
    Raises `MessageFormatError` naming ``where`` (the file and record), the field and ``what``
    the totals are.
    """
    checked: dict[str, Any] = _walk(totals, (), where, what, frozenset(counts), tokens=False)
    return checked


def _walk(
    value: Any,
    path: tuple[str, ...],
    where: str,
    what: str,
    counts: frozenset[str],
    *,
    tokens: bool,
) -> Any:
    if isinstance(value, Mapping):
        return {
            key: _walk(
                item,
                (*path, str(key)),
                where,
                what,
                counts,
                tokens=tokens or _names_tokens(key, counts),
            )
            for key, item in value.items()
        }
    if not tokens:
        if isinstance(value, list):
            return [
                _walk(v, (*path, str(i)), where, what, counts, tokens=False)
                for i, v in enumerate(value)
            ]
        return value
    if value is None:
        return None
    try:
        return token_count(value, ".".join(path))
    except ValueError as exc:
        msg = f"{where}: {exc} ({what})"
        raise MessageFormatError(msg) from exc


def _names_tokens(key: Any, counts: frozenset[str]) -> bool:
    return isinstance(key, str) and ("token" in key.lower() or key in counts)
