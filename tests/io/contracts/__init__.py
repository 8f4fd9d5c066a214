"""The census contract of each format, as data: one module a format (``<format>.py``; the
``continue`` format's is ``continue_.py``), each a ``CONTRACT`` of `Case` — a fixture, or a
small document, and what the census must count in it, said as counts of the file
(`tests.io.contracts.count`: code that knows no format). `tests.io.test_contracts` runs every
registered format's cases; a format without a module fails there."""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.fuzz.seeds import WRITTEN
from tests.io.contracts.count import Count, Counter, Find

FIXTURES = Path(__file__).parents[2] / "fixtures"


@dataclass(frozen=True)
class Case:
    """A source of one format and the counts its census must meet."""

    source: Any
    """A fixture's path (a file or a folder), decoded data, or a function of a folder that
    writes the source there and returns its path."""
    records: Counter
    """The records the census reads (summed over its kinds)."""
    calls: Counter | None = None
    """The tool calls the census counts (None: not checked)."""
    outputs: Counter | None = None
    """Each billed request's output tokens, in order (None: not checked)."""
    label: str = ""
    detected: bool = True
    """Whether ``load`` without ``format=`` finds this format (a fixture's file)."""

    def made(self, folder: Path) -> Any:
        """The source, written to ``folder`` first when it is made."""
        return self.source(folder) if callable(self.source) else self.source

    @property
    def name(self) -> str:
        if self.label:
            return self.label
        return str(self.source.relative_to(FIXTURES))[-48:]


def data(value: Any, label: str, records: Counter, calls: Counter | None = None) -> Case:
    """A case of decoded data (not a file: nothing to detect it by)."""
    return Case(value, records=records, calls=calls, label=label, detected=False)


def seed(format: str, records: Counter, calls: Counter | None = None) -> Case:
    """A case of the fuzz harness's seed document of a format (`tests.fuzz.seeds.WRITTEN`)."""
    name, value = WRITTEN[format]
    return data(value, f"{format} seed {name}", records=records, calls=calls)


def seed_found(format: str, records: str, calls: str, where: dict[str, Any]) -> Case:
    """A seed case (`seed`) whose records are the values at the path ``records`` and whose
    calls are those at the path ``calls`` that match ``where`` (`tests.io.contracts.count.Find`)."""
    return seed(format, records=Count(Find(records)), calls=Count(Find(calls, where=where)))


def each(paths: list[Path], **counts: Any) -> list[Case]:
    """One case a path, all with the same counts."""
    return [Case(path, **counts) for path in paths]


def contract(format: str) -> tuple[Case, ...] | None:
    """The cases of a format (None: it has no contract module)."""
    try:
        module = importlib.import_module(f"tests.io.contracts.{_module_name(format)}")
    except ModuleNotFoundError as exc:
        if exc.name != f"tests.io.contracts.{_module_name(format)}":
            raise
        return None
    return tuple(module.CONTRACT)


def _module_name(format: str) -> str:
    return f"{format}_" if format in ("continue", "count") else format
