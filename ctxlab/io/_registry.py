"""The registry of session formats: ctxlab's own (``ctxlab/io/formats/``), those registered with
`register_format`, and those of installed packages' ``ctxlab.formats`` entry points (loaded
once, the first time the registry is read). Detection, `load`, `sessions`, ``ctxlab.FORMATS``
and the tests read it; it is ordered by priority (then by registration)."""

from __future__ import annotations

import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from importlib.metadata import EntryPoint, entry_points
from typing import Any

from ctxlab.exceptions import UsageError
from ctxlab.io._format import SessionFormat

__all__ = [
    "ENTRY_POINTS",
    "FORMATS",
    "added_here",
    "detectors",
    "forget_format",
    "format_named",
    "format_names",
    "formats",
    "generation",
    "install",
    "register_format",
]

ENTRY_POINTS = "ctxlab.formats"
"""The entry-point group a package declares its formats in (each a `SessionFormat`)."""

_registered: dict[str, SessionFormat] = {}
_ordered: list[tuple[SessionFormat, ...]] = []  # the sorted registry, kept while unchanged
_names: list[tuple[str, ...]] = []  # ``FORMATS``: one tuple while unchanged
_tables: dict[tuple[str, bool], tuple[tuple[Callable[[Any], bool], str], ...]] = {}
_state = {"builtin": False, "entry_points": False}
_lock = threading.RLock()
_changes = [0]  # registrations and removals so far: what a kept `sessions` table was read under


def register_format(declared: SessionFormat, *, replace: bool = False) -> SessionFormat:
    """Add a format to those ctxlab detects, loads and lists (or, with ``replace``, put it in
    the place of one of the same name). Returns it.

    Raises `UsageError` for what is not a `SessionFormat`, a name that is not lowercase
    letters, digits and ``_``, a name already registered (unless ``replace``), or a format that
    can read nothing (no ``read``, ``read_file``, ``read_text`` nor ``place``).
    """
    if not isinstance(declared, SessionFormat):
        msg = (
            "register_format takes a ctxlab.SessionFormat (its name, detectors and reader), "
            f"got {type(declared).__name__}"
        )
        raise UsageError(msg)
    _check(declared)
    with _lock:
        _builtin()
        if declared.name in _registered and not replace:
            msg = (
                f"a format named {declared.name!r} is already registered "
                f"({_registered[declared.name].tool or 'no tool named'}): give yours another "
                "name, or pass replace=True to read that format your way"
            )
            raise UsageError(msg)
        _registered[declared.name] = declared
        _ordered.clear()
        _tables.clear()
        _changes[0] += 1
    return declared


def _check(declared: SessionFormat) -> None:
    if not _well_named(declared.name):
        msg = (
            f"a format's name is lowercase letters, digits and '_', starting with a letter "
            f"(what format= takes), got {declared.name!r}"
        )
        raise UsageError(msg)
    readers = (declared.read, declared.read_file, declared.read_text, declared.place)
    if all(reader is None for reader in readers):
        msg = (
            f"format {declared.name!r} reads nothing: give it read= (decoded data), "
            "read_file=, read_text= (a text file) or place= (a folder)"
        )
        raise UsageError(msg)
    if isinstance(declared.priority, bool) or not isinstance(declared.priority, int):
        msg = f"format {declared.name!r}: priority is a whole number, got {declared.priority!r}"
        raise UsageError(msg)


def forget_format(name: str) -> None:
    """Take a registered format out of the registry (tests: a format registered for one)."""
    with _lock:
        _registered.pop(name, None)
        _ordered.clear()
        _tables.clear()
        _changes[0] += 1


def _well_named(name: object) -> bool:
    # Lowercase ASCII letters, digits and "_", from a letter: what format= takes.
    return (
        isinstance(name, str)
        and name.isascii()
        and name.isidentifier()
        and name[0].isalpha()
        and name == name.lower()
    )


def generation() -> int:
    """A number that changes whenever a format is registered or forgotten (`sessions` keeps a
    folder's table only while the formats that read it are the same)."""
    formats()  # the entry points loaded first: they count as registrations
    return _changes[0]


def formats() -> tuple[SessionFormat, ...]:
    """Every registered format, in detection order (priority, then registration)."""
    if _ordered:
        return _ordered[0]
    with _lock:
        _builtin()
        _entry_points()
        ranked = sorted(
            enumerate(_registered.values()), key=lambda pair: (pair[1].priority, pair[0])
        )
        _ordered[:] = [tuple(f for _, f in ranked)]
        return _ordered[0]


