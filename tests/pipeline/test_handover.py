"""The offline summarizer's handover across compactions: what an earlier summary said is
carried into the next (the task, the changes, the errors, the commands, the values), what only
described its own span (its last action) is not, and each field reads the span in the order it
happened."""

from __future__ import annotations

from ctxlab import ContextConfig
from ctxlab.messages import (
    AssistantMessage,
    Summary,
)
from tests.helpers import edit_turn, extractive_fields, tool_call, tool_result

PREVIOUS = Summary(
    fields={
        "task_overview": "Migrate the billing service to the new tax tables.",
        "current_state": "Changed src/tax.py: `RATE = 0.2` → `RATE = rates()`\n"
        "Last action: $ pytest tests/test_tax.py",
        "important_discoveries": "KeyError: 'region' — not yet fixed",
        "next_steps": "Run the tax tests.",
        "context_to_preserve": "$ make migrate  → exit 0\nValues and names: INV-2042, 8443",
    },
    text="(the earlier summary)",
)


SPAN = (
    tool_call("a", command="pytest tests/test_invoice.py"),
    tool_result("a", "3 passed in 0.4s\n<returncode>0</returncode>"),
    *edit_turn("b", "src/currency.py", "EUR", "CUR", saying="Now the currency module."),
    *edit_turn("c", "src/currency.py", "USD", "CUR2"),
    tool_call("d", command="grep -rn round_half src/ --include=*.py", label="retry_budget_9121"),
    tool_result("d", "src/currency.py:12: round_half"),
    tool_call("w", "write", file_path="src/cents.py", content="def round_to_cents(x): ..."),
    tool_result("w", "written"),
    AssistantMessage(content="Next I will run the currency tests."),
)


async def _summary(previous: Summary | None, span: tuple[object, ...] = SPAN) -> dict[str, str]:
    return await extractive_fields(span, previous, budget=1_500)  # type: ignore[arg-type]


async def test_an_earlier_summary_is_carried_into_the_next() -> None:
    fields = await _summary(PREVIOUS)
    # The task as the earlier summary stated it (the span has no first user message).
    assert fields["task_overview"].splitlines()[0] == PREVIOUS.fields["task_overview"]
    # Its changes, errors, commands and values, behind this span's own.
    assert "Changed src/tax.py: `RATE = 0.2` → `RATE = rates()`" in fields["current_state"]
    assert "KeyError: 'region' — not yet fixed" in fields["important_discoveries"]
    assert "$ make migrate  → exit 0" in fields["context_to_preserve"]
    assert "Values and names: INV-2042, 8443" in fields["context_to_preserve"]
    # Its last action described its own span: this span's last action replaces it.
    assert "Last action: $ pytest tests/test_tax.py" not in fields["current_state"]
    assert "Last action: write src/cents.py" in fields["current_state"]


async def test_without_an_earlier_summary_nothing_is_invented() -> None:
    fields = await _summary(None)
    text = "\n".join(fields.values())
    for earlier in ("src/tax.py", "KeyError", "make migrate", "INV-2042", "billing service"):
        assert earlier not in text


async def test_each_field_reads_the_span_in_order_and_keeps_the_latest() -> None:
    fields = await _summary(None)
    # Both edits of one file, in the order made.
    assert "Changed src/currency.py: `EUR` → `CUR`; `USD` → `CUR2`" in fields["current_state"]
    # The commands with their outcomes, oldest first.
    preserve = fields["context_to_preserve"]
    assert preserve.index("$ pytest tests/test_invoice.py  → exit 0") < preserve.index(
        "$ grep -rn round_half src/"
    )
    assert fields["next_steps"] == "Next I will run the currency tests."


async def test_names_and_numbers_in_a_tool_input_are_kept() -> None:
    # A value the agent passed as an argument (not a file's content) is something it chose.
    fields = await _summary(None)
    assert "retry_budget_9121" in fields["context_to_preserve"]
    # What it wrote into a file is not a value to keep: it is in the file.
    assert "Changed src/cents.py: written (1 lines)" in fields["current_state"]
    assert "round_to_cents" not in "\n".join(fields.values())


async def test_each_span_writes_its_own_values_when_texts_are_read_again() -> None:
    # The values of a text are found once and kept per text: spans whose texts differ only
    # after their first words, summarized one after the other, each keep their own.
    for n in (4117, 5228, 4117):
        span = (
            AssistantMessage(content=f"The retry budget is retry_budget_{n} on port {n}."),
            tool_call(f"r{n}", command="grep -n retry src/app.py"),
            tool_result(f"r{n}", "src/app.py:3: x"),
            AssistantMessage(content="Next I will run the tests."),
        )
        preserve = (await _summary(None, span))["context_to_preserve"]
        assert f"Values and names: retry_budget_{n}, {n}" in preserve, preserve
        assert all(str(m) not in preserve for m in (4117, 5228) if m != n)


async def test_only_the_last_two_changes_of_a_file_are_described_and_the_rest_counted() -> None:
    edits = tuple(m for n in range(5) for m in edit_turn(f"e{n}", "a.py", f"v{n}", f"w{n}"))
    fields = await _summary(None, edits)
    assert "Changed a.py: `v3` → `w3`; `v4` → `w4` (+3 earlier edits)" in fields["current_state"]


def test_the_model_prompt_asks_for_the_handover_the_offline_summarizer_writes() -> None:
    # A model summarizer is asked for what `extractive_summarizer` is held to: the task first
    # with its cut said, edits whose sides differ, fixed only after a passing run of the same
    # command, failures with a count of those left out, next steps as whole sentences.
    prompt = " ".join(ContextConfig().compression_prompt.split())
    for ask in (
        "the task first (if you shorten it, say how much you left out)",
        "the lines before and after that differ (or a unified diff)",
        "every failed run with its failing tests and errors (a few, and how many more)",
        "fixed only when a later run of the same command passed",
        "else not yet fixed with its last failure",
        "next steps as whole sentences",
    ):
        assert ask in prompt, ask
    schema = ContextConfig().summary_schema["properties"]
    assert "whether a later run passed" in schema["important_discoveries"]["description"]


async def test_a_file_changed_again_is_one_line_with_the_earlier_edits_counted() -> None:
    # The earlier summary showed two changes of src/currency.py and counted three more; this
    # span changes it twice: one line, its latest two changes, 2 + 3 earlier ones counted.
    previous = Summary(
        fields={
            "current_state": "Changed src/currency.py: `a; b` → `c`; written (3 lines) "
            "(+3 earlier edits)\nChanged src/other.py: `x` → `y`",
        },
        text="(earlier)",
    )
    state = (await _summary(previous))["current_state"].splitlines()
    assert [ln for ln in state if ln.startswith("Changed ")] == [
        "Changed src/other.py: `x` → `y`",
        "Changed src/currency.py: `EUR` → `CUR`; `USD` → `CUR2` (+5 earlier edits)",
        "Changed src/cents.py: written (1 lines)",
    ]
