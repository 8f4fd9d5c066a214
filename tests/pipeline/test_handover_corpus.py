"""Handovers written on real sessions, checked the way a person taking over would check them —
by code of this test's own (it reads the recording, not the summarizer's reading of it): no
"Changed" line shows the same text before and after; every "fixed" names a command whose last
run (so far) passed; no span where a run failed says "none recorded" under discoveries; no
next step is a fragment or starts inside a word; a task left out of the pin says its cut."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from ctxlab import ContextConfig, TiktokenCounter, load_transcript, replay
from ctxlab.messages import AssistantMessage, Summary, UserMessage
from tests.conftest import corpus_files, requires_corpus
from tests.helpers import Message

SESSIONS = (
    "claude_code__258c7280-ae70",  # Edit / Write, mix test failing then passing
    "claude_code__8463c716-a2ea",  # Edit with shared context lines
    "mini_swe_agent__pytest-dev__pytest-7490",  # a task too large to pin whole at 8k; failures
    "mini_swe_agent__django__django-11138",  # sed -i edits, heredoc writes
)
_EXIT = re.compile(r"<returncode>(-?\d+)</returncode>")
_ERROR_LINE = re.compile(r"^(?:E\s+)?\w*(?:Error|Exception)\b", re.MULTILINE)


def _runs(messages: Sequence[Message]) -> list[tuple[str, bool]]:
    """(command, failed) for each shell run, in order: failed when the exit status is not 0,
    the result is an error, or — no status shown — an error line was printed."""
    calls: dict[str, str] = {}
    runs: list[tuple[str, bool]] = []
    for message in messages:
        for block in message.content:
            if block.type == "tool_use":
                command = block.input.get("command")
                if isinstance(command, str) and command.strip() not in {
                    "view",
                    "create",
                    "str_replace",
                    "insert",
                    "undo_edit",
                }:
                    calls[block.id] = " ".join(command.split())
            elif block.type == "tool_result" and block.tool_use_id in calls:
                status = _EXIT.findall(block.text)
                if status:
                    failed = status[-1] != "0" or bool(block.is_error)
                else:
                    failed = bool(block.is_error) or bool(_ERROR_LINE.search(block.text))
                runs.append((calls.pop(block.tool_use_id), failed))
    return runs


def _check(summary: Summary, history: Sequence[Message], span: Sequence[Message]) -> list[str]:
    problems: list[str] = []
    fields = summary.fields
    for line in fields["current_state"].splitlines():
        if line.startswith("Changed "):
            for old, new in re.findall(r"`([^`]*)`(?: \(\d+ lines\))? → `([^`]*)`", line):
                if old == new:
                    problems.append(f"same text both sides: {line}")
    runs = _runs(history)
    for line in fields["important_discoveries"].splitlines():
        if "— fixed" in line:
            shown = re.match(r"`([^`]+)`", line)
            name = shown.group(1).removesuffix(" …") if shown else ""
            mine = [failed for command, failed in runs if name and command.startswith(name)]
            if not mine or mine[-1]:
                problems.append(f"false fix: {line}")
    failed_here = any(failed for _, failed in _runs(span))
    if failed_here and fields["important_discoveries"] == "none recorded":
        problems.append("'none recorded' after a failed run")
    agent = " ".join(
        " ".join(b.text.split())
        for m in span
        if isinstance(m, AssistantMessage)
        for b in m.content
        if b.type == "text"
    )
    for step in fields["next_steps"].splitlines():
        if step.endswith(":"):
            problems.append(f"fragment: {step}")
        at = agent.find(step.split(" `")[0])
        if at > 0 and (agent[at - 1].isalnum() or agent[at - 1] == "_"):
            problems.append(f"starts inside a word: {step}")
    first = next(m for m in history if isinstance(m, UserMessage))
    task = "\n".join(b.text for b in first.content if b.type == "text").strip()
    said = re.search(r"\[the first message continues for \d+ lines\]$", summary.task)
    if summary.task and summary.task.strip() != task and not said:
        problems.append("the pinned task is cut without saying so")
    return problems


@requires_corpus
@pytest.mark.parametrize("window", [32_000, 8_000])
@pytest.mark.parametrize("name", SESSIONS)
async def test_handovers_on_real_sessions_read_right(
    name: str, window: int, tiktoken_counter: TiktokenCounter
) -> None:
    path: Path = next(p for p in corpus_files() if p.name.startswith(name))
    transcript = load_transcript(path)
    messages = transcript.messages
    start = next(i for i, m in enumerate(messages) if isinstance(m, UserMessage))
    problems: list[str] = []
    compactions, done = 0, 0
    async for step in replay(
        messages,
        context_window=window,
        counter=tiktoken_counter,
        config=ContextConfig.preset("agentscope"),  # results cut to 3,000 tokens: 8k can run
        system=transcript.system,
        tools=transcript.tools,
    ):
        summary = step.state.summary
        if step.compaction is None or summary is None:
            continue
        compactions += 1
        end = start + summary.compacted_messages
        problems += _check(summary, messages[start:end], messages[start + done : end])
        done = summary.compacted_messages
    assert compactions > 0
    assert problems == []
