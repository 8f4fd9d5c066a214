"""aider's LLM log (``--llm-history-file``): every request aider sent, whole, and its reply —
read as the durable history of its requests (``ctxlab/io/formats/aider/llm_history.py``), with or without
``format="aider"`` (which wrapped an internal ``ValueError: zip()``): the start of a real log
(``tests/fixtures/aider/llm_history``), and logs written here the way aider's writer does
(Aider-AI/aider ``aider/io.py`` ``log_llm_history``, ``aider/utils.py`` ``format_messages``,
``format_content``: a header line per entry, ``-------`` before each message, each content line
prefixed with the role in capitals)."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab import load
from ctxlab.exceptions import MessageFormatError
from tests.hostile import says
from tests.io.shown import added_up
from tests.strategies import SETTINGS

REAL = Path(__file__).parents[1] / "fixtures" / "aider" / "llm_history" / ".aider.llm.history"


def _entry(kind: str, second: int, lines: list[str]) -> list[str]:
    return [f"{kind} 2026-03-01T10:00:{second:02d}", *lines]


def _request(messages: list[tuple[str, Any]]) -> list[str]:
    lines: list[str] = []
    for role, content in messages:
        lines.append("-------")
        word = role.upper()
        if isinstance(content, list):  # parts: each field a line
            for part in content:
                for key, value in part.items():
                    if isinstance(value, dict):
                        lines.append(f"{word} {key.capitalize()} URL: {value['url']}")
                    else:
                        lines.append(f"{word} {key}: {value}")
        else:
            lines.extend(f"{word} {line}" for line in content.splitlines())
    return lines


def _log(calls: list[tuple[list[tuple[str, Any]], str]]) -> str:
    lines: list[str] = []
    for n, (messages, reply) in enumerate(calls):
        lines += _entry("TO LLM", 2 * n, _request(messages))
        said = [f"ASSISTANT {line}" for line in reply.splitlines()] or [""]
        lines += _entry("LLM RESPONSE", 2 * n + 1, said)
    return "\n".join(lines) + "\n"


def _texts(transcript: Any) -> list[tuple[str, str]]:
    # Each turn's text blocks (consecutive messages of one role are one turn, a block each).
    return [
        (m.role, "\n".join(b.text for b in m.content if b.type == "text"))
        for m in transcript.messages
    ]


def _load(text: str, **options: Any) -> Any:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / ".aider.llm.history"
        path.write_text(text, encoding="utf-8")
        return load(path, **options)


@pytest.mark.parametrize("format", [None, "aider"])
def test_a_real_log_loads_with_or_without_format(format: Any) -> None:
    transcript = load(REAL, format=format)
    assert transcript.meta["source"] == "aider" and transcript.meta["log"] == "llm history"
    assert transcript.system.splitlines() == [
        "Act as an expert code analyst.",
        "Answer questions about the supplied code.",
        "Always reply to the user in English.",
        "",
        "If you need to describe code changes, do so *briefly*.",
        "",
        "Reply in English.",
    ]
    texts = _texts(transcript)
    assert texts[0][1].startswith("I am working with you on code in a git repository.")
    assert texts[1] == ("assistant", "Ok, I won't try and edit those files without asking first.")
    # Consecutive user messages of the prompt join in one turn, as a provider reads them.
    assert texts[2] == ("user", "/bye  \n/exit  \naider --help  \ntest message  ")
    assert texts[-1] == ("user", "I would like you to analyze /add\n\nReply in English.")
    # Both requests failed (aider logged an empty reply): no reply of the model is in the log;
    # the prompt's five assistant turns are aider's own.
    assert transcript.meta["requests"] == 2 and transcript.meta["unanswered_requests"] == [0, 1]
    assert transcript.meta["prompt_replies"] == 5
    assert "rewritten_requests" not in transcript.meta  # the second request repeats the first
    census = added_up(transcript)
    assert census.unit == "entry" and census.read == {"logged request and reply": 4}


def test_each_request_adds_what_it_sent_and_its_reply() -> None:
    system = ("system", "Act as an expert software developer.\nAlways use best practices.")
    first = [system, ("user", "Add a --verbose flag.")]
    second = [*first, ("assistant", "Added it."), ("user", "Now test it.")]
    # aider re-sends the files it edited before the chat: the history is rewritten.
    third = [
        system,
        ("user", "cli.py\n```\nimport sys\n```"),
        ("assistant", "Ok."),
        *second[1:],
        ("assistant", "Tests pass."),
        ("user", "Commit."),
    ]
    text = _log([(first, "Added it."), (second, "Tests pass."), (third, "Committed.\nDone.")])
    transcript = _load(text)
    assert _texts(transcript) == [
        ("user", "Add a --verbose flag."),
        ("assistant", "Added it."),
        ("user", "Now test it."),
        ("assistant", "Tests pass."),
        ("user", "Commit."),
        ("assistant", "Committed.\nDone."),
    ]
    assert transcript.system == "Act as an expert software developer.\nAlways use best practices."
    assert transcript.meta["rewritten_requests"] == [2]
    assert transcript.meta["prompt_replies"] == 0
    census = transcript.census
    assert census is not None and census.adds_up and census.read == {"logged request and reply": 6}


def test_a_content_of_parts_keeps_its_text_and_image() -> None:
    parts = [
        {"type": "text", "text": "What is in this picture?\nBe brief."},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}},
    ]
    transcript = _load(_log([([("system", "Look."), ("user", parts)], "A cat.")]))
    text, image = transcript.messages[0].content
    assert text.text == "What is in this picture?\nBe brief."  # type: ignore[union-attr]
    assert image.source.data == "iVBORw0KGgo="  # type: ignore[union-attr]
    assert _texts(transcript)[1] == ("assistant", "A cat.")


def test_another_system_text_is_another_conversation() -> None:
    architect = [("system", "Act as an architect."), ("user", "Plan it.")]
    editor = [("system", "Act as an editor."), ("user", "Apply the plan.")]
    text = _log([(architect, "The plan."), (editor, "Applied.")])
    first, second = _load(text), _load(text, episode=1)
    assert _texts(first) == [("user", "Plan it."), ("assistant", "The plan.")]
    assert _texts(second) == [("user", "Apply the plan."), ("assistant", "Applied.")]
    assert first.meta["conversations"] == second.meta["conversations"] == 2
    census = second.census
    assert census is not None and census.adds_up
    assert census.skipped == {"in another conversation (episode=N opens it)": 2}
    with pytest.raises(MessageFormatError) as caught:
        _load(text, episode=2)
    says(str(caught.value), "no conversation 2", "episode=0 to episode=1")


def test_lines_before_the_first_entry_and_a_reply_without_request_are_counted() -> None:
    text = "stray line\n" + _log([([("user", "hi")], "hello")])
    text += "LLM RESPONSE 2026-03-01T10:00:59\nASSISTANT late\n"
    transcript = _load(text)
    assert _texts(transcript) == [("user", "hi"), ("assistant", "hello")]
    census = added_up(transcript)
    assert census.skipped == {
        "not an entry of aider's LLM log": 1,
        "reply with no request before it": 1,
    }


def test_a_text_that_is_no_aider_file_is_refused_typed_with_format_aider(tmp_path: Path) -> None:
    path = tmp_path / "notes.md"
    path.write_text("# Notes\n\nnothing of aider's\n")
    with pytest.raises(MessageFormatError) as caught:
        load(path, format="aider")
    says(
        str(caught.value),
        "not an aider chat history",
        ".aider.chat.history.md",
        "--llm-history-file",
    )


_WORD = st.text(st.characters(codec="ascii", categories=["L", "N"]), min_size=1, max_size=8)
_LINE = st.lists(_WORD, min_size=1, max_size=5).map(" ".join)
_TEXT = st.lists(_LINE, min_size=1, max_size=4).map("\n".join)


@SETTINGS
@given(st.lists(st.tuples(_TEXT, _TEXT), min_size=1, max_size=5), _TEXT)
def test_any_chat_the_log_grows_reads_back_as_that_chat(
    exchanges: list[tuple[str, str]], system: str
) -> None:
    # Each request sends the chat so far and a new message; the transcript is that chat.
    calls = []
    chat: list[tuple[str, Any]] = []
    for asked, said in exchanges:
        chat.append(("user", asked))
        calls.append(([("system", system), *chat], said))
        chat.append(("assistant", said))
    transcript = _load(_log(calls))
    expected: list[tuple[str, str]] = []
    for role, text in chat:  # consecutive turns of one role join, as the builder joins them
        if expected and expected[-1][0] == role:
            expected[-1] = (role, expected[-1][1] + "\n" + text)
        else:
            expected.append((role, text))
    assert _texts(transcript) == expected
    assert transcript.system == system
    assert (
        transcript.meta["requests"] == len(exchanges)
        and "rewritten_requests" not in transcript.meta
    )
    added_up(transcript)
