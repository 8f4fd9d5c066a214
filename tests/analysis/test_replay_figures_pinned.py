"""The figures of a replay where compaction happens, pinned byte for byte.

Making preparation faster must remove work, never change a figure: every manifest (items, ids,
hashes, tokens, transforms, totals, lines, validation), every request sent, every working state
(summary text, kept messages) and every compaction record of a long session replayed at small
windows is digested and compared with the digest the pipeline gave before it was made faster
(recorded on main at bcf67f8, before the work of issue 42). A change to any figure changes the digest; a test of
the digest itself (the control) shows that one token more in one manifest is seen.

When a figure is meant to change (a new rule, a fixed bug), record the new digests in the same
commit and say why in its message.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import replace
from typing import Any

import pytest

from ctxlab import (
    AssistantMessage,
    ContextConfig,
    TextBlock,
    TiktokenCounter,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    replay,
)
from ctxlab.messages._messages import MESSAGES_ADAPTER
from ctxlab.pipeline import SummaryRequest, extractive_summarizer
from ctxlab.pipeline._record import CompactionRecord
from tests.analysis.pinned_fields import pinned_repr


def long_session(turns: int = 260) -> list[UserMessage | AssistantMessage]:
    """A deterministic tool loop with what compaction meets: prose, non-ASCII arguments, results
    over the tool-result limit, user turns mid-session, repeated identical results."""
    messages: list[UserMessage | AssistantMessage] = [
        UserMessage(content="Fix the failing import in src/app.py; keep the API of parse_row().")
    ]
    for n in range(turns):
        call = f"call_{n}"
        arg = {"command": f"grep -n 'érreur {n}' src/mod{n % 7}.py", "n": n}
        blocks: list[Any] = []
        if n % 5 == 0:
            blocks.append(TextBlock(text=f"Step {n}: looking at mod{n % 7} for the error {n}."))
        blocks.append(ToolUseBlock(id=call, name="bash", input=arg))
        messages.append(AssistantMessage(content=tuple(blocks)))
        if n % 37 == 0:
            output = "\n".join(f"{n}:{i} long line of output ✓ {i * n}" for i in range(900))
        elif n % 11 == 0:
            output = "same output as before"
        else:
            output = "\n".join(f"src/mod{n % 7}.py:{i}: value_{n}_{i}" for i in range(20 + n % 40))
        content: list[Any] = [ToolResultBlock(tool_use_id=call, content=output)]
        if n % 23 == 0:
            content.append(TextBlock(text=f"User: also check issue #{n} before you go on."))
        messages.append(UserMessage(content=tuple(content)))
    messages.append(AssistantMessage(content="Done: the import is fixed."))
    return messages


async def stub_summarizer(request: SummaryRequest) -> dict[str, str]:
    """Every field at once, naming how much it summarizes (so the summaries differ)."""
    return {
        name: f"{name}: {len(request.messages)} messages" for name in request.schema["properties"]
    }


async def digest(window: int, summarizer: Any) -> tuple[str, int]:
    """SHA-256 of every figure of the replay at ``window``, and its compactions."""
    h = hashlib.sha256()
    compactions = 0
    async for step in replay(
        long_session(),
        context_window=window,
        counter=TiktokenCounter(),
        config=ContextConfig(),
        system="You are a careful coding agent.",
        summarizer=summarizer,
    ):
        record = step.compaction
        compactions += record is not None
        figures = {
            "index": step.index,
            "number": step.number,
            "manifest": step.manifest.to_dict(),
            "request": None
            if step.request is None
            else [step.request.system, MESSAGES_ADAPTER.dump_python(list(step.request.messages))],
            "summary": None if step.state.summary is None else repr(step.state.summary),
            "kept": [m.content_hash for m in step.state.conversation],
            "revision": step.state.revision,
            # Retention is the replay's analysis of a compaction, not a figure of preparation.
            # Fields added after the pins are said only when they hold something.
            "compaction": None if record is None else _record(record),
        }
        h.update(json.dumps(figures, sort_keys=True, default=repr).encode())
    return h.hexdigest(), compactions


def _record(record: CompactionRecord) -> str:
    return pinned_repr(replace(record, retention=None))


# (window, summarizer) -> (digest before the speed work, compactions)
PINNED = {
    (16_000, "stub"): ("82585c859bca03fbdf08ce71ccad039ecb6fc4b02ecd15a0950fe4c61a8ad07b", 21),
    (32_000, "stub"): ("aabbf14d91b7e343f0f1e1acafce1ecc9ecff8ff535cd1e595a86f169e46323b", 9),
    (16_000, "extractive"): (
        "73825fbb98cbac3b1497b8b255dd5a7cb3815bdd5f61f4208b1a2546f491bf18",
        21,
    ),
}
SUMMARIZERS = {"stub": stub_summarizer, "extractive": extractive_summarizer}


@pytest.mark.parametrize(("window", "summarizer"), list(PINNED))
async def test_replay_figures_are_unchanged(window: int, summarizer: str) -> None:
    got, compactions = await digest(window, SUMMARIZERS[summarizer])
    expected, expected_compactions = PINNED[(window, summarizer)]
    assert compactions == expected_compactions
    assert compactions >= 5  # compaction really happens in this session at this window
    assert got == expected


async def test_the_digest_sees_one_token_more(monkeypatch: pytest.MonkeyPatch) -> None:
    # The control: one token more of framing per message moves the figures, and the digest.
    import ctxlab.tokens._cache as cache_module

    monkeypatch.setattr(cache_module, "MESSAGE_OVERHEAD", cache_module.MESSAGE_OVERHEAD + 1)
    got, _ = await digest(32_000, stub_summarizer)
    assert got != PINNED[(32_000, "stub")][0]
