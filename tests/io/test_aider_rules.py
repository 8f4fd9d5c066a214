"""aider chat histories written here line by line, each rule of ``ctxlab/io/formats/aider/chat_history.py`` by the
value a user reads: which texts are histories, the run an episode opens (and the refusals that
name the runs with messages), inputs, replies and aider's own lines, token reports as the
reply's usage (cache apart, k and M, commas), and the census of every line of the file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import load
from ctxlab.exceptions import MessageFormatError
from ctxlab.io.formats.aider.chat_history import is_aider_history
from ctxlab.messages import ProviderUsage
from tests.io.shown import added_up, census_read, shown

START = "# aider chat started at 2026-01-02 10:00:00"
# The census's word for one billed request whose reply the history does not hold.
ONE_UNREPLIED = {"of a request with no reply recorded": 1}


def _load(tmp_path: Path, text: str, episode: int | None = None) -> Any:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(text)
    return load(path, format="aider", episode=episode)


def _run(tmp_path: Path, *lines: str) -> Any:
    """One run's history: its header, then ``lines``."""
    return _load(tmp_path, "\n".join([START, *lines]))


def test_a_history_opens_with_a_runs_header() -> None:
    assert is_aider_history(START + "\n")
    assert is_aider_history("\n\n  " + START)
    assert not is_aider_history("#### hi\n" + START)


def test_inputs_replies_and_aiders_own_lines(tmp_path: Path) -> None:
    transcript = _run(
        tmp_path,
        "> Aider v0.80",
        ">",
        "#### fix the cart  ",
        "#### and the test",
        "####",
        "Sure, here is the change.",
        "",
        "```python",
        "x = 1",
        "```",
        "> Tokens: 2.4k sent, 1.1k cache hit, 200 cache write, 180 received.",
        "> Applied edit to cart.py",
        "#### thanks",
        "   ",
        "#### ",
    )
    assert shown(transcript) == [
        ("user", ("text", "fix the cart\nand the test")),
        ("assistant", ("text", "Sure, here is the change.\n\n```python\nx = 1\n```")),
        ("user", ("text", "thanks")),
    ]
    # The report's "sent" holds the cache's reads and writes.
    assert transcript.usage == {1: ProviderUsage(1100, 180, 1100, 200)}
    meta = transcript.meta
    assert meta["runs"] == 1 and meta["episode"] == 0 and meta["started"] == "2026-01-02 10:00:00"
    census_read(
        transcript,
        "line",
        read={
            "run header": 1,
            "aider output line": 4,
            "user input line": 5,
            "reply line": 6,
        },
    )
    assert transcript.meta["skipped"]["aider output line"] == 3
    assert transcript.meta["skipped"]["blank line"] == 2  # a blank reply, an empty input


@pytest.mark.parametrize(
    ("report", "usage"),
    [
        ("Tokens: 12k sent, 340 received.", ProviderUsage(12_000, 340)),
        ("Tokens: 1.5M sent, 2K received.", ProviderUsage(1_500_000, 2_000)),
        ("Tokens: 1,234 sent, 5 received.", ProviderUsage(1_234, 5)),
        (
            "Tokens: 100 sent, 50 cache write, 80 cache hit, 1 received.",
            ProviderUsage(0, 1, 80, 50),
        ),
        ("Tokens: 9 received.", ProviderUsage(0, 9)),
        ("Tokens: 12k sent.", ProviderUsage(12_000, 0)),
        ("Tokens: 1.2.3 sent, 5 received.", None),  # not a count: not a token report
        ("Tokens: many sent.", None),
        ("Tokens:", None),
        ("Tokens used: 5 sent", None),
    ],
)
def test_a_token_report_is_the_replys_usage(
    tmp_path: Path, report: str, usage: ProviderUsage | None
) -> None:
    text = "\n".join([START, "#### go", "ok", f"> {report}"])
    transcript = _load(tmp_path, text)
    assert transcript.usage == ({} if usage is None else {1: usage})
    skipped = transcript.meta.get("skipped", {})
    assert skipped.get("aider output line", 0) == (1 if usage is None else 0)


