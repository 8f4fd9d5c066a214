"""Hostile variants of a real fixture for the importers' Hypothesis tests: one value somewhere
in the document replaced (by another type, any JSON, or nothing), a key dropped, an item
dropped or repeated, or the file cut short — and the check every importer must pass on them: a
typed ctxlab error, or a transcript the pipeline can send whose skips are all counted and whose
census adds up."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from ctxlab import load
from ctxlab.exceptions import CtxlabError
from ctxlab.io._transcript import Transcript
from ctxlab.messages import find_tool_pair_problems
from tests.strategies import json_value

_WRONG = [None, "", "x", 0, -1, 1.5, True, [], {}, [None], {"": None}]


def _paths(value: Any, at: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    # Every place in the document: dict keys and list indexes, depth first.
    found: list[tuple[Any, ...]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            found.append((*at, key))
            found.extend(_paths(item, (*at, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.append((*at, index))
            found.extend(_paths(item, (*at, index)))
    return found


def _parent(document: Any, path: tuple[Any, ...]) -> Any:
    node = document
    for step in path[:-1]:
        node = node[step]
    return node


@st.composite
def mutated(draw: st.DrawFn, document: Any) -> Any:
    """``document`` with one hostile change at a place Hypothesis picks."""
    out = copy.deepcopy(document)
    paths = _paths(out)
    if not paths:
        return draw(json_value)
    path = draw(st.sampled_from(paths))
    parent = _parent(out, path)
    key = path[-1]
    action = draw(st.sampled_from(["wrong", "any", "drop", "repeat"]))
    if action == "wrong":
        parent[key] = draw(st.sampled_from(_WRONG))
    elif action == "any":
        parent[key] = draw(json_value)
    elif action == "drop":
        del parent[key]
    elif isinstance(parent, list):
        parent.insert(key, copy.deepcopy(parent[key]))
    else:
        parent[key] = copy.deepcopy(parent[key])
    return out


@st.composite
def cut(draw: st.DrawFn, text: str) -> str:
    """``text`` cut short at a place Hypothesis picks (a file copied while being written)."""
    return text[: draw(st.integers(0, max(len(text) - 1, 0)))]


def loads_or_refuses(call: Callable[[], Transcript]) -> Transcript | None:
    """Run a load: a typed error with a message, or a transcript with valid tool pairs whose
    skips are counted as whole numbers."""
    try:
        transcript = call()
    except CtxlabError as exc:
        assert str(exc).strip()
        return None
    assert find_tool_pair_problems(transcript.messages) == []
    # Every record read is used or skipped, every usage read placed or its loss said.
    census = transcript.census
    assert census is not None and census.adds_up, census and census.problems()
    skipped = transcript.meta.get("skipped") or {}
    assert all(isinstance(n, int) and n > 0 for n in skipped.values()), skipped
    json.dumps(transcript.meta, default=str)  # the meta is data a user can save
    return transcript


def mutated_or_cut(
    data: st.DataObject, path: Path, value: Any, text: str, format: str, *, lines: bool = False
) -> None:
    """Write to ``path`` either a mutation of ``value`` (a document, or with ``lines`` its
    records as JSON Lines), loaded as ``format``, or ``text`` cut short, loaded by detection:
    either loads or refuses (`loads_or_refuses`)."""
    if data.draw(st.booleans()):
        changed = data.draw(mutated(value))
        if lines:
            records = changed if isinstance(changed, list) else [changed]
            path.write_text("".join(json.dumps(e) + "\n" for e in records))
        else:
            path.write_text(json.dumps(changed))
        loads_or_refuses(lambda: load(path, format=format))  # type: ignore[arg-type]
    else:
        path.write_text(data.draw(cut(text)))
        loads_or_refuses(lambda: load(path))
