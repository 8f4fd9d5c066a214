"""The bad values a parameter's `Shape` calls for: what a caller gets wrong about a value of
that kind. Each is made fresh for its call (a list or a dict an entry point changes is never
handed to the next), and paths are made in the test's own folders (`Places`)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.fuzz.signatures import Shape


@dataclass(frozen=True)
class Places:
    """Where path values point: a writable folder, a file in it, a read-only folder (None
    where none can be made: root without ``chattr``)."""

    folder: Path
    file: Path
    read_only: Path | None


@dataclass(frozen=True)
class Bad:
    """One bad value: what it is (``label``) and how it is made; ``typed``: of the kind it is
    given for (a number out of range, hostile text, a path that is a file), not a wrong type."""

    label: str
    make: Callable[[Places], Any]
    typed: bool = False


def _fixed(label: str, value: Any, typed: bool = False) -> Bad:
    # An immutable value, the same each time.
    return Bad(label, lambda places: value, typed)


NUMBERS = (
    _fixed("NaN", math.nan, typed=True),
    _fixed("infinity", math.inf, typed=True),
    _fixed("-infinity", -math.inf, typed=True),
    _fixed("negative", -1, typed=True),
    _fixed("zero", 0, typed=True),
    _fixed("huge int", 10**30, typed=True),
    _fixed("an int of 5,000 digits", 10**5_000, typed=True),
    _fixed("huge float", 1e300, typed=True),
    _fixed("tiny float", 1e-300, typed=True),
    _fixed("bool", True),
    _fixed("a number as text", "3"),
)
TEXTS = (
    _fixed("empty text", "", typed=True),
    _fixed("blank text", " \n\t", typed=True),
    _fixed("100,000 characters", "x" * 100_000, typed=True),
    _fixed("a lone surrogate", "a\ud800b", typed=True),
    _fixed("a NUL", "a\x00b", typed=True),
    _fixed("markup", "<script>alert(1)</script>", typed=True),
    _fixed("a number", 42),
    _fixed("bytes", b"bytes"),
)
PATHS = (
    Bad("a path under a file", lambda p: p.file / "inside.jsonl", typed=True),
    Bad("a file where a folder may be", lambda p: p.file, typed=True),
    Bad("a folder where a file may be", lambda p: p.folder, typed=True),
    Bad("a missing folder's file", lambda p: p.folder / "missing" / "session.jsonl", typed=True),
    Bad("a name of 300 characters", lambda p: p.folder / ("n" * 300), typed=True),
    Bad("a path with a NUL", lambda p: str(p.folder / "a\x00b"), typed=True),
    Bad("a path as bytes", lambda p: bytes(p.folder / "x.jsonl")),
    _fixed("an empty path", "", typed=True),
    Bad("a read-only folder", lambda p: p.read_only, typed=True),
    Bad(
        "a file in a read-only folder",
        lambda p: p.read_only and p.read_only / "new.jsonl",
        typed=True,
    ),
)
CHOICES = (
    _fixed("an unknown choice", "no-such-choice", typed=True),
    _fixed("a choice as a number", 7),
    _fixed("a choice in capitals", "AUTO", typed=True),
)
BOOLS = (_fixed("yes as text", "yes"), _fixed("2", 2))
SEQUENCES = (
    Bad("an empty list", lambda p: [], typed=True),
    _fixed("a number", 42),
    _fixed("text, read as its characters", "abc"),
    Bad("a list of None", lambda p: [None]),
    Bad("a list of NaN", lambda p: [math.nan]),
    Bad("nested lists", lambda p: [[[]]]),
    Bad("a dict", lambda p: {"a": 1}),
    Bad("a generator", lambda p: iter([None, 1])),
)
MAPPINGS = (
    Bad("an empty dict", lambda p: {}, typed=True),
    Bad("a list", lambda p: [1, 2]),
    _fixed("text", "x"),
    Bad("None values", lambda p: {"k": None}),
    Bad("number keys", lambda p: {1: 2}),
)
CALLABLES = (_fixed("a number", 42), _fixed("text", "f"))
OBJECTS = (
    _fixed("text", "x"),
    _fixed("a number", 42),
    Bad("a dict", lambda p: {}),
    Bad("a bare object", lambda p: object()),
)
ANYTHING = (
    Bad("a bare object", lambda p: object()),
    _fixed("NaN", math.nan),
    _fixed("negative", -1),
    _fixed("text", "x"),
)


def bad_values(shape: Shape, *, typed: bool = False) -> list[Bad]:
    """The bad values of a parameter of ``shape``, without duplicates; None among them unless
    the shape takes None (and a value it takes is never among them: a number of a numeric
    parameter is bad only by its range). ``typed``: only values of the parameter's own kinds
    (numbers out of range, hostile text and paths, empty collections), no wrong type."""
    found = _all_bad(shape)
    return [b for b in found if b.typed and _own_kind(shape, b)] if typed else found


def _own_kind(shape: Shape, bad: Bad) -> bool:
    # A typed value of one kind is a wrong type for another: NaN is no int, text no number.
    value = bad.make(_NOWHERE)
    kinds = shape.kinds
    if isinstance(value, float):
        return "float" in kinds
    if isinstance(value, int):
        return bool(kinds & {"int", "float"})
    if isinstance(value, str):
        return bool(kinds & {"str", "path", "literal"})
    if isinstance(value, Path):
        return "path" in kinds
    if isinstance(value, list):
        return "seq" in kinds
    return isinstance(value, dict) and "map" in kinds


_NOWHERE = Places(Path("/nowhere"), Path("/nowhere/file"), Path("/nowhere/read-only"))


_BY_KIND: dict[str, tuple[Bad, ...]] = {
    "int": NUMBERS,
    "float": NUMBERS,
    "str": TEXTS,
    "path": PATHS,
    "literal": CHOICES,
    "bool": BOOLS,
    "seq": SEQUENCES,
    "map": MAPPINGS,
    "callable": CALLABLES,
    "class": OBJECTS,
}
"""The bad values of each kind a shape may hold."""


def _all_bad(shape: Shape) -> list[Bad]:
    kinds = shape.kinds
    found = [bad for kind in sorted(kinds) for bad in _BY_KIND.get(kind, ())]
    if "class" in kinds:
        found.append(Bad("the class, not an instance", _class_of(shape.classes[0])))
    if "any" in kinds or not found:
        found += ANYTHING
    if "none" not in kinds:
        found.append(_fixed("None", None))
    unique = {b.label: b for b in found}
    return [b for b in unique.values() if not _taken(shape, b)]


def _class_of(kind: type) -> Callable[[Places], Any]:
    return lambda places: kind


def _taken(shape: Shape, bad: Bad) -> bool:
    # A value the annotation itself allows is not a wrong type (it may still be out of range:
    # numbers stay), text where text is taken but a number is not, and so on.
    kinds = shape.kinds
    label = bad.label
    if label in ("a number", "a choice as a number") and kinds & {"int", "float"}:
        return True
    if label == "bytes" and "bytes" in kinds:
        return True
    if label in ("text", "a number as text") and "str" in kinds:
        return True
    return label in ("a dict", "a list") and "any" in kinds
