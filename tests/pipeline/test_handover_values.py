"""The handover's order when its budget is short, line by line: what goes first is the stated
order — a recorded harness summary's lines, a very long command, the files read, the values and
names (and the user's lines past their share), the commands (the oldest first), the next steps,
the edits, plan and last action, the user's lines within their share, the task last — and a line
too large for what is left is passed over for a smaller later one. Also: a pinned task's pointer
and an earlier summary's one-line goal, the span's first message an instruction once an earlier
summary exists, the failures and a recorded summary in ``important_discoveries``, cut notes
summed."""

from __future__ import annotations

import pytest

from ctxlab import ApproximateCounter, ContextConfig
from ctxlab.messages import (
    AssistantMessage,
    Summary,
    TextBlock,
    UserMessage,
)
from ctxlab.pipeline import SummaryRequest, extractive_summarizer
from ctxlab.tokens import TokenCache
from tests.helpers import Message, exchange, extractive_fields

CACHE = TokenCache(ApproximateCounter())
FIELDS = ("task_overview", "current_state", "important_discoveries", "next_steps")
HARNESS = "This session is being continued from a previous conversation that ran out of context."


def _span() -> tuple[Message, ...]:
    """One line of every kind the handover writes (no failures: their ranks are
    `_discoveries`')."""
    return (
        UserMessage(content="Make the lexer accept unicode identifiers."),
        UserMessage(content=HARNESS + "\nThe lexer was half rewritten."),
        UserMessage(content="Keep the public API unchanged."),
        *exchange("r", "read_file", "TABLE = ...", path="src/tables.py"),
        AssistantMessage(content="The table is UNICODE_TABLE_V2 and the limit 4096."),
        *exchange("a", "bash", "ok\n<returncode>0</returncode>", command="make lint"),
        *exchange("b", "bash", "ok\n<returncode>0</returncode>", command="make unit"),
        *exchange(
            "long",
            "bash",
            "ok\n<returncode>0</returncode>",
            command="cat > gen.txt <<'EOF'\n" + "row of data\n" * 160 + "EOF",
        ),
        *exchange(
            "e",
            "str_replace_based_edit_tool",
            "ok",
            command="str_replace",
            path="src/lexer.py",
            old_str="isalpha()",
            new_str="isidentifier()",
        ),
        *exchange(
            "t",
            "todo_write",
            "ok",
            todos=[{"content": "Run the unicode tests", "status": "pending"}],
        ),
        AssistantMessage(content="Next I will run the unicode tests."),
    )


def _rank(field: str, line: str) -> int:
    """Where a line stands in the stated order: the higher, the sooner it goes."""
    if field == "task_overview":
        if line.startswith("Make the lexer"):
            return 0
        return 1  # the user's later lines (and their heading), within their share
    if field == "current_state":
        return 2
    if field == "next_steps":
        return 3
    if field == "important_discoveries":
        return 9  # here only the recorded harness summary's lines
    if line.startswith("$ cat > gen.txt"):
        return 8
    if line.startswith("$ "):
        return 4
    if line.startswith("Files read"):
        return 6
    assert line.startswith("Values and names"), line
    return 5


async def _lines(budget: int, span: tuple[Message, ...]) -> list[tuple[str, str]]:
    fields = await extractive_fields(span, budget=budget)
    return [
        (name, line)
        for name in (*FIELDS, "context_to_preserve")
        for line in fields[name].splitlines()
        if line != "none recorded"
    ]


