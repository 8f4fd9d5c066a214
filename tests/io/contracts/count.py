"""Counting a file by what it holds, knowing no format: the contracts (one module a format,
`tests.io.contracts`) say where to look — a dotted path, the keys and values an object must
have, which files of a folder — and the code here walks JSON values, lines, file names and
Markdown headers. No importer's code is read: a count is the file's own.

A source is a `Path` (a file or a folder) or decoded data. A file's values are its JSON Lines
records (``.jsonl``) or its one JSON document; text files are counted by their lines.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

Source = Any  # a Path (file or folder) or decoded data
Counter = Callable[[Source], Any]  # → an int (records, calls) or a list of ints (outputs)


class _Test:
    """A value of a ``where`` that is a test, not a value to equal."""

    def __init__(self, name: str, holds: Callable[[Any], bool]) -> None:
        self.name, self.holds = name, holds

    def __repr__(self) -> str:
        return self.name


_MISSING = object()
PRESENT = _Test("PRESENT", lambda v: v is not _MISSING)
ABSENT = _Test("ABSENT", lambda v: v is _MISSING)
TRUTHY = _Test("TRUTHY", lambda v: v is not _MISSING and bool(v))
FALSY = _Test("FALSY", lambda v: v is _MISSING or not v)


def values(source: Source) -> list[Any]:
    """The top-level values of a source: a JSON Lines file's records, a JSON file's document,
    or the data itself."""
    if not isinstance(source, Path):
        return [source]
    text = source.read_text(encoding="utf-8")
    if source.suffix == ".jsonl":
        return [json.loads(line) for line in text.splitlines() if line.strip()]
    return [json.loads(text)]


def _step(value: Any, key: str) -> Iterator[Any]:
    # One step of a dotted path: a key, a list index, ``*`` (every item), ``**`` (any depth).
    if key == "*":
        yield from (
            value.values()
            if isinstance(value, Mapping)
            else (value if isinstance(value, list) else ())
        )
    elif key == "**":
        yield from _everything(value)
    elif isinstance(value, Mapping) and key in value:
        yield value[key]
    elif (
        isinstance(value, list)
        and key.lstrip("-").isdigit()
        and -len(value) <= int(key) < len(value)
    ):
        yield value[int(key)]


def _everything(value: Any) -> Iterator[Any]:
    yield value
    children = (
        value.values() if isinstance(value, Mapping) else value if isinstance(value, list) else ()
    )
    for child in children:
        yield from _everything(child)


def at(value: Any, path: str) -> Iterator[Any]:
    """Every value at a dotted path ("" is the value itself)."""
    found = [value]
    for key in path.split(".") if path else ():
        found = [step for item in found for step in _step(item, key)]
    return iter(found)


def get(value: Any, path: str) -> Any:
    """The first value at a dotted path, or the missing mark."""
    return next(at(value, path), _MISSING)


def matches(value: Any, where: Mapping[str, Any]) -> bool:
    """Whether an object has, at each dotted key of ``where``, the value given (a tuple: one
    of them; a test: PRESENT, ABSENT, TRUTHY, FALSY)."""
    for key, wanted in where.items():
        found = get(value, key) if isinstance(value, Mapping | list) else _MISSING
        if isinstance(wanted, _Test):
            if not wanted.holds(found):
                return False
        elif isinstance(wanted, tuple):
            if found not in wanted:
                return False
        elif found is _MISSING or found != wanted:
            return False
    return True


@dataclass(frozen=True)
class InForce:
    """Records keyed by ``key`` as a log that rewrites itself: a later record of the same key
    replaces the earlier (in its place), a record holding ``rewind`` drops the records from
    the one it names on, and the items of an ``expand`` list are records too."""

    key: str
    rewind: str
    expand: str

    def __call__(self, found: list[Any]) -> list[Any]:
        records: dict[Any, Any] = {}
        for value in found:
            if not isinstance(value, Mapping):
                continue
            if self.rewind in value:
                ids = list(records)
                for gone in ids[ids.index(value[self.rewind]) :]:
                    del records[gone]
            elif isinstance(value.get(self.expand), list):
                records.update((m[self.key], m) for m in value[self.expand])
            elif self.key in value:
                records[value[self.key]] = value
        return list(records.values())


@dataclass(frozen=True)
class Find:
    """The values a count looks at: the source's top-level values (or those of its ``file``,
    a glob beside it or in it), those matching ``of`` (only the ``first`` if asked), then the
    values at the dotted path ``at`` of each, those matching ``where``."""

    at: str = ""
    where: Mapping[str, Any] = field(default_factory=dict)
    of: Mapping[str, Any] = field(default_factory=dict)
    file: str | None = None
    first: bool = False
    log: InForce | None = None

    def __call__(self, source: Source) -> list[Any]:
        found = [v for v in self._top(source) if matches(v, self.of)]
        found = found[:1] if self.first else found
        return [v for top in found for v in at(top, self.at) if matches(v, self.where)]

    def _top(self, source: Source) -> list[Any]:
        if self.file is not None:
            folder = source if source.is_dir() else source.parent
            top = [v for path in sorted(folder.glob(self.file)) for v in values(path)]
        else:
            top = values(source)
        return self.log(top) if self.log else top


def Either(*finds: Find) -> Callable[[Source], list[Any]]:
    """The values of the first of ``finds`` that finds any."""
    return lambda source: next((f for f in (find(source) for find in finds) if f), [])


def Count(find: Callable[[Source], list[Any]], unique: str | None = None) -> Counter:
    """How many values ``find`` finds (with ``unique``: how many different values at that key)."""
    if unique is None:
        return lambda source: len(find(source))
    return lambda source: len({json.dumps(get(v, unique)) for v in find(source)})


def Length(find: Callable[[Source], list[Any]], key: str) -> Counter:
    """The summed lengths of the lists at ``key`` of the values found (none there: 0)."""
    return lambda source: sum(
        len(held) for v in find(source) if isinstance(held := get(v, key), list)
    )


def Field(
    find: Callable[[Source], list[Any]],
    key: str,
    unique: str | None = None,
    new_of: str | None = None,
) -> Counter:
    """The values at ``key`` of the values found, in order: only the first of each ``unique``
    key, or only those whose ``new_of`` differs from the one kept before (a repeat sent
    again is not new)."""

    def field_values(source: Source) -> list[Any]:
        kept, seen = [], set()
        for value in find(source):
            if unique is not None:
                mark = json.dumps(get(value, unique))
                if mark in seen:
                    continue
                seen.add(mark)
            if new_of is not None and kept and get(kept[-1], new_of) == get(value, new_of):
                continue
            kept.append(value)
        return [get(v, key) for v in kept]

    return field_values


def Total(*counts: Counter, plus: int = 0) -> Counter:
    """The sum of counts, and ``plus``."""
    return lambda source: sum(count(source) for count in counts) + plus


def FirstOf(*counts: Counter) -> Counter:
    """The first count that is not empty (or zero)."""
    return lambda source: next((c for c in (count(source) for count in counts) if c), [])


def Lookup(keys: Counter, table: Find, key: str, value: str) -> Counter:
    """Each of ``keys``' values looked up in a table of the values ``table`` finds (``key`` →
    ``value``)."""

    def looked_up(source: Source) -> list[Any]:
        rows = {get(row, key): get(row, value) for row in table(source)}
        return [rows[k] for k in keys(source)]

    return looked_up


def Lines(blank: bool = False) -> Counter:
    """A text file's lines (blank ones too if asked)."""
    return lambda path: sum(
        1 for line in path.read_text(encoding="utf-8").splitlines() if blank or line.strip()
    )


