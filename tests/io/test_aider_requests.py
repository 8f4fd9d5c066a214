"""aider histories of k billed requests written here by aider's own writing rules (each helper
below cites the function of Aider-AI/aider it follows, at 5dc9490): they load as k replies with
the k usages in order, and each request aider sent with no input of the user's — files added to
the chat, an edit error, the linter's output reflected — as a user turn of its own holding what
aider sent. No code is shared with ``ctxlab/io/formats/aider/chat_history.py``."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import load
from ctxlab.messages import ProviderUsage
from tests.io.shown import added_up

# --- aider's writer ----------------------------------------------------------------------------


def _append(text: str, *, linebreak: bool = False, blockquote: bool = False) -> str:
    # aider/io.py InputOutput.append_chat_history
    if blockquote:
        text = "> " + text.strip()
    if linebreak:
        text = text.rstrip() + "  \n"
    return text if text.endswith("\n") else text + "\n"


def user_input(inp: str) -> str:
    # aider/io.py InputOutput.user_input
    hist = "  \n#### ".join(inp.splitlines() or ["<blank>"])
    return _append(f"\n#### {hist}", linebreak=True)


def ai_output(content: str) -> str:
    # aider/io.py InputOutput.ai_output
    return _append("\n" + content.strip() + "\n\n")


def tool_output(*messages: str) -> str:
    # aider/io.py InputOutput.tool_output: one quote, one break, whatever the lines
    if not messages:
        return ""
    return _append(" ".join(messages).strip(), linebreak=True, blockquote=True)


def tool_warning(message: str) -> str:
    # aider/io.py InputOutput._tool_message (tool_error, tool_warning): line by line
    if "\n" in message:
        return "".join(
            _append(line, linebreak=True, blockquote=True) for line in message.splitlines()
        )
    return _append(message.strip(), linebreak=True, blockquote=True)


def confirm(question: str, answer: str, subject: str | None, *, group: bool, echo: bool) -> str:
    # aider/io.py InputOutput.confirm_ask: the subject, (an answer for the group echoed as an
    # input), then the question and the answer's first letter
    options = " (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again" if group else " (Y)es/(N)o"
    asked = f"{question}{options} [Yes]: "
    out = tool_output(subject) if subject else ""
    if echo:
        out += user_input(f"{asked}{answer}")
    return out + _append(f"{asked.strip()} {answer[0]}", linebreak=True, blockquote=True)


def format_tokens(count: int) -> str:
    # aider/utils.py format_tokens
    if count < 1000:
        return f"{count}"
    if count < 10000:
        return f"{count / 1000:.1f}k"
    return f"{round(count / 1000)}k"


def usage_report(usage: tuple[int, int, int, int], cost: bool) -> str:
    # aider/coders/base_coder.py calculate_and_show_tokens_and_cost, show_usage_report
    sent, received, hit, write = usage
    report = f"Tokens: {format_tokens(sent)} sent"
    if write:
        report += f", {format_tokens(write)} cache write"
    if hit:
        report += f", {format_tokens(hit)} cache hit"
    report += f", {format_tokens(received)} received."
    if cost:
        report += ("\n" if hit and write else " ") + "Cost: $0.0012 message, $0.0034 session."
    return tool_output(report)


ADDED = "I added these files to the chat: {}\nLet me know if there are others we should add."
"""aider/prompts.py ``added_files``."""

# --- sessions ----------------------------------------------------------------------------------

_words = st.text(alphabet="abcdefgh xyz.,=()'", min_size=1, max_size=24).filter(
    lambda t: t.strip() == t and t != ""
)
_count = st.one_of(st.integers(0, 1200), st.integers(0, 400_000))


def shown(count: int) -> int:
    """The count as aider's report shows it (rounded by format_tokens)."""
    text = format_tokens(count)
    return round(float(text[:-1]) * 1000) if text.endswith("k") else int(text)


@dataclass
class Request:
    reply: list[str]
    usage: tuple[int, int, int, int]
    cost: bool
    quote: str | None  # a quoted line inside the reply (the model's Markdown)


@st.composite
def requests(draw: st.DrawFn) -> Request:
    sent = draw(_count)
    hit = draw(st.sampled_from([0, 0, draw(_count)]))
    write = draw(st.sampled_from([0, 0, draw(_count)]))
    return Request(
        draw(st.lists(_words, min_size=1, max_size=3)),
        # (a billed request sent something: a report of all zeros is no bill, counted lost)
        (max(sent, hit + write, 1), draw(_count), hit, write),
        draw(st.booleans()),
        draw(st.none() | _words),
    )


