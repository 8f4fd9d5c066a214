"""Every public entry point on bad arguments, driven from its signature (`tests.fuzz.signatures`):
for each parameter, values its annotation calls wrong (`tests.fuzz.bad_values`: wrong types,
NaN, infinities, huge, negative, text no codec or file system takes, paths that are files,
missing, read-only or too long), every other argument sound (`tests.fuzz.pool`). Each call
returns, or raises one of ctxlab's documented errors with a message (`tests.fuzz.contract`):
never an error of Python's own, never a hang, nothing written in the working folder.

Seeded and bounded: each parameter is tried once with a bad value drawn for it, then more up to
`PER_ENTRY` (the unit suite's share, about a minute in all on two cores); ``make fuzz`` tries
every bad value of every parameter. An entry point that needs the network or a real model is
skipped with the reason (`NEEDS`); a finding in another helper's modules is an expected failure
naming it (`KNOWN`), fixed there."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import inspect
import os
import random
import signal
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from ctxlab.exceptions import CtxlabError
from tests.fuzz.bad_values import Bad, Places, bad_values
from tests.fuzz.contract import AT_LENGTH, EXAMPLES, holds
from tests.fuzz.pool import Pool
from tests.fuzz.signatures import MISSING, Entry, engine_packages, entry_points, notebook_api
from tests.hostile import read_only

PER_ENTRY = 200 if AT_LENGTH else max(6, EXAMPLES // 4)
"""Calls per entry point beyond one a parameter (every bad value at length)."""
SECONDS = 10.0
"""The longest one call may take: its arguments are small, seconds mean a hang."""
SEED = 51

_NETWORK = "calls the provider's API (tests never reach the network): its arguments are checked "
NEEDS: dict[str, str] = {
    "ctxlab.load_ipython_extension": "needs an IPython shell (the %%ctx magics)",
    **{
        f"ctxlab.{model}.{method}": _NETWORK + "before it, by the offline models' same checks"
        for model in ("AnthropicModel", "models.OpenAIModel")
        for method in ("request", "summarize", "count_tokens", "load_limits")
    },
    "ctxlab.ObservedSession.record_failure": "raises the error it is given (managing): its "
    "purpose, not a finding",
}
"""Entry points not called, and why (the network, a real model, a shell, raising its
argument)."""

KNOWN: dict[str, str] = {}
"""Entry points with a finding not yet fixed (none today): each expected to fail, naming its
finding and who fixes it."""


class Hang(BaseException):
    """Raised into a call that ran past `SECONDS` (a BaseException: no ``except Exception``
    in the entry point can swallow it)."""


ENTRIES = entry_points(lambda cls: True)
"""Every entry point, the methods of every class among them: one the pool has no instance of
is skipped when run, saying so (the pool is built once the tests run, not to collect them)."""
NOTEBOOK_API, ENGINE = notebook_api(), engine_packages()


def users_call(entry: Entry) -> bool:
    """Whether users call ``entry`` with values of their own — what a notebook imports from
    ``ctxlab`` and its classes' methods, and everything of a package users import from directly
    (``ctxlab.fork``, ``ctxlab.widgets``, the integrations, the demo) — rather than it being an
    engine package's building block (a pipeline stage, a wire-format converter), whose typed
    arguments come from ctxlab itself: those get bad values of their own types only."""
    return id(entry.export) in NOTEBOOK_API or entry.package not in ENGINE


@pytest.fixture(scope="module")
def places(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Places]:
    folder = tmp_path_factory.mktemp("values")
    file = folder / "a-file.txt"
    file.write_text("not a folder")
    locked = folder / "read-only"
    locked.mkdir()
    try:
        with read_only(locked):
            yield Places(folder, file, locked)
    except pytest.skip.Exception:
        yield Places(folder, file, None)  # (root without chattr: no read-only folder)


@pytest.fixture(scope="module")
def pool(places: Places) -> Pool:
    # The SDKs and widgets some entry points import on their first call, imported here, untimed
    # (anthropic's import took 8 s on a loaded machine: past the bound, but not a hang).
    for name in ("anthropic", "openai", "ipywidgets", "plotly.graph_objects", "ctxlab.widgets"):
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    return Pool(places).build()


def _trials(entry: Entry) -> list[tuple[inspect.Parameter, Bad]]:
    """One bad value a parameter, then more, drawn with a seed of the entry's own."""
    draw = random.Random(f"{SEED}:{entry.id}")
    typed = not users_call(entry)
    # ``*args`` with no annotation (or ``object``) takes anything, passed on: not tried.
    choices = {
        p.name: []
        if p.kind is p.VAR_POSITIONAL and "any" in entry.shapes[p.name].kinds
        else bad_values(entry.shapes[p.name], typed=typed)
        for p in entry.parameters
    }
    first = [(p, draw.choice(choices[p.name])) for p in entry.parameters if choices[p.name]]
    rest = [(p, b) for p in entry.parameters for b in choices[p.name] if (p, b) not in first]
    draw.shuffle(rest)
    return first + rest[: max(PER_ENTRY - len(first), 0)]


