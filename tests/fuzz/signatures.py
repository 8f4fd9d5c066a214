"""The public API read from its signatures: every entry point (`entry_points`: the functions and
classes of ``ctxlab.__all__`` and of each public subpackage's and module's ``__all__``, the
class methods of those classes, and the methods of each whose instance the pool holds), each
parameter's annotation read as a `Shape`, and the bad values that shape calls for
(`bad_values`: wrong types, numbers out of range, NaN, infinities, huge and negative numbers,
text no file system or codec takes, paths that are files, missing, read-only or too long).

Nothing here is a hand list of entry points: a function added to an ``__all__`` is fuzzed the
next run. What is hand-written is what a kind of value can be wrong by."""

from __future__ import annotations

import collections.abc as abc
import importlib
import inspect
import math
import os
import pkgutil
import sys
import types
import typing
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import Any

import ctxlab

MISSING: Any = object()
"""No value: a parameter left to its default, or one the pool cannot fill."""


@dataclass(frozen=True)
class Shape:
    """What an annotation lets a parameter be, in the harness's terms."""

    kinds: frozenset[str]
    """Of ``none bool int float str bytes path literal seq map callable class any``."""
    literals: tuple[Any, ...] = ()
    classes: tuple[type, ...] = ()
    items: tuple[Shape, ...] = ()
    """A sequence's item shapes, a mapping's value shapes."""

    def __or__(self, other: Shape) -> Shape:
        return Shape(
            self.kinds | other.kinds,
            self.literals + other.literals,
            self.classes + other.classes,
            self.items + other.items,
        )


ANY = Shape(frozenset({"any"}))
_SEQUENCES = (
    abc.Sequence,
    abc.Iterable,
    abc.Collection,
    abc.Iterator,
    abc.AsyncIterable,
    abc.AsyncIterator,
    abc.Set,
    abc.MutableSequence,
    list,
    tuple,
    set,
    frozenset,
)
_MAPPINGS = (abc.Mapping, abc.MutableMapping, dict)
_PLAIN = {
    bool: "bool",
    int: "int",
    float: "float",
    str: "str",
    bytes: "bytes",
    bytearray: "bytes",
    type(None): "none",
}


def shape_of(annotation: Any) -> Shape:
    """The shape of a resolved annotation (a string left unresolved is guessed from its words)."""
    if annotation is inspect.Parameter.empty or annotation is Any or annotation is object:
        return ANY
    if annotation is None:
        return Shape(frozenset({"none"}))
    if isinstance(annotation, str):
        return _guessed(annotation)
    if isinstance(annotation, typing.TypeVar):
        return ANY
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is typing.Annotated:
        return shape_of(args[0])
    if origin in (typing.Union, types.UnionType):
        shapes = [shape_of(a) for a in args]
        joined = shapes[0]
        for more in shapes[1:]:
            joined = joined | more
        return joined
    if origin is typing.Literal:
        return Shape(frozenset({"literal"}), literals=args)
    if origin is type:
        return Shape(frozenset({"class"}), classes=(type,))
    if origin is not None:
        return _generic(origin, args)
    if isinstance(annotation, type):
        return _class(annotation)
    if isinstance(annotation, typing.ForwardRef):
        return _guessed(annotation.__forward_arg__)
    return ANY


def _generic(origin: Any, args: tuple[Any, ...]) -> Shape:
    if origin is abc.Callable:
        return Shape(frozenset({"callable"}))
    if isinstance(origin, type) and issubclass(origin, PurePath | os.PathLike):
        return Shape(frozenset({"path"}))
    if origin in _MAPPINGS:
        return Shape(frozenset({"map"}), items=(shape_of(args[1]),) if len(args) == 2 else ())
    if origin in _SEQUENCES:
        items = tuple(shape_of(a) for a in args if a is not Ellipsis)
        return Shape(frozenset({"seq"}), items=items[:1])
    return _class(origin) if isinstance(origin, type) else ANY