def test_the_run_an_episode_opens(tmp_path: Path) -> None:
    runs = [
        [START, "> Aider v0.80"],  # start-up lines only
        [START.replace("10:00", "11:00"), "#### first", "one"],
        [START.replace("10:00", "12:00"), "####   ", "> x"],  # an empty input: no message
        [START.replace("10:00", "13:00"), "#### second", "two"],
    ]
    text = "\n".join(line for run in runs for line in run)
    default = _load(tmp_path, text)
    assert default.meta["episode"] == 1 and default.meta["runs"] == 4
    assert default.meta["started"] == "2026-01-02 11:00:00"
    census = default.census
    assert census is not None and census.adds_up
    assert census.read["line outside this run"] == 8
    assert default.meta["skipped"]["in another run (episode=N opens it)"] == 8
    assert [b[1] for _, b in shown(_load(tmp_path, text, episode=3))] == ["second", "two"]
    with pytest.raises(MessageFormatError) as raised:
        _load(tmp_path, text, episode=4)
    path = tmp_path / ".aider.chat.history.md"
    assert str(raised.value) == f"{path}: " + (
        "no run 4: the history holds 4 runs (episode=0 to episode=3; with messages: 1, 3)"
    )
    with pytest.raises(MessageFormatError) as raised:
        _load(tmp_path, text, episode=2)
    assert str(raised.value) == f"{path}: " + (
        "run 2 of the history's 4 holds no message (aider's start-up lines only); runs with "
        "messages: 1, 3 — pass one as episode="
    )
    with pytest.raises(MessageFormatError) as raised:
        _load(tmp_path, "\n".join(runs[0] + runs[0]))
    assert str(raised.value) == f"{path}: " + (
        "none of the history's 2 runs holds a message (aider's start-up lines only)"
    )


def test_a_long_list_of_runs_is_cut_in_the_refusal(tmp_path: Path) -> None:
    text = "\n".join([START, "> x"] + [line for _ in range(13) for line in (START, "#### q")])
    with pytest.raises(MessageFormatError) as raised:
        _load(tmp_path, text, episode=0)
    assert "runs with messages: 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, ... — pass" in str(
        raised.value
    )
    with pytest.raises(MessageFormatError, match=r"with messages: none\)"):
        _load(tmp_path, START + "\n> x", episode=3)
    with pytest.raises(MessageFormatError, match="runs with messages: none — pass one"):
        _load(tmp_path, START + "\n> x", episode=0)
    twelve = "\n".join([START, "> x"] + [line for _ in range(12) for line in (START, "#### q")])
    with pytest.raises(MessageFormatError) as raised:
        _load(tmp_path, twelve, episode=0)
    assert "runs with messages: 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12 — pass" in str(raised.value)


def test_replies_and_inputs_without_aiders_lines_between(tmp_path: Path) -> None:
    # A reply followed at once by the next input, an input at the end of the file, and a run
    # whose only message is a reply (its input lost): each kept in its role.
    text = "\n".join([START, "#### a", "reply one", "#### b", "reply two", "#### last"])
    assert shown(_load(tmp_path, text)) == [
        ("user", ("text", "a")),
        ("assistant", ("text", "reply one")),
        ("user", ("text", "b")),
        ("assistant", ("text", "reply two")),
        ("user", ("text", "last")),
    ]
    census = _load(tmp_path, text).census
    assert census is not None and census.read == {
        "run header": 1,
        "user input line": 3,
        "reply line": 2,
    }
    # An input followed at once by aider's own line, and a reply at the end of the file.
    text = "\n".join([START, "#### add a.py", "> Added a.py to the chat", "Done.", "More."])
    transcript = _load(tmp_path, text)
    assert shown(transcript) == [
        ("user", ("text", "add a.py")),
        ("assistant", ("text", "Done.\nMore.")),
    ]
    census = transcript.census
    assert census is not None and census.read == {
        "run header": 1,
        "user input line": 1,
        "aider output line": 1,
        "reply line": 2,
    }
    lone = "\n".join([START, "> x", START, "only a reply"])
    assert _load(tmp_path, lone).meta["episode"] == 1


