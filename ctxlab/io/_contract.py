"""A format's census contract, checked: each `FormatCase` its declaration brings (``contract``)
is loaded as the format, and its census must add up and meet the counts the case says the file
holds — its records, its tool calls, each billed request's output tokens — and describe the
transcript it came with; a file must be found as the format with no ``format=`` given. A case
may say more, as tables: its census's unit and records read by kind, what was skipped by
reason, the usage lost by reason.

The checks know no format: what a case expects is the case's data. ctxlab's tests run every
registered format's contract; a format's author runs `check_contract` on their own."""

from __future__ import annotations

import tempfile
from collections.abc import Iterable, Sequence
from os import PathLike
from pathlib import Path
from typing import Any

from ctxlab.exceptions import CtxlabError, UsageError
from ctxlab.io._census import Census
from ctxlab.io._format import Count, FormatCase, SessionFormat
from ctxlab.io._load import load
from ctxlab.io._registry import format_named
from ctxlab.io._transcript import Transcript

__all__ = ["check_contract"]


def check_contract(
    format: str | SessionFormat,
    cases: Iterable[FormatCase] | None = None,
    folder: str | Path | None = None,
) -> list[str]:
    """What ``format``'s census contract finds wrong, one line a finding naming its case:
    empty when every case holds. ``cases`` default to the registered declaration's
    ``contract``; a case whose source is made by a function writes it under ``folder`` (a
    temporary folder by default).

    Raises `UsageError` for a format that is not registered (a declaration given must be the
    one registered: its cases are read with the registered reader), or one with no case to
    check (a format without a contract: give its declaration ``contract=(FormatCase(...),)``)."""
    name = format.name if isinstance(format, SessionFormat) else format
    declared = format_named(name)
    if declared is None:
        msg = f"format {name!r} is not registered: register_format it before checking it"
        raise UsageError(msg)
    if isinstance(format, SessionFormat) and format is not declared:
        msg = (
            f"the declaration given is not the one registered as {name!r} (load reads with the "
            "registered one): register_format(it, replace=True) before checking it"
        )
        raise UsageError(msg)
    chosen = tuple(declared.contract if cases is None else cases)
    if not chosen:
        msg = (
            f"format {name!r} has no contract: give its SessionFormat "
            "contract=(FormatCase(source, records=...),) — a file of it and what its census counts"
        )
        raise UsageError(msg)
    if folder is not None:
        return _findings(name, chosen, Path(folder))
    with tempfile.TemporaryDirectory(prefix="ctxlab-contract-") as made:
        return _findings(name, chosen, Path(made))


def _findings(name: str, cases: tuple[FormatCase, ...], folder: Path) -> list[str]:
    return [f"{name} {case.name}: {said}" for case in cases for said in _case(name, case, folder)]


def _case(name: str, case: FormatCase, folder: Path) -> list[str]:
    # The findings of one case: a load that fails is one; else what its census does not meet.
    source = case.made(folder)
    try:
        transcript = load(source, format=name)
    except CtxlabError as exc:
        return [f"does not load as {name}: {exc}"]
    found = _census(transcript, source, case)
    if case.detected or (case.detected is None and isinstance(source, str | PathLike)):
        found += _detected(transcript, source, name)
    return found


def _census(transcript: Transcript, source: Any, case: FormatCase) -> list[str]:
    # What the census of one loaded case does not meet, of the case's counts and of itself.
    census = transcript.census
    if census is None:
        return ["the transcript has no census"]
    found = [] if census.adds_up else [f"its census does not add up: {census.problems()}"]
    if census.unaccounted:
        found.append(f"values left unaccounted: {census.unaccounted}")
    if not census.used:
        found.append("nothing of the file became the transcript")
    read = sum(census.read.values())
    expected = [
        ("records read", read, case.records),
        ("tool calls", census.tool_calls, case.calls),
        ("billed output tokens", _outputs(transcript), case.outputs),
    ]
    for what, got, count in expected:
        wanted = _expected(count, source)
        if count is not None and got != wanted:
            found.append(f"{what}: the census says {got}, the contract {wanted}")
    found += _tables(transcript, census, case)
    found += _describes(transcript)
    return found


def _tables(transcript: Transcript, census: Census, case: FormatCase) -> list[str]:
    # The case's tables by kind or reason, each equal to the load's when the case gives it.
    found = []
    if case.unit and census.unit != case.unit:
        found.append(f"unit: the census counts in {census.unit!r}, the contract {case.unit!r}")
    tables = [
        ("records read by kind", census.read, case.read),
        ("skipped by reason", transcript.meta.get("skipped", {}), case.skipped),
        ("usage lost by reason", census.usage_lost, case.usage_lost),
    ]
    for what, got, wanted in tables:
        if wanted is not None and dict(got) != dict(wanted):
            found.append(f"{what}: the load says {dict(got)}, the contract {dict(wanted)}")
    return found


def _describes(transcript: Transcript) -> list[str]:
    # The census describes the transcript it came with: its usages, messages and replies.
    census = transcript.census
    assert census is not None  # (checked by the caller)
    replies = sum(m.role == "assistant" for m in transcript.messages)
    pairs = [
        ("usages placed", census.usage_placed, len(transcript.usage)),
        ("messages", census.messages, len(transcript.messages)),
        ("replies", census.replies, replies),
    ]
    return [
        f"{what}: the census says {said}, the transcript has {held}"
        for what, said, held in pairs
        if said != held
    ]


def _detected(transcript: Transcript, source: Any, name: str) -> list[str]:
    # A file of the format is read the same with no format= given: found as the format.
    try:
        found = load(source)
    except CtxlabError as exc:
        return [f"not found as {name} with no format= given: {exc}"]
    # (Not its meta's source: a format may keep the one a file says, as ctxlab's own does.)
    same = found.census is not None and transcript.census is not None
    if not same or found.census.as_meta() != transcript.census.as_meta():  # type: ignore[union-attr]
        return ["its census differs with no format= given"]
    if found.messages != transcript.messages:
        return ["its messages differ with no format= given"]
    return []


def _outputs(transcript: Transcript) -> list[int]:
    return [transcript.usage[i].output_tokens for i in sorted(transcript.usage)]


def _expected(count: Count | None, source: Any) -> Any:
    # A count as data, or counted from the source by the case's own function.
    if callable(count):
        return count(source)
    return list(count) if isinstance(count, Sequence) else count
