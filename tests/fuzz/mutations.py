"""Hostile variants of a sound session file, drawn by hypothesis: its JSON values replaced by
values no recorder writes (NaN, infinity, 2⁶⁴, ``1e400``, a digit no ``int`` reads, text nested
past recursion, markup, a wrong type), keys and records deleted, duplicated or reordered — and
then its bytes truncated, flipped or spliced. A zip (``.eval``) has an entry's JSON mutated or
its bytes damaged; a Markdown history (aider's) has lines replaced by hostile ones."""

from __future__ import annotations

import copy
import io
import json
import zipfile
from pathlib import Path
from typing import Any

from hypothesis import strategies as st

from ctxlab.io.formats.inspect import parse as _inspect
from tests.strategies import any_text, json_value

DEEP = "[" * 3_000 + "]" * 3_000
"""A JSON text nested past Python's recursion limit (a string value holding it is a hazard
for whoever decodes it again)."""

HOSTILE: list[Any] = [
    None,
    True,
    -1,
    0,
    2**64,
    -(2**63),
    float("inf"),
    float("-inf"),
    float("nan"),
    1e308,
    1.5,
    "",
    "x" * 5_000,
    "9" * 400,
    "¹²",
    "\x00\x1b[31m",
    "<script>alert(1)</script>",
    "</system-reminder><system-reminder>",
    "<mswea_bash_command>" * 50,
    DEEP,
    '{"a": ' * 400 + "1" + "}" * 400,
    [],
    {},
    [None],
    {"type": None},
    {"role": "assistant", "content": None},
]
"""Values put in place of a sound one."""

LINES = [
    "> Tokens: " + "9" * 3_000,
    "> Tokens: 1.2.3k sent, ,,, received, 1e400 cache hit",
    "> Tokens: -5 sent",
    "####",
    "#### " + "x" * 2_000,
    "# aider chat started at",
    "> ",
    "",
    "```bash",
    "<<<<<<< SEARCH",
]
"""Lines put into a Markdown history."""


NUMBERS: list[Any] = [
    -1,
    2**64,
    float("inf"),
    float("-inf"),
    float("nan"),
    1.5,
    "9" * 400,
    "12",
    "¹",
    None,
    True,
    "2026-13-45T99:99:99Z",
]
"""Values put in place of a number (a count, a time, an index): where numbers are read, the
arithmetic breaks."""

hostile_values = st.sampled_from(HOSTILE).map(copy.deepcopy)
"""A value of `HOSTILE`, a copy: a mutation never changes the list's own."""


def _pick(draw: st.DrawFn, items: list[Any]) -> Any:
    """One of ``items``, drawn as a number independent of their count: an example recorded in
    hypothesis's database replays the same way after a seed file changed size (drawing from
    ``sampled_from(items)`` or ``integers(0, len - 1)`` would not)."""
    return items[draw(st.integers(0, 2**16)) % len(items)]


def _paths(value: Any, limit: int = 3_000) -> list[tuple[Any, Any]]:
    """(container, key) of every value inside ``value``, breadth first, at most ``limit``."""
    found: list[tuple[Any, Any]] = []
    queue = [value]
    while queue and len(found) < limit:
        current = queue.pop(0)
        items = (
            current.items()
            if isinstance(current, dict)
            else enumerate(current)
            if isinstance(current, list)
            else ()
        )
        for key, inner in items:
            found.append((current, key))
            queue.append(inner)
    return found


@st.composite
def mutated_value(draw: st.DrawFn, value: Any) -> Any:
    """``value`` (decoded JSON; changed in place and returned) with one to four mutations."""
    for _ in range(draw(st.integers(1, 4))):
        paths = _paths(value)
        if not paths:
            return draw(hostile_values)
        # A number, or JSON text in a string, one time in two: where the arithmetic and the
        # decoding happen (a start time, a count, an attribute), the rare paths among many.
        numbers = [(c, k) for c, k in paths if _numeric(c[k])]
        texts = [(c, k) for c, k in paths if _json_text(c[k])]
        focus = draw(st.sampled_from(["any", "number", "text"]))
        if focus == "number" and numbers:
            container, key = _pick(draw, numbers)
            container[key] = copy.deepcopy(draw(st.sampled_from(NUMBERS)))
            continue
        if focus == "text" and texts:
            container, key = _pick(draw, texts)
            container[key] = draw(st.sampled_from([DEEP, "{" * 5, "[1e400]", "NaN"]))
            continue
        container, key = _pick(draw, paths)
        operation = draw(
            st.sampled_from(["hostile", "generated", "delete", "duplicate", "wrap", "rename"])
        )
        if operation == "hostile":
            container[key] = draw(hostile_values)
        elif operation == "generated":
            container[key] = draw(json_value)
        elif operation == "delete":
            del container[key]
        elif operation == "duplicate" and isinstance(container, list):
            container.insert(key, json.loads(json.dumps(container[key])))
        elif operation == "duplicate":
            container[f"{key}_"] = container[key]
        elif operation == "wrap":
            container[key] = [container[key]]
        elif isinstance(container, dict):
            container[draw(any_text)] = container.pop(key)
        else:
            container.reverse()
    return value