def _class(kind: type) -> Shape:
    for plain, name in _PLAIN.items():
        if kind is plain:
            return Shape(frozenset({name}))
    if issubclass(kind, PurePath) or kind is os.PathLike:
        return Shape(frozenset({"path"}))
    if kind in _MAPPINGS:
        return Shape(frozenset({"map"}))
    if kind in _SEQUENCES:
        return Shape(frozenset({"seq"}))
    if kind is abc.Callable:
        return Shape(frozenset({"callable"}))
    return Shape(frozenset({"class"}), classes=(kind,))


def _guessed(text: str) -> Shape:
    # An annotation no namespace resolves (a name imported for type checking only).
    words = text.replace("|", " ").replace("[", " ").replace("]", " ").split()
    kinds = {_PLAIN_NAMES[w] for w in words if w in _PLAIN_NAMES}
    if any("Path" in w for w in words):
        kinds.add("path")
    return Shape(frozenset(kinds or {"any"}))


_PLAIN_NAMES = {"bool": "bool", "int": "int", "float": "float", "str": "str", "None": "none"}


# -- the entry points ------------------------------------------------------------------------


@dataclass
class Entry:
    """One public entry point: a function, a class (its constructor), or a method."""

    id: str
    """``module.name`` or ``module.Class.method``: the test's id."""
    target: Callable[..., Any]
    parameters: list[inspect.Parameter]
    shapes: dict[str, Shape]
    owner: type | None = None
    """The class of an instance method (its instance comes from the pool)."""
    export: Any = None
    """What the ``__all__`` exports: the function, or the class (of a method too)."""
    package: str = ""
    """The ``__all__``'s package: ``ctxlab.pipeline`` for ``ctxlab.pipeline.find_split``."""


def public_modules() -> list[types.ModuleType]:
    """``ctxlab``, each public subpackage and each public module of those, that imports here
    (the widgets and the integrations need their extras)."""
    names = ["ctxlab"]
    for found in pkgutil.iter_modules(ctxlab.__path__):
        if found.name.startswith("_"):
            continue
        names.append(f"ctxlab.{found.name}")
        if found.ispkg:
            package = _imported(f"ctxlab.{found.name}")
            for inner in pkgutil.iter_modules(getattr(package, "__path__", [])):
                if not inner.name.startswith("_"):
                    names.append(f"ctxlab.{found.name}.{inner.name}")
    return [m for m in map(_imported, names) if m is not None]


def _imported(name: str) -> types.ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None  # an extra that is not installed: its entry points are not fuzzed here


def _callable_exports(module: types.ModuleType) -> Iterator[tuple[str, Any]]:
    for name in getattr(module, "__all__", None) or ():
        value = getattr(module, name, None)
        if not str(getattr(value, "__module__", "")).startswith("ctxlab"):
            continue
        if inspect.isfunction(value) or (inspect.isclass(value) and _constructible(value)):
            yield f"{module.__name__}.{name}", value


def _constructible(cls: type) -> bool:
    # Errors and warnings are raised by ctxlab, not called; a protocol or a typed dict only
    # describes a shape.
    return not (
        issubclass(cls, BaseException)
        or getattr(cls, "_is_protocol", False)
        or typing.is_typeddict(cls)
    )


def entry_points(instances: Callable[[type], bool] = lambda cls: False) -> list[Entry]:
    """Every public entry point, once (a name exported by several packages under its first),
    in a stable order; ``instances(cls)`` says whether the pool has an instance of ``cls``
    (then its public methods are entry points too)."""
    entries: list[Entry] = []
    seen: set[int] = set()
    for module in public_modules():
        for name, value in _callable_exports(module):
            if id(value) in seen:
                continue
            seen.add(id(value))
            for found in _entries_of(name, value, instances):
                found.export, found.package = value, module.__name__
                entries.append(found)
    return entries


def notebook_api() -> set[int]:
    """The objects a notebook imports from ``ctxlab`` (its ``__all__`` and the names it
    re-exports from its packages, ``PACKAGE_NAMES``), by identity."""
    names = [*ctxlab.__all__, *ctxlab.PACKAGE_NAMES]
    return {id(getattr(ctxlab, name)) for name in names}


