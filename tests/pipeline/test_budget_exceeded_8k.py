"""At a small window a replay fits the latest turn when it can, and says what is too big when
it cannot (issue 54's review: three corpus sessions raised `ContextBudgetExceeded` at 8k).

- A results turn can hold more than results: Claude Code writes a reminder or the user's words
  beside them. The latest turn's results were cut as if the turn held nothing else, so the kept
  tail overran its room (corpus ``4d5611e5``: 7,703 tokens for 6,840). Now what is never cut —
  the calls, the other blocks of a results turn — counts against the room.
- A latest turn larger than the window under a preset that cuts nothing (OpenAI's truncation
  drops whole turns from the start, the latest never): the error is right, and it names the
  largest part and the window that holds the request — checked by replaying at that window."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import ctxlab
from ctxlab.analysis import replay
from ctxlab.config import PRESETS, ContextConfig
from ctxlab.exceptions import ContextBudgetExceeded
from ctxlab.messages import AssistantMessage, TextBlock, ToolResultBlock, ToolUseBlock, UserMessage
from ctxlab.tokens import TokenCache, default_counter

WINDOW = 8_000


def _words(n: int, seed: str) -> str:
    return " ".join(f"{seed}{i % 97}" for i in range(n))


def _session(reminder: int, result: int) -> list[UserMessage | AssistantMessage]:
    """Ten read turns, then a last call whose results turn holds a long reminder beside it."""
    messages: list[UserMessage | AssistantMessage] = [UserMessage(content="Survey the logs.")]
    for n in range(11):
        use = ToolUseBlock(id=f"toolu_{n}", name="read", input={"path": f"log{n}.txt"})
        messages.append(AssistantMessage(content=(use,)))
        blocks: list[TextBlock | ToolResultBlock] = [
            ToolResultBlock(tool_use_id=use.id, content=_words(result if n == 10 else 600, "r"))
        ]
        if n == 10:
            blocks.append(
                TextBlock(text=f"<system-reminder>{_words(reminder, 'w')}</system-reminder>")
            )
        messages.append(UserMessage(content=tuple(blocks)))
    messages.append(AssistantMessage(content="Done."))
    return messages


async def _replayed(messages: list, config: ContextConfig, window: int = WINDOW) -> list:
    cache = TokenCache(default_counter("cl100k_base"))
    return [
        s
        async for s in replay(
            messages, context_window=window, counter=cache, config=config, grade=False
        )
    ]


async def test_the_latest_turn_is_cut_to_its_room_counting_the_reminder_beside_it() -> None:
    steps = await _replayed(_session(reminder=1_500, result=4_000), PRESETS["ctxlab"]())
    assert len(steps) == 12
    assert all(s.manifest.estimated_input_tokens <= s.manifest.input_limit for s in steps)
    last = steps[-1].manifest
    assert any(t.kind == "tool_result_truncation" for t in last.transforms)


async def test_a_turn_larger_than_the_window_is_named_with_the_window_that_holds_it() -> None:
    messages = _session(reminder=10, result=9_000)
    with pytest.raises(ContextBudgetExceeded) as caught:
        await _replayed(messages, PRESETS["openai_truncation"]())
    said = str(caught.value)
    largest = max(caught.value.manifest.items, key=lambda i: i.tokens)  # type: ignore[union-attr]
    assert (
        f"Its largest part is the conversation user {largest.id} ({largest.tokens} tokens)" in said
    )
    assert largest.tokens > 8_000 and "lower it when a result is what is large" in said
    window = int(re.search(r"A window of at least (\d+) tokens holds this request", said).group(1))  # type: ignore[union-attr]
    # The window named holds it (the same reservation for the answer).
    steps = await _replayed(messages, PRESETS["openai_truncation"](), window)
    assert len(steps) == 12 and window > largest.tokens


_CORPUS = Path(os.environ.get("CTXLAB_CORPUS", "/nonexistent")) / "norm"
_SESSION = _CORPUS / "claude_code__4d5611e5-241a-462a-8d15-5122611a9569.jsonl"


@pytest.mark.skipif(not _SESSION.exists(), reason="the corpus session is not here")
async def test_the_corpus_session_that_overran_at_8k_now_fits() -> None:
    recording = ctxlab.load(_SESSION)
    cache = TokenCache(default_counter("cl100k_base"))
    steps = [
        s
        async for s in replay(
            recording.messages,
            context_window=WINDOW,
            counter=cache,
            config=PRESETS["ctxlab"](),
            system=recording.system,
            tools=recording.tools,
            grade=False,
        )
    ]
    assert steps and all(s.manifest.estimated_input_tokens <= s.manifest.input_limit for s in steps)


async def test_an_instruction_alone_larger_than_the_window_is_named() -> None:
    # SWE-agent's instance prompt of two corpus sessions: the first request cannot fit at 8k.
    messages = [UserMessage(content=_words(9_000, "task")), AssistantMessage(content="On it.")]
    with pytest.raises(ContextBudgetExceeded) as caught:
        await _replayed(messages, PRESETS["ctxlab"]())
    (item,) = [i for i in caught.value.manifest.items if i.placement == "conversation"]  # type: ignore[union-attr]
    said = str(caught.value)
    assert f"Its largest part is the conversation user {item.id} ({item.tokens} tokens)" in said
    assert "a user's text, a call's input and System never are" in said