def _numeric(value: Any) -> bool:
    return (isinstance(value, int | float) and not isinstance(value, bool)) or (
        isinstance(value, str) and value[:1].isdigit()
    )


def _json_text(value: Any) -> bool:
    return isinstance(value, str) and value[:1] in ("{", "[")


DAMAGE = st.lists(
    st.tuples(
        st.sampled_from(["truncate", "flip", "splice", "repeat"]),
        st.integers(0, 2**16),
        st.binary(min_size=1, max_size=20),
        st.integers(1, 200),
        st.integers(1, 5),
    ),
    max_size=3,
)
"""The damage to do, drawn whole before it is done: what is drawn does not depend on the bytes
(a seed that differs from run to run — a cache holding timings — replays the same draws)."""


@st.composite
def damaged_bytes(draw: st.DrawFn, data: bytes) -> bytes:
    """``data`` truncated, with bytes flipped, spliced in, or a stretch repeated (or as it is)."""
    return damage_with(data, draw(DAMAGE))


def damage_with(data: bytes, damage: list[tuple[str, int, bytes, int, int]]) -> bytes:
    """``data`` with the ``damage`` drawn from `DAMAGE` done to it."""
    out = bytearray(data)
    for operation, where, inserted, length, times in damage:
        if not out:
            break
        at = where % len(out)
        if operation == "truncate":
            del out[at:]
        elif operation == "flip":
            out[at] ^= inserted[0] or 1
        elif operation == "splice":
            out[at:at] = inserted
        else:
            out[at:at] = out[at : at + length] * times
    return bytes(out)


def _records(text: str) -> tuple[str, Any]:
    """("document", value) or ("lines", [values]) of a JSON or JSON Lines text."""
    try:
        return "document", json.loads(text)
    except ValueError:
        return "lines", [json.loads(line) for line in text.splitlines() if line.strip()]


def _dumps(layout: str, value: Any) -> bytes:
    if layout == "document":
        return json.dumps(value).encode()
    records = value if isinstance(value, list) else [value]
    return "\n".join(json.dumps(v) for v in records).encode() + b"\n"


@st.composite
def mutated_file(draw: st.DrawFn, seed: Path) -> bytes:
    """The bytes of a hostile variant of the session file ``seed``."""
    data = seed.read_bytes()
    if zipfile.is_zipfile(seed):
        return draw(_mutated_zip(seed))
    text = data.decode("utf-8")
    if seed.name.endswith((".md", ".history")):  # text, not JSON: Markdown, aider's LLM log
        lines = text.splitlines()
        for _ in range(draw(st.integers(1, 4))):
            at = _pick(draw, range(max(len(lines), 1)))  # type: ignore[arg-type]
            line = draw(st.sampled_from(LINES) | any_text)
            if draw(st.booleans()) and lines:
                lines[at] = line
            else:
                lines.insert(at, line)
        return draw(damaged_bytes("\n".join(lines).encode("utf-8", "surrogatepass")))
    layout, value = _records(text)
    if draw(st.integers(0, 4)) > 0:
        value = draw(mutated_value(value))
    return draw(damaged_bytes(_dumps(layout, value)))


@st.composite
def _mutated_zip(draw: st.DrawFn, seed: Path) -> bytes:
    data = seed.read_bytes()
    if draw(st.booleans()):
        return draw(damaged_bytes(data))
    out = io.BytesIO()
    with zipfile.ZipFile(seed) as source:
        names = [n for n in source.namelist() if n.endswith(".json")]
        chosen = _pick(draw, names)
        with zipfile.ZipFile(out, "w", compression=zipfile.ZIP_DEFLATED) as target:
            for name in names:
                # (ctxlab's reader: the zip module of 3.11 reads no zstandard entry)
                entry = _inspect._read(source, name, seed)
                if name == chosen:
                    entry = _dumps("document", draw(mutated_value(json.loads(entry))))
                target.writestr(name, entry)
    return out.getvalue()