async def test_short_of_budget_lines_go_in_the_stated_order() -> None:
    span = _span()
    everything = await _lines(100_000, span)
    ranks = {line: _rank(field, line) for field, line in everything}
    assert sorted(set(ranks.values())) == [0, 1, 2, 3, 4, 5, 6, 8, 9]  # every kind is here
    order = [line for _, line in everything]
    commands = [ln for ln in order if ln.startswith(("$ make", "$ cat"))]
    assert [c.split("  →")[0][:9] for c in commands] == ["$ make li", "$ make un", "$ cat > g"]
    gone_before: list[set[str]] = []
    for budget in range(60, 1_400, 7):
        kept = {line for _, line in await _lines(budget, span)}
        assert kept <= set(order)
        gone_before.append(kept)
        for lost in set(order) - kept:
            for held in kept:
                # A line that goes sooner is held only when the one that went is larger.
                sooner = ranks[held] > ranks[lost] or (
                    ranks[held] == ranks[lost] and order.index(held) < order.index(lost)
                )
                if sooner:
                    assert CACHE.text(held) < CACHE.text(lost), (budget, held, lost)
    # The budgets met every stage: nothing but the task, and everything.
    assert {ln for ln in gone_before[0] if ranks[ln] > 0} == set()
    assert gone_before[-1] == set(order)


async def test_a_recorded_summary_is_a_discovery_and_not_an_instruction() -> None:
    fields = await extractive_fields(_span())
    assert fields["important_discoveries"].splitlines() == [
        HARNESS,
        "The lexer was half rewritten.",
    ]
    assert HARNESS not in fields["task_overview"]
    assert fields["task_overview"].splitlines() == [
        "Make the lexer accept unicode identifiers.",
        "User instructions since, verbatim:",
        "- Keep the public API unchanged.",
    ]


async def test_a_failed_command_is_an_important_discovery() -> None:
    span = (
        UserMessage(content="Fix the build."),
        *exchange(
            "f",
            "bash",
            "error: missing semicolon\n<returncode>2</returncode>",
            command="make build",
        ),
    )
    discoveries = (await extractive_fields(span))["important_discoveries"]
    assert "make build" in discoveries and "missing semicolon" in discoveries


async def test_a_pinned_task_is_a_pointer_kept_before_anything_else() -> None:
    task = "Make the lexer accept unicode identifiers."
    span = (UserMessage(content=task), *_span()[2:])
    for budget in (80, 400):
        fields = await extractive_fields(span, budget=budget, pinned_task=task)
        overview = fields["task_overview"].splitlines()
        assert overview[0] == "The task: the user's first message, quoted below."
        # The pinned message is never repeated as a later instruction.
        assert "- Make the lexer accept unicode identifiers." not in overview
    assert "- Keep the public API unchanged." in overview


async def test_a_pinned_task_over_lines_is_never_an_instruction_summary_after_summary() -> None:
    # The pinned task is read flattened (kept by its text since i68-summ: every summary of a
    # session is asked with it): its words said again on one line are not a later instruction.
    task = "Make the lexer\n  accept   unicode identifiers."
    previous = Summary(fields={"task_overview": "Goal: unicode identifiers."}, text="")
    span = (
        UserMessage(content="Make the lexer accept unicode identifiers."),
        AssistantMessage(content="On it."),
    )
    for _ in range(2):  # the second summary reads the task kept
        overview = (await extractive_fields(span, previous, pinned_task=task))["task_overview"]
        assert overview.splitlines() == [
            "The task: the user's first message, quoted below.",
            "Goal: unicode identifiers.",
        ]


async def test_each_pinned_task_kept_is_its_own_one_session_after_another() -> None:
    # i68-rev: the flattened task is kept by its text (`_handover._flat_tasks`); the test above
    # passes alone even if every task were kept under one key. Two sessions, two tasks, each
    # asked twice in turn: a line is dropped as the task's only under its own task.
    previous = Summary(fields={"task_overview": "Goal: the lexer."}, text="")
    first, second = "Make the lexer\n  accept unicode.", "Make the parser\n  accept tabs."
    span = (
        UserMessage(content="Make the lexer accept unicode."),
        UserMessage(content="Make the parser accept tabs."),
        AssistantMessage(content="On it."),
    )
    for _ in range(2):
        for task, said_since in ((first, "Make the parser"), (second, "Make the lexer")):
            fields = await extractive_fields(span, previous, pinned_task=task)
            users = [ln for ln in fields["task_overview"].splitlines() if ln.startswith("- ")]
            assert [ln.split(" accept")[0] for ln in users] == [f"- {said_since}"]