def _arguments(
    entry: Entry, bad: inspect.Parameter, value: Any, pool: Pool
) -> tuple[list[Any], dict[str, Any]]:
    # The call's arguments: ``value`` for ``bad``, a sound value for each other required one.
    # A bad ``*args`` item goes after every parameter before it, given by position.
    by_position = bad.kind is inspect.Parameter.VAR_POSITIONAL
    positional = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.VAR_POSITIONAL)
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for parameter in entry.parameters:
        if parameter is bad:
            given = value
        elif parameter.kind is inspect.Parameter.VAR_POSITIONAL:
            continue  # (none given)
        elif parameter.default is not inspect.Parameter.empty:
            if parameter.kind not in positional and not by_position:
                continue
            given = parameter.default
        else:
            given = pool.valid(entry.shapes[parameter.name], parameter.name)
            if given is MISSING:
                pytest.skip(f"the pool has no valid {parameter.name} ({parameter.annotation})")
        if parameter.kind in positional or (
            by_position and parameter.kind is inspect.Parameter.POSITIONAL_OR_KEYWORD
        ):
            args.append(given)
        else:
            kwargs[parameter.name] = given
    return args, kwargs


async def _drained(result: Any) -> None:
    # What an entry point hands back to be awaited or iterated: run, a few items.
    if inspect.isawaitable(result):
        result = await result
    if hasattr(result, "__anext__"):
        try:
            for _ in range(3):
                await anext(result)
        except StopAsyncIteration:
            pass
        finally:
            if hasattr(result, "aclose"):
                await result.aclose()
    elif inspect.isgenerator(result):
        for _ in zip(range(3), result, strict=False):
            pass
        result.close()


def _alarm(signum: int, frame: Any) -> None:
    raise Hang(f"no answer in {SECONDS:g} s")


def _call(target: Callable[..., Any], args: list[Any], kwargs: dict[str, Any]) -> None:
    async def inside() -> None:
        # In a running loop, as in a notebook: an entry point that needs one has it.
        await _drained(target(*args, **kwargs))

    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, SECONDS)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # what is warned is not the contract's
            asyncio.run(inside())
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def _allowed(entry: Entry) -> tuple[type[BaseException], ...]:
    # A pydantic model refuses a bad field with pydantic's ValidationError (a ValueError naming
    # the field and the rule): documented (docs/reference-rules.md, "Config errors").
    model = inspect.isclass(entry.target) and issubclass(entry.target, BaseModel)
    return (CtxlabError, ValidationError) if model else (CtxlabError,)


def _where(exc: BaseException) -> str:
    # The deepest frame in ctxlab: where the error escaped from.
    trace = exc.__cause__.__traceback__ if exc.__cause__ is not None else exc.__traceback__
    place = ""
    while trace is not None:
        name = trace.tb_frame.f_code.co_filename
        if f"{os.sep}ctxlab{os.sep}" in name:
            place = f"{Path(name).name}:{trace.tb_lineno}"
        trace = trace.tb_next
    return place


def _findings(entry: Entry, pool: Pool, places: Places, cwd: Path) -> list[str]:
    found: list[str] = []
    for parameter, bad in _trials(entry):
        value = bad.make(places)
        if value is None and bad.label.startswith("a") and "read-only" in bad.label:
            continue  # no read-only folder here
        args, kwargs = _arguments(entry, parameter, value, pool)
        target = entry.target
        if entry.owner is not None:
            instance = pool.instance(entry.owner)
            target = getattr(instance, entry.target.__name__)
        # Text given as a path is a path in the working folder: written there as told.
        relative = "path" in entry.shapes[parameter.name].kinds and isinstance(value, str | bytes)
        try:
            holds(
                functools.partial(_call, target, args, kwargs),
                shallow=[] if relative else [cwd],
                seconds=SECONDS + 5,
                megabytes=None,
                errors=_allowed(entry),
            )
        except (AssertionError, Hang) as exc:
            cause = exc.__cause__ or exc
            said = " ".join(str(cause).split())[:160]
            found.append(
                f"{parameter.name}={bad.label}: {type(cause).__name__}: {said} [{_where(exc)}]"
            )
    return found


def _marked(entry: Entry) -> Any:
    known = KNOWN.get(entry.id)
    marks = [pytest.mark.xfail(reason=known, strict=False)] if known else []
    return pytest.param(entry, marks=marks, id=entry.id)


@pytest.mark.parametrize("entry", [_marked(e) for e in ENTRIES])
def test_bad_arguments_raise_only_documented_errors(
    entry: Entry, pool: Pool, places: Places, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if entry.id in NEEDS:
        pytest.skip(NEEDS[entry.id])
    if entry.owner is not None and not pool.has(entry.owner):
        pytest.skip(f"the pool has no {entry.owner.__name__} to call it on")
    monkeypatch.chdir(tmp_path)
    found = _findings(entry, pool, places, tmp_path)
    assert not found, f"{entry.id}:\n  " + "\n  ".join(found)
