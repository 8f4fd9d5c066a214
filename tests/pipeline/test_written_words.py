"""A value is left out of the summary's "Values and names" line when the summary already
writes it as a word of its own, whatever the number of values (a few are searched for one by
one, many checked against the text's words read once: `_written.unwritten`): checked against
a reference written here (each hit found, then the characters around it read), over generated
texts, and on the summary a long span gives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import ContextConfig
from ctxlab.messages import AssistantMessage, UserMessage
from ctxlab.pipeline import SummaryRequest, _written, extractive_summarizer
from ctxlab.pipeline._written import FINDS, _part_words, parts_words, unwritten
from tests.helpers import exchange
from tests.pipeline.written_reference import words_of

ALPHABET = "ab_.1 é-/x\n"


def written_as_word(text: str, value: str) -> bool:
    """The reference: ``value`` occurs in ``text`` with neither a word character next to it nor
    one beyond the dots next to it (a word is a run of word characters and dots, its end dots
    left out)."""
    if not value:
        return any(run.strip(".") == "" for run in _runs(text))
    start = text.find(value)
    while start != -1:
        before, after = start, start + len(value)
        while before > 0 and text[before - 1] == ".":
            before -= 1
        while after < len(text) and text[after] == ".":
            after += 1
        left = before > 0 and (text[before - 1].isalnum() or text[before - 1] == "_")
        right = after < len(text) and (text[after].isalnum() or text[after] == "_")
        if not left and not right and value.strip(".") == value and _is_run(value):
            return True
        start = text.find(value, start + 1)
    return False


def _is_run(value: str) -> bool:
    return all(c.isalnum() or c in "_." for c in value)


def _runs(text: str) -> list[str]:
    runs, current = [], ""
    for c in text:
        if c.isalnum() or c in "_.":
            current += c
        elif current:
            runs.append(current)
            current = ""
    return [*runs, current] if current else runs


@settings(max_examples=400, deadline=None, database=None)
@given(st.text(ALPHABET, max_size=40), st.text(ALPHABET, max_size=6))
def test_a_value_is_a_written_word_exactly_when_the_reference_says(text: str, value: str) -> None:
    if value:
        assert (value in words_of(text)) == written_as_word(text, value)
    # Checked with many values (the words read once) or few (searched), the same answer.
    for values in ([value], [value, *(f"pad{i}" for i in range(FINDS + 1))]):
        assert (value in unwritten(values, text)) == (not written_as_word(text, value))


@settings(max_examples=200, deadline=None, database=None)
@given(st.text(ALPHABET, max_size=60), st.lists(st.text(ALPHABET, max_size=5), max_size=40))
def test_few_values_or_many_the_unwritten_ones_are_the_references(
    text: str, values: list[str]
) -> None:
    expected = [v for v in dict.fromkeys(values) if not written_as_word(text, v)]
    assert unwritten(values, text) == expected
    # Many values (the words read once) and the same values among them give the same answer.
    padding = [f"pad{i}" for i in range(FINDS + 1)]
    assert unwritten([*values, *padding], text)[: len(expected)] == expected


def test_words_inside_longer_names_are_not_written_and_end_dots_are_not_part() -> None:
    words = words_of("see config.yaml, x.y. and foo_bar.baz; v1.2 ...")
    assert {"config.yaml", "x.y", "foo_bar.baz", "v1.2"} <= words
    assert "config" not in words and "yaml" not in words and "bar" not in words


async def test_a_long_spans_values_are_listed_once_and_never_when_written() -> None:
    # Hundreds of values (names the agent wrote and ran) and a summary that writes many (its
    # commands): each value listed is one the rest of the summary does not write as a word.
    span: list[UserMessage | AssistantMessage] = [UserMessage(content="Fix the retries")]
    for i in range(300):
        said = f"Checking retry_limit_{i} in FooBar{i} via step_{i}"
        span += exchange(f"c{i}", "bash", "ok", saying=said, cmd=f"run step_{i}")
    schema = ContextConfig().summary_schema
    answer = await extractive_summarizer(
        SummaryRequest(tuple(span), None, schema, "", budget_tokens=60_000)
    )
    lines = "\n".join(answer.values()).splitlines()
    listed = [
        v
        for line in lines
        if line.startswith("Values and names: ")
        for v in line.removeprefix("Values and names: ").split(", ")
    ]
    rest = "\n".join(line for line in lines if not line.startswith("Values and names: "))
    assert {"retry_limit_0", "FooBar0", "retry_limit_1"} <= set(listed)
    assert not any(v.startswith("step_") for v in listed)  # every one is in a command line
    assert all(not written_as_word(rest, v) for v in listed)
    assert len(listed) == len(set(listed))


@settings(max_examples=300, deadline=None, database=None)
@given(
    st.lists(st.text(ALPHABET, max_size=12), max_size=6),
    st.lists(st.text(ALPHABET, max_size=5), min_size=FINDS + 1, max_size=30),
)
def test_the_words_of_parts_kept_are_the_words_of_their_join(
    parts: list[str], values: list[str]
) -> None:
    # Issue 54: the summary's words are read line by line and kept (a what-if writes the same
    # command lines summary after summary); the words of the whole text are the reference
    # (the words a value can be, `named_words`, since i68-summ: `test_named_words.py`).
    text = " ".join(parts)
    _part_words._values.clear()
    assert parts_words(parts) == _written.named_words(text)
    assert parts_words(parts) == _written.named_words(text)  # each part's words kept
    assert unwritten(values, text, parts=parts) == unwritten(values, text)
    assert unwritten(values, text, parts=parts) == [
        v for v in dict.fromkeys(values) if not written_as_word(text, v)
    ]