async def test_an_earlier_summarys_goal_stays_beside_the_pointer() -> None:
    task = "Make the lexer accept unicode identifiers."
    previous = Summary(
        fields={
            "task_overview": "The task: the user's first message, quoted below.\n"
            "Goal: unicode identifiers in the lexer."
        },
        text="",
    )
    span = (UserMessage(content="Now also the parser."), AssistantMessage(content="On it."))
    overview = (await extractive_fields(span, previous, pinned_task=task))["task_overview"]
    overview = overview.splitlines()
    assert overview == [
        "The task: the user's first message, quoted below.",
        "Goal: unicode identifiers in the lexer.",
        "User instructions since, verbatim:",
        # After an earlier summary, the span's first message is an instruction, not the task.
        "- Now also the parser.",
    ]


async def test_the_first_message_is_the_task_with_its_tags_read_as_a_space() -> None:
    span = (
        UserMessage(content=(TextBlock(text="Fix<system-reminder>x</system-reminder>the lexer."),)),
        AssistantMessage(content="On it."),
    )
    request = SummaryRequest(span, None, ContextConfig().summary_schema, "", count=CACHE.text)
    overview = (await extractive_summarizer(request))["task_overview"].splitlines()
    # The tag and what it holds are the harness's, read as a space between the user's words.
    assert overview == ["Fix the lexer."]


@pytest.mark.parametrize("earlier", [0, 7])
async def test_a_task_cut_again_sums_the_lines_left_out(earlier: int) -> None:
    lines = [f"Requirement {n}: the lexer must accept form_{n}." for n in range(60)]
    if earlier:
        lines.append(f"[the task continues for {earlier} more lines]")
    previous = Summary(fields={}, text="", task="\n".join(lines))
    span = (UserMessage(content="Go on."), AssistantMessage(content="On it."))
    fields = await extractive_fields(span, previous, budget=400)
    overview = fields["task_overview"].splitlines()
    kept = [ln for ln in overview if ln.startswith("Requirement")]
    assert 0 < len(kept) < 60
    assert f"[the task continues for {60 - len(kept) + earlier} more lines]" in overview


async def test_the_users_lines_within_their_share_stay_and_those_past_it_go_before_commands() -> (
    None
):
    said = [f"Also handle case {n} of the grammar rules in the lexer." for n in range(30)]
    span: list[Message] = [
        UserMessage(content="Fix the lexer."),
        *(UserMessage(content=s) for s in said),
    ]
    for n in range(3):
        span += exchange(f"c{n}", "bash", "ok\n<returncode>0</returncode>", command=f"make t{n}")
    span.append(AssistantMessage(content="Done."))
    budget = 500
    kept = [ln for _, ln in await _lines(budget, tuple(span))]
    # The user's lines up to 40 % of the budget (each with its "- " and line end) come first.
    share, used = 0, 0
    for line in said:
        used += CACHE.text(line) + 3
        if used > budget * 0.4:
            break
        share += 1
    assert 0 < share < len(said)
    assert [f"- {ln}" for ln in said[:share]] == [ln for ln in kept if ln.startswith("- ")][:share]
    # Past the share they go before the commands, which are all kept.
    assert [ln for ln in kept if ln.startswith("$ ")] == [
        f"$ make t{n}  → exit 0" for n in range(3)
    ]
    assert len([ln for ln in kept if ln.startswith("- ")]) < len(said)


async def test_after_an_earlier_summary_without_a_task_the_first_message_is_an_instruction() -> (
    None
):
    previous = Summary(fields={"next_steps": "Run the tests."}, text="", task="")
    span = (UserMessage(content="Now also the parser."), AssistantMessage(content="On it."))
    request = SummaryRequest(span, previous, ContextConfig().summary_schema, "", count=CACHE.text)
    overview = (await extractive_summarizer(request))["task_overview"].splitlines()
    assert overview == ["User instructions since, verbatim:", "- Now also the parser."]
