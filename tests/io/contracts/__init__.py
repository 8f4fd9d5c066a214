"""The census contract of each format, as data: one module a format (``<format>.py``; the
``continue`` format's is ``continue_.py``), each a ``CONTRACT`` of `Case` — a fixture, or a
small document, and what the census must count in it, said as counts of the file
(`tests.io.contracts.count`: code that knows no format) — or a document written for the rules
a format's rule tests exercise (`ruled`), with its census's tables by kind and reason, which
the rule test's transcript is loaded from. A format registered from outside ctxlab brings its
cases on its declaration (``SessionFormat.contract``, `ctxlab.FormatCase`): `contract` gives
both. `tests.io.test_contracts` runs every registered format's cases through
`ctxlab.check_contract`; a format with neither fails there, by name."""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxlab.io import FormatCase
from ctxlab.io._registry import format_named
from tests.fuzz.seeds import WRITTEN
from tests.io.contracts.count import Count, Counter, Find

FIXTURES = Path(__file__).parents[2] / "fixtures"


@dataclass(frozen=True)
class Case(FormatCase):
    """A source of one format and the counts its census must meet (`ctxlab.FormatCase`, the
    counts functions of the file: `tests.io.contracts.count`), named by its fixture's path."""

    @property
    def name(self) -> str:
        if self.label:
            return self.label
        if isinstance(self.source, Path) and self.source.is_relative_to(FIXTURES):
            return str(self.source.relative_to(FIXTURES))[-48:]
        return super().name


def data(value: Any, label: str, records: Counter, calls: Counter | None = None) -> Case:
    """A case of decoded data (not a file: nothing to detect it by)."""
    return Case(value, records=records, calls=calls, label=label, detected=False)


def seed(format: str, records: Counter, calls: Counter | None = None) -> Case:
    """A case of the fuzz harness's seed document of a format (`tests.fuzz.seeds.WRITTEN`)."""
    name, value = WRITTEN[format]
    return data(value, f"{format} seed {name}", records=records, calls=calls)


def found(source: Any, records: str, calls: str, where: dict[str, Any], **tables: Any) -> Case:
    """A case whose records are the values at the path ``records`` and whose calls are those
    at the path ``calls`` that match ``where`` (`tests.io.contracts.count.Find`); ``tables``:
    more of `Case` (``skipped``, ...)."""
    return Case(
        source, records=Count(Find(records)), calls=Count(Find(calls, where=where)), **tables
    )


def seed_found(format: str, records: str, calls: str, where: dict[str, Any]) -> Case:
    """A seed case (`seed`) whose records and calls are found as `found` finds them."""
    name, value = WRITTEN[format]
    return found(value, records, calls, where, label=f"{format} seed {name}", detected=False)


def each(paths: list[Path], **counts: Any) -> list[Case]:
    """One case a path, all with the same counts."""
    return [Case(path, **counts) for path in paths]


def written(name: str, value: Any) -> Callable[[Path], Path]:
    """A source written to ``name`` in the case's folder when the case is made: ``value`` as
    one JSON document, or (a ``.jsonl`` name) a list of records, one a line."""

    def write(folder: Path) -> Path:
        path = folder / name
        if name.endswith(".jsonl"):
            path.write_text("".join(json.dumps(record) + "\n" for record in value))
        else:
            path.write_text(json.dumps(value))
        return path

    return write


def ruled(source: Any, label: str, unit: str, read: dict[str, int], **tables: Any) -> Case:
    """A case written here for the rules it exercises (a rule test loads the same source, with
    ``format=``, and reads what the transcript shows): its census's ``unit`` and records
    ``read`` by kind (the records: their sum), and the ``skipped`` or ``usage_lost`` tables by
    reason it gives. Not detected unless ``detected=True``: hand-made odd items may make a
    document no detector claims, as the rule tests name the format."""
    tables.setdefault("detected", False)
    return Case(source, records=sum(read.values()), label=label, unit=unit, read=read, **tables)


def contract(format: str) -> tuple[FormatCase, ...] | None:
    """The cases of a format: those its declaration brings, then those of its module here
    (None: it has neither)."""
    declared = format_named(format)
    brought = declared.contract if declared is not None else ()
    try:
        module = importlib.import_module(f"tests.io.contracts.{_module_name(format)}")
    except ModuleNotFoundError as exc:
        if exc.name != f"tests.io.contracts.{_module_name(format)}":
            raise
        return tuple(brought) or None
    return (*brought, *module.CONTRACT)


def _module_name(format: str) -> str:
    return f"{format}_" if format in ("continue", "count") else format