@settings(database=None, max_examples=60, deadline=None)
@given(st.integers(0, 10**7), st.integers(0, 10**6), st.integers(0, 10**6), st.integers(0, 10**5))
def test_a_report_in_plain_digits_reads_back(
    sent: int, hit: int, write: int, received: int
) -> None:
    import tempfile

    report = (
        f"Tokens: {sent:,} sent, {write:,} cache write, {hit:,} cache hit, {received:,} received."
    )
    text = "\n".join([START, "#### go", "ok", f"> {report}"])
    with tempfile.TemporaryDirectory() as folder:
        transcript = _load(Path(folder), text)
    billed = ProviderUsage(max(sent - hit - write, 0), received, hit, write)
    # A report of nothing at all is no bill (counted lost as empty).
    assert transcript.usage == ({} if billed.empty else {1: billed})


@pytest.mark.parametrize(
    ("lines", "usage"),
    [
        # The second input got no reply (interrupted, or the model's answer was empty): its
        # report bills that request, not the reply before it.
        pytest.param(
            [
                "#### first",
                "one",
                "> Tokens: 100 sent, 10 received.",
                "#### second",
                "> Tokens: 900 sent, 0 received.",
            ],
            {1: ProviderUsage(100, 10)},
            id="after_an_input_with_no_reply",
        ),
        # aider billed a second request (an empty answer writes no reply): its report is not
        # the first reply's usage.
        pytest.param(
            [
                "#### go",
                "one",
                "> Tokens: 100 sent, 10 received.  ",
                "> Tokens: 300 sent, 0 received.  ",
                "#### again",
                "two",
                "> Tokens: 500 sent, 20 received.  ",
            ],
            {1: ProviderUsage(100, 10), 3: ProviderUsage(500, 20)},
            id="a_second_since_the_last_billed_reply",
        ),
        # An input of white space was sent and billed: not the reply before it.
        pytest.param(
            ["#### go", "one", "####   ", "> Tokens: 20 sent, 0 received.  "],
            {},
            id="after_an_input_of_white_space",
        ),
    ],
)
def test_a_report_with_no_reply_of_its_own_bills_a_request_lost_and_counted(
    tmp_path: Path, lines: list[str], usage: dict[int, ProviderUsage]
) -> None:
    # The replies before it keep their usage as reported.
    transcript = _run(tmp_path, *lines)
    assert transcript.usage == usage
    assert added_up(transcript).usage_lost == ONE_UNREPLIED


def test_quoted_lines_inside_a_reply_are_its_text_not_a_new_request(tmp_path: Path) -> None:
    transcript = _run(
        tmp_path,
        "#### explain",
        "The docs say:",
        "",
        "> a quote of the docs",
        "> on two lines",
        "",
        "So it works.",
        "",
        "> Tokens: 1.2k sent, 80 received.  ",
    )
    assert shown(transcript) == [
        ("user", ("text", "explain")),
        (
            "assistant",
            ("text", "The docs say:\n\n> a quote of the docs\n> on two lines\n\nSo it works."),
        ),
    ]
    assert transcript.usage == {1: ProviderUsage(1_200, 80)}


def test_an_architects_editor_replies_with_the_editor_model(tmp_path: Path) -> None:
    # aider/coders/architect_coder.py: the editor is run on the architect's reply as its input.
    transcript = _run(
        tmp_path,
        "> Main model: openrouter/openai/o3 with architect edit format, reasoning high  ",
        "> Editor model: anthropic/claude-sonnet-4-5 with editor-diff edit format  ",
        "> Weak model: openrouter/openai/gpt-4o-mini  ",
        "#### plan it  ",
        "",
        "Change a.py:",
        "",
        "- rename f",
        "",
        "> Tokens: 2.0k sent, 300 received.  ",
        "",
        "#### Change a.py:  ",
        "####   ",
        "#### - rename f  ",
        "",
        "a.py",
        "> Tokens: 900 sent, 40 received.  ",
        "> Applied edit to a.py  ",
        "#### /model gpt-5  ",
        "> Model: gpt-5 with diff edit format  ",
        "#### and now?  ",
        "Done.",
        "> Tokens: 1.0k sent, 2 received.  ",
    )
    assert transcript.meta["models"] == [
        "openrouter/openai/o3",
        "anthropic/claude-sonnet-4-5",
        "gpt-5",
    ]
    assert transcript.meta["reply_models"] == {
        "0": "openrouter/openai/o3",
        "1": "anthropic/claude-sonnet-4-5",
        "2": "gpt-5",
    }
    # Older announcements: "Models: <main> with … weak model …" (2024-04) and "Model: <name>".
    older = _load(
        tmp_path,
        "\n".join(
            [
                START,
                "> Models: gpt-4 with diff edit format, weak model gpt-3.5-turbo  ",
                "#### hi",
                "hello",
            ]
        ),
    )
    assert older.meta["models"] == ["gpt-4"] and "reply_models" not in older.meta
    assert _load(tmp_path, f"{START}\n> Model: gpt-4  \n#### hi\nhello").meta["models"] == ["gpt-4"]