def detectors(kind: str, guess: bool) -> tuple[tuple[Callable[[Any], bool], str], ...]:
    """The detectors of one kind (``"document"``, ``"records"``, ``"lines"``, ``"text"``) of
    the formats that are (``guess``) or are not chat guesses, in detection order, each with its
    format's name: the table detection walks, built once while the registry is unchanged."""
    table = _tables.get((kind, guess))
    if table is None:
        table = tuple(
            (getattr(f, kind), f.name)
            for f in formats()
            if f.guess == guess and getattr(f, kind) is not None
        )
        _tables[(kind, guess)] = table
    return table


def format_names() -> tuple[str, ...]:
    """The names of the registered formats, ctxlab's own first, then in the order they were
    registered (``ctxlab.FORMATS``): the same tuple while no format is registered."""
    formats()  # ctxlab's own and the entry points', registered once
    with _lock:
        if _names and _names[0] == tuple(_registered):
            return _names[0]
        _names[:] = [tuple(_registered)]
        return _names[0]


def format_named(name: str) -> SessionFormat | None:
    """The registered format called ``name`` (None: none is)."""
    return next((f for f in formats() if f.name == name), None)


def added_here() -> tuple[SessionFormat, ...]:
    """The formats this process registered beyond ctxlab's own (by hand or from an entry
    point, or one of ctxlab's replaced): what a spawned worker process must be given."""
    # Here, not at the top: the formats' modules import io's machinery, which reads this one.
    from ctxlab.io.formats import BUILTIN

    own = {id(f) for f in BUILTIN}
    return tuple(f for f in formats() if id(f) not in own)


def install(added: tuple[SessionFormat, ...]) -> None:
    """Register ``added`` (from `added_here` in another process) in this one."""
    for declared in added:
        register_format(declared, replace=True)


def _builtin() -> None:
    # ctxlab's own formats, registered the first time the registry is read or written.
    if _state["builtin"]:
        return
    _state["builtin"] = True
    # Here, not at the top: the formats' modules import io's machinery, which reads this one.
    from ctxlab.io.formats import BUILTIN

    for declared in BUILTIN:
        _registered.setdefault(declared.name, declared)


def _entry_points() -> None:
    # The formats installed packages declare: loaded once, lazily (an import of ctxlab does not
    # import them).
    if _state["entry_points"]:
        return
    _state["entry_points"] = True
    for point in entry_points(group=ENTRY_POINTS):
        try:
            register_format(_loaded(point))
        except UsageError as exc:
            # A broken plugin is said (once, naming it), not fatal: ctxlab's own formats and
            # the other plugins' still read.
            warnings.warn(str(exc), stacklevel=3)


def _loaded(point: EntryPoint) -> SessionFormat:
    where = f"the {ENTRY_POINTS} entry point {point.name!r} ({point.value})"
    try:
        value: Any = point.load()
        if callable(value) and not isinstance(value, SessionFormat):
            value = value()  # a function that returns the declaration
    except Exception as exc:  # a plugin that fails to import: said, naming it
        msg = f"{where} could not be loaded, its format is not read: {type(exc).__name__}: {exc}"
        raise UsageError(msg) from exc
    if not isinstance(value, SessionFormat):
        msg = f"{where} is a {type(value).__name__}, not a ctxlab.SessionFormat: not read"
        raise UsageError(msg)
    return value


class _Names(Sequence[str]):
    """The names of the registered formats as they are when read (a format registered later is
    in it): a sequence like the tuple it shows."""

    def __getitem__(self, index: Any) -> Any:
        return format_names()[index]

    def __len__(self) -> int:
        return len(format_names())

    def __iter__(self) -> Iterator[str]:
        return iter(format_names())

    def __contains__(self, name: object) -> bool:
        return name in format_names()

    def __eq__(self, other: object) -> bool:
        if isinstance(other, _Names):
            return True
        return isinstance(other, tuple | list) and tuple(other) == format_names()

    __hash__ = None  # type: ignore[assignment]

    # ``FORMATS`` was a tuple: code that adds to it or compares it with a list goes on working.
    def __add__(self, other: object) -> tuple[str, ...]:
        if not isinstance(other, tuple | list | _Names):
            return NotImplemented
        return format_names() + tuple(other)

    def __radd__(self, other: object) -> tuple[str, ...]:
        if not isinstance(other, tuple | list):
            return NotImplemented
        return tuple(other) + format_names()

    def __repr__(self) -> str:
        return repr(format_names())


FORMATS = _Names()
"""The names of the formats `load` reads (``format=`` takes one): ctxlab's own, then those
registered (`register_format`, the ``ctxlab.formats`` entry points), read from the registry
each time."""
