"""A compaction's grade asks its summary, pinned text and kept tail about each of the span's
items through `HeldText` (issue 54: searching the whole tail for every item not in it was most
of a 5,000-request what-if's category grading): an item one of whose words the text lacks is
answered by set lookups, the rest searched. Its answers are `holds`' — over generated texts and
items (word characters, dots, slashes, Unicode letters and digits), with the text's words read
whole or part by part — and a grade's checks of its messages refuse what they refused."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import ctxlab.retention._holds as held
from ctxlab.exceptions import UsageError
from ctxlab.messages import AssistantMessage, TextBlock, UserMessage
from ctxlab.retention import holds, measure_retention
from ctxlab.retention._holds import HeldText, parts_words

ALPHABET = "ab_1 ./-é٣"  # ٣: an Arabic-Indic digit, a word character to str.isalnum and \w


@settings(max_examples=500, deadline=None, database=None)
@given(
    st.lists(st.text(ALPHABET, min_size=1, max_size=10), max_size=5),
    st.lists(st.text(ALPHABET, max_size=6), min_size=1, max_size=8),
    st.booleans(),
)
def test_a_held_text_answers_as_holds(parts: list[str], items: list[str], path: bool) -> None:
    text = " ".join(parts)
    held._part_words._values.clear()
    whole, by_parts = HeldText(text), HeldText(text, parts_words(parts))
    assert by_parts.words == whole.words
    for item in items:
        expected = holds(text, item, path=path)
        assert whole.holds(item, path=path) == expected
        assert by_parts.holds(item, path=path) == expected
        assert by_parts.holds(item, path=path) == expected  # the item's words kept


def test_an_item_whose_word_the_text_lacks_is_not_searched(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    searched: list[str] = []
    real = held._occurs
    monkeypatch.setattr(held, "_occurs", lambda t, i: searched.append(i) or real(t, i))
    text = HeldText("edited src/retry.py and ran pytest tests/test_retry.py -q")
    assert not text.holds("backoff_limit") and not text.holds("src/other.py", path=True)
    assert searched == []
    assert text.holds("src/retry.py", path=True) and text.holds("/repo/src/retry.py", path=True)
    assert not text.holds("q edited")  # every word there, not in this order: searched, refused
    # "/repo/src/retry.py": the text lacks "repo"; its last two components are searched.
    assert searched == ["src/retry.py", "src/retry.py", "q edited"]


def test_a_grades_messages_are_checked_as_before() -> None:
    span = [UserMessage(content="Fix src/a.py"), AssistantMessage(content="Done in src/a.py")]
    kept = measure_retention(span, "Fixed src/a.py", [], users=tuple(span))
    assert kept["files"].total == 0 or kept["files"].kept == kept["files"].total
    with pytest.raises(UsageError, match="its item 1 is"):
        measure_retention([span[0], UserMessage], "", [])  # a class, not a message
    with pytest.raises(UsageError, match="users must be"):
        measure_retention(span, "", [], users=[span[0], TextBlock(text="x")])
    with pytest.raises(UsageError, match="tail must be"):
        measure_retention(span, "", "not messages")  # type: ignore[arg-type]


class _Reply(AssistantMessage):
    """A subclass of a message class: still a message."""


def test_a_subclass_of_a_message_is_still_taken() -> None:
    reply = _Reply(content="ran pytest -q")
    kept = measure_retention([UserMessage(content="Run pytest"), reply], "pytest", [reply])
    assert kept["commands"].total == 0 or kept["commands"].kept >= 0
