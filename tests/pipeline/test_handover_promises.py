"""What the handover promises, each on the text a user (or the next model) reads: it carries the
caller's compaction instructions; its next steps are the agent's last stated intent and the open
todo items only; short of budget the most recent lines are kept first; the task takes at most
half its budget (and the pinned task at most its share of the input limit); and a summarizer
that answers ``ContextOverflowError`` is asked again in pieces half the size."""

from __future__ import annotations

from ctxlab import ApproximateCounter, ContextConfig
from ctxlab.exceptions import ContextOverflowError
from ctxlab.messages import (
    AssistantMessage,
    Summary,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ctxlab.pipeline import SummaryRequest, extractive_summarizer
from ctxlab.pipeline._compaction import ReductionLimits
from ctxlab.pipeline._pinned_task import PINNED_TASK_SHARE, pinned_task, task_tokens
from ctxlab.pipeline._summary_calls import (
    SUMMARY_MARGIN,
    SummaryAsk,
    summarize,
    summary_request_tokens,
)
from ctxlab.tokens import TokenCache
from tests.helpers import Message, exchange, extractive_fields


def _request(
    span: tuple[Message, ...], *, budget: int = 1_500, instructions: str | None = None
) -> tuple[SummaryRequest, TokenCache]:
    cache = TokenCache(ApproximateCounter())
    request = SummaryRequest(
        span,
        None,
        ContextConfig().summary_schema,
        "",
        instructions=instructions,
        budget_tokens=budget,
        count=cache.text,
    )
    return request, cache


TODOS = [
    {"content": "Read the parser", "status": "completed"},
    {"content": "Fix the tokenizer", "status": "in_progress"},
    {"content": "Run the tests", "status": "pending"},
]
SPAN: tuple[Message, ...] = (
    UserMessage(content="Fix the tokenizer of the parser."),
    AssistantMessage(content="I will read the parser first."),
    *exchange("a", "bash", "def parse(): ...\n<returncode>0</returncode>", command="cat parser.py"),
    AssistantMessage(content=(ToolUseBlock(id="t", name="todo_write", input={"todos": TODOS}),)),
    UserMessage(content=(ToolResultBlock(tool_use_id="t", content="ok"),)),
    AssistantMessage(
        content=(
            TextBlock(
                text="The parser is read. Next I will fix the tokenizer in lexer.py and rerun it."
            ),
        )
    ),
)


async def test_the_handover_carries_the_callers_instructions() -> None:
    request, _ = _request(SPAN, instructions="Keep every log path under /var/log.")
    fields = await extractive_summarizer(request)
    assert fields["current_state"].splitlines()[-1] == (
        "Caller's instructions: Keep every log path under /var/log."
    )
    without, _ = _request(SPAN)
    assert "Caller's instructions" not in str(await extractive_summarizer(without))


async def test_next_steps_are_the_last_stated_intent_and_the_open_todo_items_only() -> None:
    request, _ = _request(SPAN)
    fields = await extractive_summarizer(request)
    assert fields["next_steps"].splitlines() == [
        "Next I will fix the tokenizer in lexer.py and rerun it.",
        "Open: [in_progress] Fix the tokenizer",
        "Open: [pending] Run the tests",
    ]
    # The completed item is in the plan, never a next step; an earlier intent is not the last.
    assert "Plan [completed] Read the parser" in fields["current_state"]


async def test_the_next_steps_are_the_intent_of_the_agents_last_text() -> None:
    span: tuple[Message, ...] = (
        UserMessage(content="Fix the tokenizer of the parser."),
        AssistantMessage(content="I will read the parser first. Then I will fix the lexer."),
        *exchange(
            "a", "bash", "def parse(): ...\n<returncode>0</returncode>", command="cat parser.py"
        ),
        AssistantMessage(
            content=(
                TextBlock(text="The parser is read. I will fix `lex()` in lexer.py."),
                ToolUseBlock(id="b", name="bash", input={"command": "cat lexer.py"}),
            )
        ),
        UserMessage(content=(ToolResultBlock(tool_use_id="b", content="def lex(): ..."),)),
        AssistantMessage(
            content="The lexer drops tabs. I will keep them. Then I will rerun the parser "
            "tests. Finally I will commit."
        ),
    )
    request, _ = _request(span)
    # The last two sentences stating an intent, of the last text: not an earlier text's.
    assert (await extractive_summarizer(request))["next_steps"].splitlines() == [
        "Then I will rerun the parser tests.",
        "Finally I will commit.",
    ]


async def test_short_of_budget_the_most_recent_commands_are_kept_first() -> None:
    commands = [f"make target_{n:02d}" for n in range(12)]
    span: list[Message] = [UserMessage(content="Build every target.")]
    for n, command in enumerate(commands):
        span += exchange(
            f"c{n}", "bash", f"built target {n}\n<returncode>0</returncode>", command=command
        )
    whole, _ = _request(tuple(span), budget=4_000)
    everything = (await extractive_summarizer(whole))["context_to_preserve"]
    assert [ln for ln in everything.splitlines() if ln.startswith("$ ")] == [
        f"$ {c}  → exit 0" for c in commands
    ]
    short, _ = _request(tuple(span), budget=150)
    kept = [
        ln
        for ln in (await extractive_summarizer(short))["context_to_preserve"].splitlines()
        if ln.startswith("$ ")
    ]
    # Some go; those kept are the latest, in the order they ran.
    assert 0 < len(kept) < len(commands)
    assert kept == [f"$ {c}  → exit 0" for c in commands[-len(kept) :]]


TASK_LINES = [f"Requirement {n}: the parser must accept form_{n} of the input." for n in range(80)]


async def test_a_task_the_summary_states_takes_at_most_half_its_budget() -> None:
    span = (UserMessage(content="\n".join(TASK_LINES)), AssistantMessage(content="Starting."))
    for budget in (400, 800, 1_200):
        request, cache = _request(span, budget=budget)
        overview = (await extractive_summarizer(request))["task_overview"].splitlines()
        kept = [ln for ln in overview if ln.startswith("Requirement")]
        assert kept == TASK_LINES[: len(kept)] and 0 < len(kept) < len(TASK_LINES)
        assert overview[len(kept)] == f"[the task continues for {80 - len(kept)} more lines]"
        # Within half the budget (the note's room counted), and one line more would not be.
        used = 12 + sum(cache.text(ln) + 1 for ln in kept)
        assert used <= budget // 2 < used + cache.text(TASK_LINES[len(kept)]) + 1


def test_the_pinned_task_takes_at_most_its_share_of_the_input_limit() -> None:
    cache = TokenCache(ApproximateCounter())
    task = "\n".join(TASK_LINES)
    for limit in (1_500, 2_500):
        limits = ReductionLimits(
            fixed_tokens=0, trigger_tokens=limit, reserve_tokens=limit // 4, input_limit=limit
        )
        pinned = pinned_task((UserMessage(content=task),), None, cache, limits)
        assert pinned is not None
        lines = pinned.splitlines()
        kept = lines[:-1]
        assert kept == TASK_LINES[: len(kept)]
        assert lines[-1] == f"[the first message continues for {80 - len(kept)} lines]"
        share = int(limit * PINNED_TASK_SHARE)
        assert PINNED_TASK_SHARE == 0.4
        # Within its share, and filling most of it (what is left: a line's room, the note's,
        # and the newlines the cut counts a token each).
        assert 0.85 * share < task_tokens(pinned, cache) <= share
    # A task within its share is pinned whole.
    small = "\n".join(TASK_LINES[:5])
    limits = ReductionLimits(0, 10_000, 2_500, 10_000)
    assert pinned_task((UserMessage(content=small),), None, cache, limits) == small


# --- a summarizer that overflows is asked again in pieces half the size -------------------------


def _conversation(turns: int) -> tuple[Message, ...]:
    out: list[Message] = [UserMessage(content="Read every page of the log.")]
    for n in range(turns):
        out += exchange(
            f"p{n}", "bash", f"page {n}: " + "lorem ipsum " * 30, command=f"cat page_{n}.log"
        )
    return tuple(out)


async def test_an_overflowing_summarizer_is_asked_again_in_pieces_half_the_size() -> None:
    cache = TokenCache(ApproximateCounter())
    prefix = _conversation(40)
    config = ContextConfig()
    asked: list[tuple[int, int]] = []  # (attempt, tokens of the request)
    whole_size = cache.messages(prefix)
    input_limit = whole_size + 2_000  # the whole span fits: one request first
    first_limit = int(input_limit * SUMMARY_MARGIN)

    async def summarizer(request: SummaryRequest) -> dict[str, str]:
        size = summary_request_tokens(request, cache)
        asked.append((request.attempt, size))
        if size > first_limit * 0.6:  # the model's real window is smaller than it said
            raise ContextOverflowError("prompt is too long")
        return {name: f"{name} so far" for name in config.summary_schema["required"]}

    ask = SummaryAsk(config, summarizer, None, 300, cache, (), None, input_limit)
    fields, errors = await summarize(prefix, None, ask)
    assert fields is not None and len(errors) == 1 and "too long" in errors[0]
    first = [size for attempt, size in asked if attempt == 1]
    second = [size for attempt, size in asked if attempt == 2]
    assert len(first) == 1 and first[0] > first_limit * 0.6
    # The second attempt: pieces of at most half the first limit — half, not less.
    assert len(second) >= 2
    assert max(second) <= first_limit // 2
    assert max(second) > first_limit // 4


# --- next steps when the span states none, and the long command that goes last -----------------
# (mutation survivors of _handover.py: no test read these lines)


async def test_without_a_stated_intent_the_next_step_continues_after_the_last_action() -> None:
    span = (
        UserMessage(content="Build it."),
        *exchange("b", "bash", "ok\n<returncode>0</returncode>", command="make all"),
    )
    request, _ = _request(span)
    assert (await extractive_summarizer(request))["next_steps"] == (
        "Continue after: $ make all → exit 0"
    )


async def test_a_span_that_took_no_action_says_to_start_or_carries_the_earlier_next_steps() -> None:
    request, _ = _request((UserMessage(content="Fix the failing test in app.py."),))
    assert (await extractive_summarizer(request))["next_steps"] == (
        "Start on the task: no action was taken before this summary."
    )
    previous = Summary(
        fields={"task_overview": "Port the parser.", "next_steps": "Run the tax tests."},
        text="(earlier)",
    )
    carried = await extractive_fields((AssistantMessage(content="Okay."),), previous, budget=1_500)
    assert carried["next_steps"] == "Run the tax tests."


async def test_a_very_long_command_gives_way_before_the_short_ones() -> None:
    script = "cat > data.csv <<'EOF'\n" + "\n".join(f"{n},{n * n}" for n in range(400)) + "\nEOF"
    span: list[Message] = [UserMessage(content="Prepare the data.")]
    shorts = [f"ls -la {'/srv/data/incoming/batch' * 6}_{n}" for n in range(3)]  # ~45 tokens
    for n, command in enumerate(shorts):
        span += exchange(f"s{n}", "bash", "a b c\n<returncode>0</returncode>", command=command)
    span += exchange(
        "long", "bash", "<returncode>0</returncode>", command=script
    )  # the latest, and huge
    request, _ = _request(tuple(span), budget=cache_budget(script))
    kept = [
        ln
        for ln in (await extractive_summarizer(request))["context_to_preserve"].splitlines()
        if ln.startswith("$ ")
    ]
    # The short ones first (they fit together); the long one, the latest, gives way.
    assert kept == [f"$ {c}  → exit 0" for c in shorts]


def cache_budget(script: str) -> int:
    # Room for the long command's line alone or the short ones' lines, not for both.
    return TokenCache(ApproximateCounter()).text(script) + 225
