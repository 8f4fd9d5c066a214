"""Grading only when a figure asks (issue 54): a replay, the Lab's replayed view and a fork's
arrival never run the retention grader unless a figure is read, and the figures graded on demand
equal the ones graded as the replay goes — compared as a digest of every figure of every step
(the step table's row, every field of every retention), on corpus sessions and several configs,
with a control: another config's digest differs."""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest

import ctxlab.analysis._replay_requests as replay_module
from ctxlab import ContextConfig, TiktokenCounter, TokenCache
from ctxlab.analysis._grading import graded_steps
from ctxlab.analysis._replay import ReplayStep, replay, replay_row
from ctxlab.io._transcript import load_transcript
from ctxlab.sources import ReplaySession
from ctxlab.widgets._steps import StepLog
from tests.conftest import corpus_files, requires_corpus
from tests.helpers import counted_calls, replayed

# Corpus sessions that compact at 16k (mini-SWE-agent and Claude Code), named, never
# chosen by how ctxlab does on them.
SESSIONS = (
    "mini_swe_agent__matplotlib__matplotlib-22719.jsonl",
    "claude_code__6c2214d7_agent-afc096d.jsonl",
    "mini_swe_agent__django__django-15957.jsonl",
)
CONFIGS = {
    "default": ContextConfig(),
    "early": ContextConfig(trigger_ratio=0.5, reserve_ratio=0.2),
}
WINDOW = 16_000


def _path(name: str) -> Path:
    found = [p for p in corpus_files() if p.name == name]
    if not found:
        pytest.skip(f"{name} is not in the corpus")
    return found[0]


@pytest.fixture
def grader_calls(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every call of the retention grader a replay hands its compactions, counted."""
    return counted_calls(monkeypatch, replay_module, "compaction_retention")


def _plain(value: Any) -> Any:
    # Every field of a retention (dataclasses all the way down), JSON-ready and ordered.
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in sorted(value.items(), key=lambda kv: str(kv[0]))}
    if isinstance(value, list | tuple | set | frozenset):
        items = [_plain(v) for v in value]
        return sorted(items, key=repr) if isinstance(value, set | frozenset) else items
    return value


def digest(steps: list[ReplayStep]) -> str:
    """A digest of every figure of ``steps``: each step's row of the step table (tokens by
    placement, lines, transforms, compaction, retention and its control) and every field of
    each compaction's retention."""
    figures = [
        [step.index, replay_row(step, n), _plain(step.compaction)] for n, step in enumerate(steps)
    ]
    text = json.dumps(figures, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest()


async def _replayed(path: Path, config: ContextConfig, **options: Any) -> list[ReplayStep]:
    return [step async for step in _each(path, config, **options)]


async def _graded_as_it_goes(path: Path, config: ContextConfig) -> list[ReplayStep]:
    # Each compaction's retention read the moment its step is yielded, before the next step.
    out = []
    async for step in _each(path, config):
        if step.compaction is not None:
            step.compaction.retention  # noqa: B018 - graded now
        out.append(step)
    return out


async def _each(path: Path, config: ContextConfig, **options: Any) -> AsyncIterator[ReplayStep]:
    transcript = load_transcript(path)
    counter = TokenCache(TiktokenCounter())
    options |= {"config": config, "tools": transcript.tools}
    async for step in replayed(transcript, context_window=WINDOW, counter=counter, **options):
        yield step


def _cases() -> Iterator[tuple[str, str]]:
    for name in SESSIONS:
        for config in CONFIGS:
            yield name, config


@requires_corpus
@pytest.mark.parametrize(("name", "config"), list(_cases()))
async def test_figures_graded_on_demand_equal_graded_as_it_goes(
    name: str, config: str, grader_calls: list[int]
) -> None:
    path = _path(name)
    eager = await _graded_as_it_goes(path, CONFIGS[config])
    compactions = sum(s.compaction is not None for s in eager)
    assert compactions >= 1 and len(grader_calls) == compactions
    grader_calls.clear()
    lazy = await _replayed(path, CONFIGS[config])
    assert grader_calls == []  # replayed whole, nothing graded
    later = graded_steps(
        await _replayed(path, CONFIGS[config], grade=False), load_transcript(path).messages
    )
    assert grader_calls == []  # graded_steps grades with its own call, not the replay's
    # Read only now: each grade from what the replay held at its step, not what came after.
    assert digest(lazy) == digest(eager) == digest(later)
    assert len(grader_calls) == compactions
    kept = [s.compaction.retention for s in lazy if s.compaction is not None]
    assert any(r is not None and r.core is not None for r in kept)


@requires_corpus
async def test_the_control_another_config_changes_the_digest() -> None:
    path = _path(SESSIONS[0])
    ours = digest(await _graded_as_it_goes(path, CONFIGS["default"]))
    assert ours != digest(await _graded_as_it_goes(path, CONFIGS["early"]))
    # And a grade changed after the fact (one compaction's retention dropped) is seen.
    steps = await _graded_as_it_goes(path, CONFIGS["default"])
    at = next(n for n, s in enumerate(steps) if s.compaction is not None)
    blind = dataclasses.replace(steps[at].compaction, retention=None)  # type: ignore[type-var]
    steps[at] = dataclasses.replace(steps[at], compaction=blind)
    assert digest(steps) != ours


def _lab_log(path: Path) -> tuple[ReplaySession, StepLog]:
    session = ReplaySession(
        load_transcript(path),
        context_window=WINDOW,
        counter=TiktokenCounter(),
        view="replayed",
    )
    log = StepLog()
    session.subscribe(log.feed)
    return session, log


@requires_corpus
async def test_the_labs_replayed_view_grades_only_when_its_table_is_read(
    grader_calls: list[int],
) -> None:
    path = _path(SESSIONS[0])
    session, log = _lab_log(path)
    await session.run()
    compacted = [r["step"] for r in log.rows if r["compaction"]]
    assert compacted and grader_calls == []  # the plot's rows, no grade
    frame = log.frame()
    assert len(grader_calls) == len(compacted)
    # The table's retention is the one a replay graded as it went gives.
    eager = [s for s in await _graded_as_it_goes(path, ContextConfig()) if s.compaction]
    wanted = [replay_row(s, 0)["retention"] for s in eager]
    assert frame.loc[compacted, "retention"].tolist() == pytest.approx(wanted, nan_ok=True)
    grader_calls.clear()
    log.frame()
    assert grader_calls == []  # kept, not graded again


async def test_a_replay_whose_figures_are_not_read_never_calls_the_grader(
    grader_calls: list[int],
) -> None:
    # Without the corpus too: the tests' own long session compacts at a small window.
    from tests.analysis.whatif_figures import logs_session

    transcript = logs_session()
    steps: list[ReplayStep] = []
    async for step in replay(
        transcript.messages,
        context_window=8_000,
        counter=TokenCache(TiktokenCounter()),
        system=transcript.system,
    ):
        steps.append(step)
        repr(step.manifest)  # what a plot or a log reads
    assert sum(s.compaction is not None for s in steps) >= 2
    assert grader_calls == []