def engine_packages() -> set[str]:
    """The packages whose public names ``ctxlab`` re-exports the user's share of (the rest of
    their ``__all__`` are building blocks); a package it re-exports nothing of (``fork``,
    ``widgets``, ``integrations``, ``demo``) is imported from by users directly."""
    found = {str(getattr(getattr(ctxlab, name), "__module__", "")) for name in ctxlab.__all__}
    found |= set(ctxlab.PACKAGE_NAMES.values())
    return {".".join(name.split(".")[:2]) for name in found if name.startswith("ctxlab.")}


def _entries_of(name: str, value: Any, instances: Callable[[type], bool]) -> list[Entry]:
    if inspect.isfunction(value):
        found = entry(name, value)
        return [found] if found else []
    made = [e for e in [entry(name, value)] if e]
    for attr, raw in _own_members(value):
        if isinstance(raw, classmethod | staticmethod):
            made += [e for e in [entry(f"{name}.{attr}", getattr(value, attr))] if e]
        elif inspect.isfunction(raw) and instances(value):
            method = entry(f"{name}.{attr}", raw, owner=value)
            if method is not None and method.parameters:
                made.append(method)
    return made


def _own_members(cls: type) -> Iterator[tuple[str, Any]]:
    # The public methods ctxlab defines on the class and its ctxlab bases (not pydantic's, not
    # object's), each once.
    seen: set[str] = set()
    for base in cls.__mro__:
        if not base.__module__.startswith("ctxlab"):
            continue
        for attr, raw in vars(base).items():
            if (attr.startswith("_") and attr != "__call__") or attr in seen:
                continue
            seen.add(attr)
            yield attr, raw


def entry(name: str, target: Any, owner: type | None = None) -> Entry | None:
    """The entry point ``target`` under ``name``, its parameters (``self`` left out for a
    method) and their shapes; None when it has no signature to read."""
    try:
        signature = inspect.signature(target)
    except (TypeError, ValueError):
        return None
    hints = _hints(target)
    parameters = [
        p for p in signature.parameters.values() if p.kind is not inspect.Parameter.VAR_KEYWORD
    ]
    if owner is not None:
        parameters = parameters[1:]
    shapes = {p.name: shape_of(hints.get(p.name, p.annotation)) for p in parameters}
    return Entry(name, target, parameters, shapes, owner)


def _hints(target: Any) -> dict[str, Any]:
    # The annotations resolved: in the target's module, then in every ctxlab module's names
    # (names imported only for type checking), then one by one (what still fails is guessed).
    function = target.__init__ if inspect.isclass(target) else target
    function = getattr(function, "__func__", function)
    module = sys.modules.get(getattr(function, "__module__", ""), None)
    space = {**_namespace(), **(vars(module) if module else {})}
    try:
        return typing.get_type_hints(function, globalns=space, include_extras=True)
    except Exception:
        pass
    hints: dict[str, Any] = {}
    for name, text in getattr(function, "__annotations__", {}).items():
        try:
            hints[name] = eval(text, space) if isinstance(text, str) else text
        except Exception:
            hints[name] = text
    return hints


_SPACE: dict[str, Any] = {}


def _namespace() -> dict[str, Any]:
    if not _SPACE:
        for name, module in list(sys.modules.items()):
            if name.startswith("ctxlab") and module is not None:
                _SPACE.update(
                    (k, v) for k, v in vars(module).items() if isinstance(v, type) or _alias(v)
                )
        import pandas as pd

        _SPACE.update(vars(typing), pd=pd, os=os, Path=Path, abc=abc, math=math)
        _SPACE.update((k, getattr(abc, k)) for k in abc.__all__)
    return _SPACE


def _alias(value: Any) -> bool:
    alias = getattr(typing, "TypeAliasType", ())  # (Python 3.12)
    return typing.get_origin(value) is not None or isinstance(value, alias)
