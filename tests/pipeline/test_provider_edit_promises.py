"""The provider edits at their edges.

Their promises: ``clear_tool_uses`` fires only when the request *exceeds* its token trigger
(equal does not); after a server compaction the request starts at the latest compaction block
and the edits' trigger counts only what is sent; ``truncation: auto`` leaves a request that fits
whole. Each is stated on the request sent (the kept ids, the placeholder count) and, where the
input space is wide, over generated inputs.

And the edges the mutation survivors of ``pipeline/_provider_edits.py`` showed: truncation only
when configured; a compaction block in the request's last message; a cut at the first assistant
turn that makes the request fit; the Agents SDK trimmer with exactly ``recent_turns`` user
turns, an output of exactly ``max_output_chars``, a result whose call is not in the request; a
clear that frees nothing never meets ``clear_at_least``."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from ctxlab import ContextConfig
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
from tests.helpers import Message, exchange, prepared, results_of

PLACEHOLDER = ClearToolUses().placeholder
CACHE = TokenCache(ApproximateCounter())


def _calls(ids: list[str], size: int) -> list[Message]:
    """One call a turn (ids ``ids``), each with a result of about ``size`` words."""
    return [m for c in ids for m in _read(c, c, f"{c} " + "line " * size)]


def _turns(count: int, size: int = 300) -> list[Message]:
    """A task, then ``count`` calls (``c0``, …) a turn, each result ``size`` words ``x``."""
    calls = [m for n in range(count) for m in _read(f"c{n}", str(n), "x " * size)]
    return [UserMessage(content="Find the bug."), *calls]


def _read(call: str, name: str, output: str) -> list[Message]:
    """A ``read`` of ``/src/<name>.py``, said with "Looking.", and its result ``output``."""
    return exchange(call, "read", output, saying="Looking.", path=f"/src/{name}.py")


def _clearing(trigger: int) -> ContextConfig:
    return ContextConfig(
        compaction={"prune": None},
        provider_edits=ProviderEdits(
            clear_tool_uses=ClearToolUses(trigger_input_tokens=trigger, keep=1)
        ),
    )


SESSION = [UserMessage(content="Find the bug."), *_calls(["c0", "c1", "c2"], 300)]


async def test_a_request_equal_to_the_trigger_is_not_cleared_one_token_more_is() -> None:
    # The request's estimate when nothing fires: what the trigger is compared with.
    quiet = await prepared(SESSION, context_window=200_000, config=_clearing(10**9))
    size = quiet.manifest.estimated_input_tokens
    equal = await prepared(SESSION, context_window=200_000, config=_clearing(size))
    assert PLACEHOLDER not in results_of(equal.request.messages).values()
    assert equal.manifest.estimated_input_tokens == size
    over = await prepared(SESSION, context_window=200_000, config=_clearing(size - 1))
    assert [c for c, text in results_of(over.request.messages).items() if text == PLACEHOLDER] == [
        "c0",
        "c1",
    ]


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 5_000), st.integers(0, 5_000))
@example(1_000, 1_000)  # equal: not fired
@example(1_000, 1_001)
def test_clear_tool_uses_fires_exactly_when_the_request_exceeds_the_trigger(
    trigger: int, request: int
) -> None:
    cache = TokenCache(ApproximateCounter())
    edit = ClearToolUses(trigger_input_tokens=trigger, keep=1)
    sent, done = clear_tool_uses(SESSION, edit, cache, request)
    cleared = [
        r.tool_use_id
        for m in sent
        if isinstance(m, UserMessage)
        for r in m.tool_results
        if r.text == PLACEHOLDER
    ]
    if request > trigger:
        assert cleared == ["c0", "c1"] and [t.target for t in done] == ["c0", "c1"]
    else:
        assert cleared == [] and done == [] and sent == tuple(SESSION)


def _compaction(text: str) -> AssistantMessage:
    block = ProviderBlock(
        data={"type": "compaction", "content": text, "encrypted_content": f"opaque-{text}"}
    )
    return AssistantMessage(content=(block, TextBlock(text=f"Going on after {text}.")))


def _twice_compacted() -> list[Message]:
    """A long start, a first server compaction, more work, a second compaction, then three
    calls: the request for the next reply."""
    return [
        UserMessage(content="Read the whole tree."),
        *_calls([f"old{n}" for n in range(6)], 600),
        _compaction("first summary"),
        UserMessage(content="Go on."),
        *_calls(["mid0", "mid1"], 600),
        _compaction("second summary"),
        UserMessage(content="Now the tests."),
        *_calls(["new0", "new1", "new2"], 100),
    ]


async def test_after_two_server_compactions_the_request_starts_at_the_latest_block() -> None:
    session = _twice_compacted()
    prep = await prepared(session, context_window=200_000)
    sent = prep.request.messages
    assert sent[0].content[0].text == COMPACTED
    latest = sent[1].content[0]
    assert isinstance(latest, ProviderBlock) and latest.data["content"] == "second summary"
    calls = [u.id for m in sent if isinstance(m, AssistantMessage) for u in m.tool_uses]
    assert calls == ["new0", "new1", "new2"]
    (cut,) = [t for t in prep.manifest.transforms if t.kind == "provider_compaction"]
    assert session[19] == _compaction("second summary") and cut.target == "19 messages"
    # The estimate is what is sent: the stand-in and the block on, none of what it replaced.
    cache = TokenCache(ApproximateCounter())
    assert prep.manifest.totals["conversation"] == cache.messages(sent)
    # The working state keeps everything.
    assert prep.state.conversation == tuple(session)


async def test_after_a_server_compaction_the_trigger_counts_only_what_is_sent() -> None:
    session = _twice_compacted()
    cache = TokenCache(ApproximateCounter())
    whole, sent_part = cache.messages(session), cache.messages(session[19:])
    assert whole > 5 * sent_part  # the part before the block is most of the history
    # A trigger between what is sent and the whole history: nothing fires, as the server's
    # edit sees only the request from the block on.
    between = (whole + sent_part) // 2
    prep = await prepared(session, context_window=200_000, config=_clearing(between))
    assert PLACEHOLDER not in results_of(prep.request.messages).values()
    assert not [t for t in prep.manifest.transforms if t.kind == "provider_clear_tool_uses"]
    # The control: a trigger below what is sent clears the older calls after the block.
    low = await prepared(session, context_window=200_000, config=_clearing(sent_part // 2))
    assert [c for c, text in results_of(low.request.messages).items() if text == PLACEHOLDER] == [
        "new0",
        "new1",
    ]


async def test_truncation_auto_leaves_a_request_that_fits_exactly_whole() -> None:
    session = [UserMessage(content="Find the bug."), *_calls([f"c{n}" for n in range(6)], 150)]
    config = ContextConfig.preset("openai_truncation")
    free = await prepared(session, context_window=200_000, config=config)
    size = free.manifest.estimated_input_tokens
    exact = await prepared(
        session, context_window=200_000, config=config.merge(budget={"max_input_tokens": size})
    )
    assert exact.manifest.input_limit == size
    assert not [t for t in exact.manifest.transforms if t.kind == "provider_truncation"]
    assert exact.request.messages == free.request.messages
    assert exact.manifest.validation == "passed"
    # The control: one token less, and the oldest turns go.
    less = await prepared(
        session,
        context_window=200_000,
        config=config.merge(budget={"max_input_tokens": size - 1}),
    )
    assert [t.kind for t in less.manifest.transforms].count("provider_truncation") == 1
    assert less.request.messages[0].content[0].text == TRUNCATED


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(1, 400), min_size=1, max_size=8),
    st.integers(-200, 400),
)
@example([300, 300, 300], 0)  # fits exactly
@example([300, 300, 300], -1)
def test_truncation_keeps_whatever_fits_and_cuts_only_what_does_not(
    sizes: list[int], slack: int
) -> None:
    cache = TokenCache(ApproximateCounter())
    session: tuple[Message, ...] = (UserMessage(content="Task."),)
    for n, size in enumerate(sizes):
        use = ToolUseBlock(id=f"c{n}", name="read", input={"n": n})
        result = ToolResultBlock(tool_use_id=f"c{n}", content="w " * size)
        session += (AssistantMessage(content=(use,)), UserMessage(content=(result,)))
    total = cache.messages(session)
    room = total + slack
    sent, done = truncate_oldest(session, cache, room)
    if room >= total:
        assert sent == session and done == []
    elif done:
        assert cache.messages(sent) <= room and sent[0].content[0].text == TRUNCATED
        assert sent[1:] == session[len(session) - len(sent) + 1 :]
    else:
        assert sent == session


def _tokens_in(detail: str) -> int:
    """The token count a transform's detail states ("..., 1,234 tokens (...)")."""
    return int(detail.split(", ")[1].split(" tokens")[0].replace(",", ""))


