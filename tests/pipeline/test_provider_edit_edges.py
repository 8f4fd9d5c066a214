"""The provider's edits at their edges (mutation survivors of ``pipeline/_provider_edits.py``):
truncation only when configured; a compaction block in the request's last message; a cut at
the first assistant turn that makes the request fit; the Agents SDK trimmer with exactly
``recent_turns`` user turns, an output of exactly ``max_output_chars``, a result whose call is
not in the request; a clear that frees nothing never meets ``clear_at_least``."""

from __future__ import annotations

from ctxlab.config import ClearThinking, ClearToolUses, ProviderEdits, TrimToolOutputs
from ctxlab.messages import (
    AssistantMessage,
    ProviderBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ctxlab.pipeline._provider_edits import (
    COMPACTED,
    TRUNCATED,
    apply_provider_edits,
    clear_tool_uses,
    from_compaction_block,
    trim_tool_outputs,
    truncate_oldest,
)
from ctxlab.tokens import ApproximateCounter, TokenCache
from tests.helpers import Message

CACHE = TokenCache(ApproximateCounter())


def _turns(count: int, size: int = 300) -> list[Message]:
    out: list[Message] = [UserMessage(content="Find the bug.")]
    for n in range(count):
        use = ToolUseBlock(id=f"c{n}", name="read", input={"path": f"/src/{n}.py"})
        out.append(AssistantMessage(content=(TextBlock(text="Looking."), use)))
        out.append(
            UserMessage(content=(ToolResultBlock(tool_use_id=f"c{n}", content="x " * size),))
        )
    return out


def test_truncation_only_when_configured() -> None:
    """A request far over its limit, under edits that do not truncate: sent whole (the budget
    check refuses it, not a silent cut)."""
    conversation = _turns(6)
    total = CACHE.messages(conversation)
    edits = ProviderEdits(clear_thinking=ClearThinking())
    out, done = apply_provider_edits(conversation, edits, CACHE, total, input_limit=total // 4)
    assert (out, done) == (tuple(conversation), [])
    truncating = ProviderEdits(openai_truncation=True)
    cut, done = apply_provider_edits(conversation, truncating, CACHE, total, total // 4)
    assert cut[0] == UserMessage(content=TRUNCATED) and len(cut) < len(conversation)
    assert [t.kind for t in done] == ["provider_truncation"]


def test_a_compaction_block_in_the_last_message_starts_the_request() -> None:
    """After ``pause_after_compaction`` the request ends with the turn holding the block: it
    is sent from that turn on."""
    block = ProviderBlock(
        data={"type": "compaction", "content": "so far", "encrypted_content": "e"}
    )
    conversation = [*_turns(3), AssistantMessage(content=(block,))]
    out, done = from_compaction_block(conversation, CACHE)
    assert out == (UserMessage(content=COMPACTED), conversation[-1])
    assert [(t.kind, t.target) for t in done] == [("provider_compaction", "7 messages")]
    # No block: the request as it was, nothing done.
    assert from_compaction_block(conversation[:-1], CACHE) == (tuple(conversation[:-1]), [])


def test_truncation_cuts_at_the_first_assistant_turn_that_fits() -> None:
    """A long task and short turns: dropping the task alone (the cut at message 1) fits."""
    conversation: list[Message] = [UserMessage(content="task " * 2_000), *_turns(3, size=20)[1:]]
    whole = CACHE.messages(conversation)
    room = whole - CACHE.message(conversation[0]) + CACHE.message(UserMessage(content=TRUNCATED))
    out, done = truncate_oldest(conversation, CACHE, room)
    assert out == (UserMessage(content=TRUNCATED), *conversation[1:])
    assert [t.target for t in done] == ["1 messages"]


def _trimmed(conversation: list[Message], edit: TrimToolOutputs) -> dict[str, str]:
    out, _ = trim_tool_outputs(conversation, edit)
    return {
        r.tool_use_id: r.text for m in out if isinstance(m, UserMessage) for r in m.tool_results
    }


def test_the_trimmer_with_exactly_recent_turns_user_turns() -> None:
    """Two user turns and ``recent_turns=2``: the outputs before the older one's words are old
    (in it too: results come before the user's words)."""
    text = "x " * 400
    conversation: list[Message] = [
        AssistantMessage(content=(ToolUseBlock(id="a", name="read", input={}),)),
        UserMessage(
            content=(ToolResultBlock(tool_use_id="a", content=text), TextBlock(text="Go on."))
        ),
        AssistantMessage(content=(ToolUseBlock(id="b", name="read", input={}),)),
        UserMessage(content=(ToolResultBlock(tool_use_id="b", content=text),)),
        UserMessage(content="Now the other file."),
    ]
    edit = TrimToolOutputs(recent_turns=2, max_output_chars=100, preview_chars=10)
    trimmed = _trimmed(conversation, edit)
    assert trimmed["a"] == f"[Trimmed: read output — 800 chars → 10 char preview]\n{text[:10]}..."
    assert trimmed["b"] == text
    # One user turn too few: nothing is old.
    assert _trimmed(conversation, edit.model_copy(update={"recent_turns": 3})) == {
        "a": text,
        "b": text,
    }


def test_the_trimmer_at_its_size_and_for_a_result_without_its_call() -> None:
    at = "y" * 300
    orphan = "z" * 301
    conversation: list[Message] = [
        UserMessage(content="Start."),
        AssistantMessage(content=(ToolUseBlock(id="a", name="read", input={}),)),
        UserMessage(
            content=(
                ToolResultBlock(tool_use_id="a", content=at),
                ToolResultBlock(tool_use_id="gone", content=orphan),
            )
        ),
        UserMessage(content="Next."),
    ]
    edit = TrimToolOutputs(recent_turns=1, max_output_chars=300, preview_chars=5)
    out, done = trim_tool_outputs(conversation, edit)
    results = {
        r.tool_use_id: r.text for m in out if isinstance(m, UserMessage) for r in m.tool_results
    }
    assert results["a"] == at  # exactly the limit: kept
    assert (
        results["gone"] == "[Trimmed: unknown_tool output — 301 chars → 5 char preview]\nzzzzz..."
    )
    assert [(t.target, t.detail) for t in done] == [("gone", "")]
    named = [UserMessage(content="Start."), conversation[1]]
    named.append(UserMessage(content=(ToolResultBlock(tool_use_id="a", content=orphan),)))
    named.append(UserMessage(content="Next."))
    _, done = trim_tool_outputs(named, edit)
    assert [(t.target, t.detail) for t in done] == [("a", "read")]


def test_a_clear_that_frees_nothing_never_meets_clear_at_least() -> None:
    """Results no longer than the placeholder free no tokens (never a token a result):
    ``clear_at_least=1`` is not met and nothing is cleared."""
    conversation = _turns(5, size=0)
    edit = ClearToolUses(trigger_input_tokens=1, keep=1, clear_at_least=1)
    total = CACHE.messages(conversation)
    assert clear_tool_uses(conversation, edit, CACHE, total) == (tuple(conversation), [])
    _, done = clear_tool_uses(
        conversation, edit.model_copy(update={"clear_at_least": 0}), CACHE, total
    )
    assert len(done) == 4 and all(
        t.detail.endswith("0 tokens (clear_tool_uses_20250919)") for t in done
    )