def test_an_input_of_white_space_sent_all_the_same_is_a_request_of_its_own(
    tmp_path: Path,
) -> None:
    # aider sends " " (truthy) as it is; its history shows "####   ". Between two billed
    # replies it stands as aider's own word for an empty input.
    transcript = _run(
        tmp_path,
        "#### go",
        "one",
        "> Tokens: 10 sent, 1 received.  ",
        "####   ",
        "two",
        "> Tokens: 20 sent, 2 received.  ",
        "####  ",
        "",
    )
    assert shown(transcript) == [
        ("user", ("text", "go")),
        ("assistant", ("text", "one")),
        ("user", ("text", "<blank>")),
        ("assistant", ("text", "two")),
    ]
    assert transcript.usage == {1: ProviderUsage(10, 1), 3: ProviderUsage(20, 2)}
    assert transcript.meta["aider_prompts"] == {"blank input": 1}
    census = added_up(transcript)
    assert census.skipped["blank line"] == 1  # the last input, never sent


def test_files_added_before_token_reports_existed_still_part_the_replies(tmp_path: Path) -> None:
    # aider before 2024 wrote no token report; "Add these files to the chat?" (before 2025)
    # followed the names, and a yes sent them: a request of its own.
    transcript = _run(
        tmp_path,
        "#### fix a and b",
        "I need a.py and b.py.",
        "> a.py  ",
        "> b.py  ",
        "> Add these files to the chat? y  ",
        "Now the change.",
        "> Applied edit to a.py  ",
    )
    assert shown(transcript) == [
        ("user", ("text", "fix a and b")),
        ("assistant", ("text", "I need a.py and b.py.")),
        (
            "user",
            (
                "text",
                "I added these files to the chat: a.py, b.py\n"
                "Let me know if there are others we should add.",
            ),
        ),
        ("assistant", ("text", "Now the change.")),
    ]


def test_a_reflection_the_history_does_not_hold_stands_as_what_aider_showed(
    tmp_path: Path,
) -> None:
    # The tests' output (commands.cmd_test) is sent, not written: what aider showed in its place
    # stands for the prompt, its questions left out, and the prompt is counted unrecorded.
    transcript = _run(
        tmp_path,
        "#### make the tests pass",
        "a.py",
        "> Tokens: 1.0k sent, 50 received.  ",
        "> Applied edit to a.py  ",
        "> Added 12 lines of output to the chat.  ",
        "> Attempt to fix test errors? (Y)es/(N)o [Yes]: y  ",
        "",
        "a.py again",
        "> Tokens: 1.4k sent, 60 received.  ",
        "> Tokens: 1.5k sent, 0 received.  ",
        "",
        "an answer billed with nothing shown before it",
    )
    assert [b for _, b in shown(transcript)] == [
        ("text", "make the tests pass"),
        ("text", "a.py"),
        ("text", "Applied edit to a.py\nAdded 12 lines of output to the chat."),
        ("text", "a.py again"),
        ("text", "(aider sent a request here whose prompt its history does not record)"),
        ("text", "an answer billed with nothing shown before it"),
    ]
    assert transcript.meta["aider_prompts"] == {"shown output": 2}
    assert transcript.meta["unrecorded_prompts"] == 2
    assert transcript.usage == {1: ProviderUsage(1_000, 50), 3: ProviderUsage(1_400, 60)}
    assert added_up(transcript).usage_lost == ONE_UNREPLIED