@st.composite
def reflections(draw: st.DrawFn) -> tuple[str, str]:
    """What aider writes after a billed reply before it sends another request, and what that
    request's prompt is (aider/coders/base_coder.py send_message)."""
    kind = draw(st.sampled_from(["files", "edit error", "lint"]))
    if kind == "files":  # check_for_file_mentions
        names = draw(
            st.lists(
                st.sampled_from(["a.py", "b/c.py", "d.md", "e.txt"]),
                min_size=1,
                max_size=3,
                unique=True,
            )
        )
        answers = draw(st.lists(st.sampled_from("yna"), min_size=len(names), max_size=len(names)))
        if "y" not in answers and "a" not in answers:
            answers[0] = "y"
        written, added, preference = "", [], ""
        for name, answer in zip(names, answers, strict=True):
            echo = bool(preference)
            answer = "all" if preference else answer
            written += confirm(
                "Add file to the chat?", answer, name, group=len(names) > 1, echo=echo
            )
            if answer[0] in "ya":
                added.append(name)
            preference = preference or ("all" if answer == "a" and len(names) > 1 else "")
        return written, ADDED.format(", ".join(added))
    if kind == "edit error":  # apply_updates, editblock_coder.apply_edits
        lines = draw(st.lists(_words, min_size=1, max_size=3))
        err = (
            "# 1 SEARCH/REPLACE block failed to match!\n\n"
            "## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in a.py\n"
            "<<<<<<< SEARCH\n" + "\n".join(lines) + "\n=======\nx = 1\n>>>>>>> REPLACE\n\n"
            "The SEARCH section must exactly match an existing block of lines including all "
            "white space, comments, indentation, docstrings, etc\n"
        )
        written = (
            tool_warning("The LLM did not conform to the edit format.")
            + tool_output("https://aider.chat/docs/troubleshooting/edit-errors.html")
            + tool_output()
            + tool_output(err)
        )
        return written, err.strip()
    errors = "# Fix any errors below, if possible.\n\n## Running: flake8 a.py\n\n" + "\n".join(
        draw(st.lists(_words, min_size=1, max_size=3))
    )
    written = (  # lint_edited, then the question
        tool_output("Applied edit to a.py")
        + tool_output("Commit 1a2b3c4 feat: change a.py")
        + tool_warning("\n" + errors + "\n")
        + confirm("Attempt to fix lint errors?", "y", None, group=False, echo=False)
    )
    return written, "\n".join(line.strip() for line in errors.splitlines()).strip()


@dataclass
class Written:
    text: str
    prompts: list[str]  # the user turns, in order
    usages: list[tuple[int, int, int, int]]  # one per reply, in order
    replies: list[str]


@st.composite
def histories(draw: st.DrawFn) -> Written:
    text = "\n# aider chat started at 2026-03-04 05:06:07\n\n"
    text += tool_output("Aider v0.86.1") + tool_output("Model: gpt-4o with diff edit format")
    out = Written("", [], [], [])
    for turn in range(draw(st.integers(1, 3))):
        prompt, follow = f"question {turn}", draw(st.lists(reflections(), max_size=3))
        text += user_input(prompt)
        for reflection in [None, *follow]:
            if reflection is not None:
                text += reflection[0]
                prompt = reflection[1]
            request = draw(requests())
            reply = list(request.reply)
            if request.quote is not None:
                reply.insert(1, "> " + request.quote)
                reply.insert(2, "after the quote")
            text += ai_output("\n".join(reply)) + usage_report(request.usage, request.cost)
            out.prompts.append(prompt)
            out.usages.append(request.usage)
            out.replies.append("\n".join(reply))
        text += tool_output("You can use /undo to undo and discard each aider commit.")
    out.text = text
    return out


@settings(max_examples=40, deadline=None, database=None)
@given(histories())
def test_a_history_of_k_billed_requests_loads_as_k_replies_with_their_k_usages(
    written: Written,
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / ".aider.chat.history.md"
        path.write_text(written.text)
        transcript = load(path)
    k = len(written.usages)
    messages = transcript.messages
    assert [m.role for m in messages] == ["user", "assistant"] * k
    texts = [m.content[0].text for m in messages]  # type: ignore[union-attr]
    assert texts[0::2] == written.prompts
    assert texts[1::2] == written.replies
    # "sent" holds the cache's reads and writes (each count as the report rounds it).
    expected = {
        2 * n + 1: ProviderUsage(
            max(shown(sent) - shown(hit) - shown(write), 0),
            shown(received),
            shown(hit),
            shown(write),
        )
        for n, (sent, received, hit, write) in enumerate(written.usages)
    }
    assert transcript.usage == expected
    census = added_up(transcript)
    assert (census.usage_read, census.usage_placed, census.replies) == (k, k, k)
    assert transcript.meta["models"] == ["gpt-4o"]
