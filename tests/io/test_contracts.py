"""The census contract of every registered format: each format's cases (`tests.io.contracts`,
one module a format, as data; a format from outside brings its own on its declaration) load
with a census that adds up and meets the file's own counts — its records, its tool calls, each
billed request's output tokens — counted by code that knows no format
(`tests.io.contracts.count`), checked by `ctxlab.check_contract`. A format with no contract
fails, by name; each fixture is replayed at 200k and 32k, every request valid."""

from __future__ import annotations

from pathlib import Path

import pytest

from ctxlab import load
from ctxlab.io import Census, FormatCase, check_contract
from ctxlab.io._registry import format_names
from ctxlab.messages import request_start
from tests.helpers import validations
from tests.io.contracts import FIXTURES, contract

FORMATS = format_names()
CASES = [
    pytest.param(format, case, id=f"{format}:{case.name}")
    for format in FORMATS
    for case in contract(format) or ()
]
FILES = [p for p in CASES if isinstance(p.values[1].source, Path)]


@pytest.mark.parametrize("format", FORMATS)
def test_every_registered_format_has_a_contract_with_cases(format: str) -> None:
    # Fail, not skip: a format whose census no case checks is how a file's records go
    # missing unseen. The message names the format and where its contract goes.
    cases = contract(format)
    assert cases is not None, (
        f"format {format!r} has no contract: give its SessionFormat contract=(FormatCase(...),)"
        f" (ctxlab's own: tests/io/contracts/{format}.py)"
    )
    assert cases, f"format {format!r}: its contract has no case (no fixture found)"


@pytest.mark.parametrize(("format", "case"), CASES)
def test_the_census_adds_up_and_meets_the_files_own_counts(
    format: str, case: FormatCase, tmp_path: Path
) -> None:
    # `check_contract`: the census adds up, accounts for every value, meets the case's counts
    # (records, tool calls, billed outputs), describes its transcript, and a file of the format
    # is read the same with no format= given.
    assert check_contract(format, [case], tmp_path) == []


@pytest.mark.parametrize(("format", "case"), FILES)
@pytest.mark.parametrize("window", [200_000, 32_000])
async def test_every_fixture_replays_with_every_request_valid(
    format: str, case: FormatCase, window: int
) -> None:
    transcript = load(case.source, format=format)
    steps = await validations(transcript, window)
    start = request_start(transcript.messages)
    assert len(steps) == sum(m.role == "assistant" for m in transcript.messages[start:]) > 0
    assert set(steps) == {"passed"}


def test_a_census_that_does_not_add_up_is_caught() -> None:
    # The control: a census with a record neither used nor skipped, or a usage unexplained.
    good = load(FIXTURES / "codex" / "rollout-current-usage-after.jsonl").census
    assert good is not None and good.adds_up
    data = good.as_meta()
    lost = Census.from_meta({**data, "read": {**data["read"], "response_item message": 99}})
    assert lost is not None and not lost.adds_up
    unexplained = Census.from_meta({**data, "usage_read": data["usage_read"] + 1})
    assert unexplained is not None and not unexplained.adds_up


def test_a_dropped_record_is_caught_by_the_count(tmp_path: Path) -> None:
    # The control: the same count against a file with one record fewer is not met.
    (case,) = [c for c in contract("codex_exec") or () if c.source.name == "exec-0.60.jsonl"]
    lines = case.source.read_text().splitlines()
    shorter = tmp_path / case.source.name
    shorter.write_text("\n".join(lines[:-1]) + "\n")
    census = load(shorter, format="codex_exec").census
    assert census is not None and sum(census.read.values()) == case.records(case.source) - 1