def test_an_output_of_several_lines_is_quoted_on_its_first_line_only(tmp_path: Path) -> None:
    # aider/io.py append_chat_history: one "> " and one closing break per output. Its lines
    # after the first are aider's, up to the break; a quoted line in a reply is the reply's.
    transcript = _run(
        tmp_path,
        "#### scrape https://example.com",
        "> https://example.com  ",
        "> Add URL to the chat? (Y)es/(N)o/(D)on't ask again [Yes]: y  ",
        "> For the best web scraping, install Playwright:",
        "",
        "python -m playwright install --with-deps chromium",
        "",
        "See https://aider.chat/docs/install/optional.html for more info.  ",
        "",
        "It says hello.",
        "> a quote in the reply",
        "",
        "> Tokens: 3.1k sent, 1.2k cache write, 1.8k cache hit, 48 received.",
        "Cost: $0.00052 message, $0.0013 session.  ",
    )
    assert shown(transcript) == [
        ("user", ("text", "scrape https://example.com")),
        ("assistant", ("text", "It says hello.\n> a quote in the reply")),
    ]
    assert transcript.usage == {1: ProviderUsage(100, 48, 1_800, 1_200)}
    census = added_up(transcript)
    assert census.read["aider output line"] == 9


def test_a_command_is_not_sent_and_the_message_it_sends_follows_as_an_input(
    tmp_path: Path,
) -> None:
    # aider/commands.py: is_command ("/" or "!"); /ask runs a coder on its message, which
    # writes it again as an input (base_coder.run). A run of commands alone holds no message.
    transcript = _run(
        tmp_path,
        "#### /help  ",
        "> /add Add files to the chat  ",
        START.replace("10:00", "11:00"),
        "#### /ask is nodes.py used?  ",
        "",
        "#### is nodes.py used?  ",
        "",
        "No.",
        "> Tokens: 1.0k sent, 2 received.  ",
        "#### !ls  ",
        "> a.py  ",
    )
    assert transcript.meta["episode"] == 1
    assert shown(transcript) == [
        ("user", ("text", "is nodes.py used?")),
        ("assistant", ("text", "No.")),
    ]
    assert transcript.meta["skipped"]["aider command (its message, if it sends one, follows)"] == 2


def test_files_added_for_the_whole_group_an_exception_and_a_commit_after_the_linter(
    tmp_path: Path,
) -> None:
    # confirm_ask with a group: "a" answers for the rest, each further file's answer echoed as
    # an input; apply_updates' other exceptions (no token report before 2024: the reply ends
    # there all the same); lint_edited's output then auto_commit's line before the question.
    ask = "Add file to the chat? (Y)es/(N)o/(A)ll/(S)kip all/(D)on't ask again [Yes]:"
    transcript = _run(
        tmp_path,
        "#### fix the ]: parser  ",  # an input, though it holds "]: "
        "It is in a.py and b.py.",
        "> Tokens: 100 sent, 5 received.  ",
        "> a.py  ",
        f"> {ask} a  ",
        "> b.py  ",
        f"#### {ask} all  ",
        f"> {ask} a  ",
        "",
        "a.py",
        "> Exception while updating files:  ",
        "> [Errno 13] Permission denied: 'a.py'  ",
        "",
        "b.py then",
        "> Tokens: 300 sent, 9 received.  ",
        "> Applied edit to b.py  ",
        "> # Fix any errors below, if possible.  ",
        "> b.py:1:1: F401 'os' imported but unused  ",
        "> Commit 5e6f7a8 style: Ran the linter  ",
        "> Attempt to fix lint errors? (Y)es/(N)o [Yes]: y  ",
        "",
        "fixed",
        "> Tokens: 400 sent, 3 received.  ",
    )
    assert [b[1] for _, b in shown(transcript)] == [
        "fix the ]: parser",
        "It is in a.py and b.py.",
        "I added these files to the chat: a.py, b.py\nLet me know if there are others we should add.",
        "a.py",
        "[Errno 13] Permission denied: 'a.py'",
        "b.py then",
        "# Fix any errors below, if possible.\nb.py:1:1: F401 'os' imported but unused",
        "fixed",
    ]
    assert transcript.usage == {
        1: ProviderUsage(100, 5),
        5: ProviderUsage(300, 9),
        7: ProviderUsage(400, 3),
    }
    assert transcript.meta["aider_prompts"] == {
        "added files": 1,
        "edit error": 1,
        "lint errors": 1,
    }
