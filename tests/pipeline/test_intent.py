"""The handover's next steps: the agent's last stated intent as whole sentences — never a
fragment ("Let's fix this:"), never cut inside a word ("Now let's update `units.")."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from ctxlab.pipeline._intent import intent
from tests.strategies import SETTINGS


def test_dots_inside_names_and_code_do_not_end_a_sentence() -> None:
    text = "Now let's update `units.py` to use the new API. Then run tests."
    assert intent(text) == ["Now let's update `units.py` to use the new API.", "Then run tests."]
    text = "Task spotter-fum.2 is now unblocked. Let me look at it."
    assert intent(text) == ["Let me look at it."]
    assert intent("Call `a.b(). Next` first. I will run it next.") == [
        "Call `a.b(). Next` first.",
        "I will run it next.",
    ]


def test_a_sentence_ending_with_a_colon_is_completed_by_what_it_introduces() -> None:
    fenced = "The bug is in the parser. Let's fix this:\n```python\nx = parse(y)\n```"
    assert intent(fenced) == ["Let's fix this: `x = parse(y)`"]
    listed = "I will make these changes:\n1. Update X in a.py\n2. Update Y\n3. Run\n4. Commit"
    assert intent(listed) == [
        "I will make these changes: Update X in a.py; Update Y; Run (+1 more)."
    ]
    # Introducing nothing, it is a fragment: left out.
    assert intent("The result is right. Let me look:") == ["The result is right."]


def test_code_is_the_action_not_the_intent_and_labels_are_not_words() -> None:
    text = "THOUGHT: I need to see what follows line 1260.\n\n```bash\nnl -ba x.py\n```"
    assert intent(text) == ["I need to see what follows line 1260."]


def test_the_intent_is_what_the_agent_will_do_not_any_will() -> None:
    text = "So the result will be shown twice. I need to fix `apply_fix.py` first."
    assert intent(text) == ["I need to fix `apply_fix.py` first."]


def test_the_last_stated_intents_are_the_last_ones() -> None:
    text = (
        "First I will read a.py. Then I will fix b.py. The fix is small. "
        "Next I will run the tests. Finally I will commit."
    )
    assert intent(text) == ["Next I will run the tests.", "Finally I will commit."]
    assert intent(text, limit=1) == ["Finally I will commit."]
    assert intent(text, limit=3) == [
        "Then I will fix b.py.",
        "Next I will run the tests.",
        "Finally I will commit.",
    ]
    # None states an intent: the last sentences.
    assert intent("The parser is read. The lexer too. All tests pass.") == [
        "The lexer too.",
        "All tests pass.",
    ]


WORD = st.sampled_from(
    ["fix", "the", "units.py", "`a.b()`", "spotter-fum.2", "e.g.", "Now", "I'll", "run", "x:"]
)
SENTENCE = st.tuples(st.lists(WORD, min_size=1, max_size=8).map(" ".join), st.sampled_from(".!?:"))


@SETTINGS
@given(st.lists(SENTENCE, min_size=1, max_size=6), st.sampled_from([" ", "\n", "\n\n"]))
@example(  # lowercase after each stop: one sentence of 340 characters, cut at a word
    [("fix fix fix fix units.py units.py spotter-fum.2 spotter-fum.2", ".")] * 6, " "
)
def test_every_next_step_is_whole_words_of_the_text(
    sentences: list[tuple[str, str]], gap: str
) -> None:
    text = gap.join(body + end for body, end in sentences)
    flat = " ".join(text.split())
    for step in intent(text):
        assert not step.endswith(":")
        # A sentence over 300 characters ends at a word, marked " …" (the module's promise).
        if step.endswith(" …"):
            step = step[: -len(" …")]
            assert len(step) <= 300
        # Whole words of the text: found in it, starting and ending where words do.
        at = flat.find(step)
        assert at != -1, (step, flat)
        end = at + len(step)
        assert at == 0 or flat[at - 1] == " "
        assert end == len(flat) or flat[end] == " "
