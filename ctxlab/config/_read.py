"""Strict reading of another system's settings (`ContextConfig.from_`): each value of the type
and range the target itself takes, every key one it knows — or a `UsageError` that names the
key, the value and what it should be. Nothing is coerced: ``"false"`` is not False, ``"bash"``
is not a list of tool names, ``1.5`` is not a count.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from ctxlab.exceptions import UsageError

__all__ = [
    "Refusals",
    "built",
    "check_keys",
    "read_bool",
    "read_count",
    "read_names",
    "read_number",
    "read_text",
]

_Model = TypeVar("_Model", bound=BaseModel)
_Read = TypeVar("_Read")


class Refusals:
    """Every setting of a foreign policy that cannot be honoured, gathered so that one
    `UsageError` names them all: a setting is read or refused on its own, whatever else the
    policy holds, so the error never names one field where another (or two) would be refused
    as well — a user fixing the named one would meet the next only then."""

    def __init__(self) -> None:
        self.reasons: list[str] = []

    def read(self, reading: Callable[..., _Read], *args: Any) -> _Read | None:
        """``reading(*args)``'s value, or None with its refusal kept."""
        try:
            return reading(*args)
        except UsageError as exc:
            self.reasons.append(str(exc))
            return None

    def refuse(self, reason: str) -> None:
        """Keep ``reason`` (a setting that cannot be honoured, named, with why)."""
        self.reasons.append(reason)

    def raise_any(self) -> None:
        """One `UsageError` naming every refusal kept (the one reason alone, as it is)."""
        if len(self.reasons) == 1:
            raise UsageError(self.reasons[0])
        if self.reasons:
            listed = "; ".join(f"({n}) {r}" for n, r in enumerate(self.reasons, 1))
            msg = f"{len(self.reasons)} settings cannot be read: {listed}"
            raise UsageError(msg)


def check_keys(value: Mapping[str, Any], allowed: Collection[str], where: str) -> None:
    """A key ``value`` holds that ``allowed`` does not name is refused (a misspelt key would
    otherwise be dropped without a word), with the nearest known key."""
    for key in value:
        if key not in allowed:
            near = difflib.get_close_matches(str(key), list(allowed), n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            known = ", ".join(sorted(allowed))
            msg = f"{where} has no key {key!r}{hint}; it takes {known}"
            raise UsageError(msg)


def read_count(value: Any, where: str, *, minimum: int = 0) -> int:
    """A whole number from ``minimum`` (not a bool, a float or a string)."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        msg = f"{where} must be a whole number from {minimum:,}, got {value!r}"
        raise UsageError(msg)
    return value


def read_number(value: Any, where: str, *, low: float, high: float) -> float:
    """A finite number in ``(low, high]`` (a share of the window, say)."""
    if (
        isinstance(value, bool)
        or not isinstance(value, int | float)
        or not math.isfinite(value)
        or not low < value <= high
    ):
        msg = f"{where} must be a number above {low} and at most {high}, got {value!r}"
        raise UsageError(msg)
    return float(value)


def read_bool(value: Any, where: str) -> bool:
    """True or False, nothing that merely reads as one."""
    if not isinstance(value, bool):
        msg = f"{where} must be true or false, got {value!r}"
        raise UsageError(msg)
    return value


def read_text(value: Any, where: str) -> str:
    """A string."""
    if not isinstance(value, str):
        msg = f"{where} must be a string, got {value!r}"
        raise UsageError(msg)
    return value


def read_names(value: Any, where: str) -> tuple[str, ...]:
    """A list of names (a string alone is not one: ``"bash"`` would read as four names)."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence | set | frozenset):
        msg = f"{where} must be a list of tool names (e.g. ['bash']), got {value!r}"
        raise UsageError(msg)
    names = tuple(value)
    for name in names:
        if not isinstance(name, str) or not name:
            msg = f"{where} must hold tool names (non-empty strings), got {name!r}"
            raise UsageError(msg)
    return names


def built(model: type[_Model], where: str, **fields: Any) -> _Model:
    """``model(**fields)``, its validation error as a `UsageError` naming ``where``."""
    try:
        return model(**fields)
    except ValidationError as exc:
        reasons = "; ".join(str(e.get("msg", e)) for e in exc.errors())
        msg = f"{where}: {reasons}"
        raise UsageError(msg) from exc