def Files(glob: str, root: str = ".", stems: str | None = None) -> Counter:
    """How many files match ``glob`` under ``root`` (relative to the source's folder), where
    ``{stem}`` is the source's stem — or, with ``stems``, summed over the stems of the files
    that glob finds."""

    def files(source: Path) -> int:
        base = (source if source.is_dir() else source.parent) / root
        names = [p.stem for p in sorted(base.glob(stems))] if stems else [source.stem]
        return sum(len(list(base.glob(glob.format(stem=name)))) for name in names)

    return files


def Members(pattern: str, file: str | None = None) -> Counter:
    """How many names of a zip archive (the source, or ``file`` beside it) match ``pattern``
    (a regular expression from the name's start)."""
    import zipfile

    def members(source: Path) -> int:
        path = source.parent / file if file else source
        with zipfile.ZipFile(path) as archive:
            return sum(1 for name in archive.namelist() if re.match(pattern, name))

    return members


def Matched(pattern: str, after: str | None = None, before: str | None = None) -> Counter:
    """The whole numbers of group 1 of the lines matching ``pattern``, in the text between the
    first ``after`` and the next ``before`` (a marker line's start)."""
    compiled = re.compile(pattern)

    def matched(path: Path) -> list[int]:
        text = path.read_text(encoding="utf-8")
        if after is not None:
            text = text.split(after, 1)[1]
        if before is not None:
            text = text.split(before, 1)[0]
        found = (compiled.match(line) for line in text.splitlines())
        return [int(m.group(1)) for m in found if m]

    return matched


def Sections(header: str, fences: Sequence[str], skip: tuple[str, str]) -> Counter:
    """The sections of a Markdown file: each line matching ``header`` outside fenced code and
    outside an element whose body is skipped (``skip``: its opening and closing marks, the
    opening maybe mid-line), and the preamble when text stands before the first header. A
    fence also closes on marks glued to the end of a code line."""
    pattern, (opening, closing) = re.compile(header), skip

    def sections(path: Path) -> int:
        headers, fence, before, inside = 0, False, False, False
        for line in path.read_text(encoding="utf-8").splitlines():
            if opening in line or inside:
                inside = closing not in line.split(opening, 1)[-1]
            elif line.lstrip().startswith(tuple(fences)) or (fence and line.endswith(fences[0])):
                fence = not fence
            elif not fence and pattern.match(line):
                headers += 1
                continue
            before = before or (headers == 0 and bool(line.strip()))
        return headers + before

    return sections