def test_each_edit_says_the_tokens_the_request_lost() -> None:
    cache = TokenCache(ApproximateCounter())
    session = tuple(SESSION)
    edit = ClearToolUses(trigger_input_tokens=1, keep=1, clear_tool_inputs=True)
    sent, done = clear_tool_uses(session, edit, cache, 10)
    lost = cache.messages(session) - cache.messages(sent)
    assert lost > 0 and {_tokens_in(t.detail) for t in done} == {lost}
    assert done[0].detail.startswith("2 tool results, ")
    # The gate is "at least": exactly that many tokens to go clears; one more does not.
    exact = ClearToolUses(
        trigger_input_tokens=1, keep=1, clear_tool_inputs=True, clear_at_least=lost
    )
    assert clear_tool_uses(session, exact, cache, 10)[1]
    short = exact.model_copy(update={"clear_at_least": lost + 1})
    assert clear_tool_uses(session, short, cache, 10) == (session, [])
    # A keep above the calls there are clears nothing.
    for keep in (3, 4):
        assert (
            clear_tool_uses(session, ClearToolUses(trigger_input_tokens=1, keep=keep), cache, 10)[1]
            == []
        )


def test_truncation_cuts_where_the_rest_fits_exactly_and_says_what_it_dropped() -> None:
    cache = TokenCache(ApproximateCounter())
    session = (UserMessage(content="Task."), *_calls(["c0", "c1", "c2"], 200))
    # Room for the stand-in and the last call with its result, to the token.
    room = cache.messages((UserMessage(content=TRUNCATED), *session[-2:]))
    sent, (cut,) = truncate_oldest(session, cache, room)
    assert sent[1:] == session[-2:] and cache.messages(sent) == room
    assert cut.target == "5 messages"
    assert _tokens_in(cut.detail) == cache.messages(session[:5])


async def test_a_compaction_block_in_the_first_reply_starts_the_request() -> None:
    session = [
        UserMessage(content="Read the whole tree. " + "word " * 2_000),
        _compaction("only summary"),
        UserMessage(content="Go on."),
    ]
    prep = await prepared(session, context_window=200_000)
    sent = prep.request.messages
    assert [m.content[0].text for m in (sent[0], sent[2])] == [COMPACTED, "Go on."]
    (cut,) = [t for t in prep.manifest.transforms if t.kind == "provider_compaction"]
    cache = TokenCache(ApproximateCounter())
    assert cut.target == "1 messages"
    assert _tokens_in(cut.detail) == cache.messages(session[:1])


# --- the edges the mutation survivors showed ---------------------------------------------------


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
