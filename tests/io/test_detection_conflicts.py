"""No two formats claim one file: every file of tests/fixtures and of the corpus's raw files
(``CTXLAB_CORPUS``) goes through every registered format's detectors — its JSON document, each of
a JSON Lines file's first 20 records, a text file's first characters, the place of a file or folder — and at
most one format that is not a chat guess claims each; the formats that tell kinds apart
(OpenHands' V0 and V1 logs, events) have exactly one kind claim each of their files. The file's
loaded ``source`` is among what claimed it. A control registers a detector that overlaps
another's and sees the test's check fail.

(The regression this guards: OpenHands' V1 log detector, written in one file, claimed the V0
completion logs another file read, and every V0 log loaded without its tool calls.)"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from ctxlab import load
from ctxlab.exceptions import CtxlabError
from ctxlab.io._files import head, read_records
from ctxlab.io._format import SessionFormat
from ctxlab.io._registry import formats
from ctxlab.io._transcript import corpus_dir
from tests.io.digests import sources

FIXTURES = Path(__file__).parents[1] / "fixtures"


def _values(path: Path) -> Iterator[tuple[str, Any]]:
    """What detection looks at in ``path``: (what it is, the value)."""
    yield "place", path
    if path.is_dir():
        return
    text = head(path)
    yield "text", text
    if not text.lstrip().startswith(("{", "[")):
        return
    try:
        read = read_records(path)
    except CtxlabError:
        return
    if read.records:
        values = [value for _, value in read.records[:20]]
        yield "lines", values
        yield from (("record", value) for value in values)
    else:
        yield "document", read.document


def _claims(declared: SessionFormat, what: str, value: Any) -> bool:
    if what == "place":
        return _places(declared, value)
    if what == "text":
        return declared.text is not None and declared.text(value)
    if what == "lines":
        return declared.lines is not None and declared.lines(value)
    if isinstance(value, Mapping):
        return declared.document is not None and declared.document(value)
    if isinstance(value, list) and value:
        return declared.records is not None and declared.records(value)
    return False


def _places(declared: SessionFormat, path: Path) -> bool:
    if declared.place is None:
        return False
    try:
        return declared.place(path, False, None, 0) is not None
    except CtxlabError:
        return False  # refused, saying why: not claimed


def conflicts(path: Path) -> list[str]:
    """Each value of ``path`` that two formats (not chat guesses) claim, or that a format's
    kinds claim other than once."""
    found = []
    for what, value in _values(path):
        claimed = [f.name for f in formats() if not f.guess and _claims(f, what, value)]
        if len(claimed) > 1:
            found.append(f"{path.name}: its {what} claimed by {claimed}")
        for declared in formats():
            if declared.name in claimed and declared.kinds and what in ("document", "record"):
                kinds = [name for name, claims in declared.kinds if claims(value)]
                if len(kinds) != 1:
                    found.append(f"{path.name}: its {what} is of {declared.name} kinds {kinds}")
    return found


def _claimers(path: Path) -> set[str]:
    names = set()
    for what, value in _values(path):
        names |= {f.name for f in formats() if _claims(f, what, value)}
    return names


def _files() -> list[Path]:
    raw = corpus_dir() / "raw"
    return [*sources(FIXTURES), *(sources(raw) if raw.is_dir() else [])]


@pytest.mark.parametrize("path", _files(), ids=lambda p: p.name)
def test_no_two_formats_claim_one_file(path: Path) -> None:
    assert conflicts(path) == []


def test_every_file_that_loads_is_claimed_by_the_format_it_loads_as() -> None:
    loaded = 0
    for path in _files():
        try:
            source = load(path).meta.get("source", "ctxlab")
        except CtxlabError:
            continue
        loaded += 1
        claimed = _claimers(path)
        assert source in claimed, (path, source, claimed)
    assert loaded > 100


def test_a_detector_that_overlaps_another_is_a_conflict(monkeypatch: pytest.MonkeyPatch) -> None:
    registered = formats()
    codex = next(f for f in registered if f.name == "codex")
    greedy = SessionFormat(name="greedy", document=codex.document, read=codex.read)
    monkeypatch.setattr(f"{__name__}.formats", lambda: (*registered, greedy))
    rollout = next((FIXTURES / "codex").glob("rollout-2025-*.jsonl"))
    assert any("['codex', 'greedy']" in c for c in conflicts(rollout))


def test_the_v0_log_a_v1_detector_once_claimed_is_one_kind(monkeypatch: pytest.MonkeyPatch) -> None:
    logs = sorted((FIXTURES / "openhands" / "v0").rglob("*.json"))
    assert logs and all(conflicts(log) == [] for log in logs)
    # The regression: a V1 check without V0's keys claims the V0 logs too.
    registered = formats()
    openhands = next(f for f in registered if f.name == "openhands")
    loose = tuple(
        (name, _has_a_response if name == "V1 completion log" else claims)
        for name, claims in openhands.kinds
    )
    wider = replace(openhands, kinds=loose)
    monkeypatch.setattr(
        f"{__name__}.formats",
        lambda: tuple(wider if f.name == "openhands" else f for f in registered),
    )
    assert any("kinds" in c for log in logs for c in conflicts(log))


def _has_a_response(value: Any) -> bool:
    return isinstance(value, Mapping) and isinstance(value.get("response"), Mapping)
