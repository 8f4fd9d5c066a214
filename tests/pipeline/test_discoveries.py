"""The handover's discoveries: every command that failed, once; "fixed" only when the last run
of the same command passed, otherwise "not yet fixed" with what that run printed; the failure
lines of a still-failing run listed a few at a time with how many more were left out."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from ctxlab.messages import AssistantMessage, Summary, ToolResultBlock, ToolUseBlock, UserMessage
from tests.helpers import Message, edit_turn, extractive_fields
from tests.strategies import SETTINGS


def _run(id: str, command: str, output: str, is_error: bool = False) -> tuple[Message, Message]:
    call = AssistantMessage(content=(ToolUseBlock(id=id, name="bash", input={"command": command}),))
    result = UserMessage(
        content=(ToolResultBlock(tool_use_id=id, content=output, is_error=is_error),)
    )
    return call, result


async def _discoveries(
    span: tuple[Message, ...], previous: Summary | None = None, budget: int = 4_000
) -> str:
    """The ``important_discoveries`` field of the extractive summary of ``span``."""
    return (await extractive_fields(span, previous, budget=budget))["important_discoveries"]


async def _lines_after(earlier: str, span: tuple[Message, ...]) -> list[str]:
    """The discoveries' lines of ``span`` summarized after a summary that said ``earlier``."""
    previous = Summary(fields={"important_discoveries": earlier}, text="(earlier)")
    return (await _discoveries(span, previous)).splitlines()


PASS = "==== 5 passed in 0.2s ====\n<returncode>0</returncode>"


COMMANDS = st.sampled_from(["pytest", "python run.py", "make", "grep -n x a.py"])
RUN = st.tuples(COMMANDS, st.sampled_from(["pass", "fail", "error", "silent"]))
OUTPUTS = {
    "pass": "ok\n<returncode>0</returncode>",
    "fail": "E   AssertionError: no\n<returncode>1</returncode>",
    "error": "Traceback (most recent call last):\nValueError: bad",
    "silent": "",
}


def _failing(errors: int) -> str:
    lines = [f"ERROR tests/test_a.py::test_{n} - ValueError: bad {n}" for n in range(errors)]
    return "\n".join([*lines, f"==== {errors} errors in 0.3s ====", "<returncode>1</returncode>"])


async def test_a_later_run_that_fails_differently_is_not_a_fix() -> None:
    # pytest-7205: the error changed, the last run still errors 10 times: not fixed.
    span = (
        *_run("a", "pytest tests/test_a.py", "E   KeyError: 'x'\n<returncode>1</returncode>"),
        *_run("b", "pytest tests/test_a.py", _failing(10)),
    )
    lines = (await _discoveries(span)).splitlines()
    assert lines[0] == (
        "`pytest tests/test_a.py` failed (2 of 2 runs): exit 1; 10 errors in 0.3s; "
        "ERROR tests/test_a.py::test_9 - ValueError: bad 9 — not yet fixed; "
        "10 failure lines, the others below"
    )
    # The other nine under it, one a line, newest first.
    assert lines[1:] == [
        f"  ↳ ERROR tests/test_a.py::test_{n} - ValueError: bad {n}" for n in range(8, -1, -1)
    ]


async def test_short_of_room_the_newest_failure_lines_stay_and_the_count_says_the_rest() -> None:
    many = _run("c", "pytest tests/test_a.py", _failing(20))
    lines = (await _discoveries(many)).splitlines()
    assert lines[0].endswith("— not yet fixed; 20 failure lines, the others below")
    assert len(lines) == 13  # twelve listed at most: the count says how many there are
    tight = (await _discoveries(many, budget=230)).splitlines()
    assert tight[0] == lines[0] and 1 < len(tight) < len(lines)
    assert tight[1:] == lines[1 : len(tight)]  # the newest, in order


async def test_a_failure_line_never_hangs_under_another_commands_line() -> None:
    # The line of `make check` is too long for the room left; its failure lines, small, are
    # not written under the line before (they would read as that command's).
    long_failure = "E   ValueError: " + " ".join(f"value_{n}" for n in range(40))
    output = "\n".join([*(f"E   KeyError: {n}" for n in range(4)), long_failure])
    span = (
        *_run("a", "ls missing", "<returncode>2</returncode>"),
        *_run("b", "make check", f"{output}\n<returncode>2</returncode>"),
    )
    text = await _discoveries(span, budget=150)
    assert text == "`ls missing` failed: exit 2 — not yet fixed"


async def test_fixed_only_when_the_last_run_of_the_same_command_passed() -> None:
    fail = "E   KeyError: 'x'\n<returncode>1</returncode>"
    fixed = (*_run("a", "pytest", fail), *_run("b", "pytest", PASS))
    assert await _discoveries(fixed) == (
        "`pytest` failed (1 of 2 runs): exit 1; KeyError: 'x' — fixed: its last run passed "
        "(exit 0; 5 passed in 0.2s)"
    )
    # Passed, then failed again: not fixed.
    again = (*fixed, *_run("c", "pytest", fail))
    assert (await _discoveries(again)).endswith("— not yet fixed")
    # Another command passing is no fix of this one.
    other = (*_run("a", "pytest", fail), *_run("b", "pytest -k other", PASS))
    assert (await _discoveries(other)).endswith("— not yet fixed")


def _pending(id: str, command: str) -> AssistantMessage:
    # A call whose result the span ends before.
    return AssistantMessage(content=(ToolUseBlock(id=id, name="bash", input={"command": command}),))


async def test_a_run_whose_result_the_span_ends_before_is_no_fix() -> None:
    fail = "E   KeyError: 'x'\n<returncode>1</returncode>"
    # Failed, passed, then run again: its last run has no result yet.
    span = (*_run("a", "pytest", fail), *_run("b", "pytest", PASS), _pending("c", "pytest"))
    assert await _discoveries(span) == (
        "`pytest` failed (1 of 3 runs): exit 1; KeyError: 'x'; its last run has no result yet "
        "— not yet fixed"
    )
    # What an earlier summary said not yet fixed stands, its failure lines with it (this
    # span's run of it has no result yet): it was dropped.
    earlier = (
        "`pytest` failed: exit 1; E2 — not yet fixed; 2 failure "
        "lines, the others below\n  ↳ E1\n`make` failed: exit 2 — not yet fixed"
    )
    assert await _lines_after(earlier, (_pending("d", "pytest"),)) == [
        "`pytest` failed: exit 1; E2 — not yet fixed; 2 failure lines, the others below",
        "  ↳ E1",
        "`make` failed: exit 2 — not yet fixed",
    ]


@SETTINGS
@given(st.lists(RUN, max_size=8), COMMANDS)
async def test_a_command_whose_last_run_has_no_result_yet_is_never_said_fixed(
    runs: list[tuple[str, str]], pending: str
) -> None:
    span = (
        *(m for n, (c, kind) in enumerate(runs) for m in _run(f"r{n}", c, OUTPUTS[kind])),
        _pending("last", pending),
    )
    text = await _discoveries(span, budget=8_000)
    said = [ln for ln in text.splitlines() if ln.startswith(f"`{pending}` ")]
    failed = any(c == pending and kind in ("fail", "error") for c, kind in runs)
    assert len(said) == failed, text
    for line in said:
        assert line.endswith("; its last run has no result yet — not yet fixed"), line


async def test_a_run_that_failed_without_an_error_line_is_a_discovery() -> None:
    span = (
        *_run("a", "grep -n foo a.py", "<returncode>1</returncode>\n<output>\n</output>"),
        *_run("b", "ls missing", "ls: cannot access 'missing': No such file or directory", True),
    )
    assert (await _discoveries(span)).splitlines() == [
        "`grep -n foo a.py` failed: exit 1 — not yet fixed",
        "`ls missing` failed: error; last line: ls: cannot access 'missing': No such file or "
        "directory — not yet fixed",
    ]


async def test_the_last_line_is_read_without_its_wrapper_tags_and_reminders() -> None:
    output = (
        "<tool_use_error>Sibling tool call errored</tool_use_error>\n"
        "<system-reminder>\nRemember the todo list.\n</system-reminder>"
    )
    span = _run("a", "npx vitest run", output, True)
    assert await _discoveries(span) == (
        "`npx vitest run` failed: error; last line: Sibling tool call errored — not yet fixed"
    )


async def test_of_a_result_the_pipeline_cut_the_first_line_is_said() -> None:
    # Its end is not seen; a tool's verdict usually leads.
    output = "exit status 1: Ran 9 tests\nfirst lines\n<<<TRUNCATED>>>\n<system-reminder>x</system-reminder>"
    assert await _discoveries(_run("a", "run_tests", output)) == (
        "`run_tests` failed: exit 1; first line: exit status 1: Ran 9 tests — not yet fixed"
    )


async def test_without_an_exit_status_a_failing_tally_or_error_line_is_a_failure() -> None:
    # SWE-agent's shell output shows no exit status.
    internal = "INTERNALERROR> Traceback:\nINTERNALERROR> RuntimeError: no exception to reraise"
    span = (
        *_run("e", "python -m pytest x.py", f"{internal}\n=== no tests ran in 0.05s ==="),
        *_run("a", "python -m pytest -q", "...E\n1 failed, 3 passed in 0.1s"),
        *_run("b", "python reproduce.py", "Traceback (most recent call last):\nTypeError: bad"),
        *_run("c", "python -m pytest -q", "4 passed in 0.1s"),
        *_run("d", "bin/test core", "tests finished: 90 passed, 2 expected to fail, in 4 s"),
    )
    lines = (await _discoveries(span)).splitlines()
    assert lines == [
        "`python -m pytest x.py` failed: RuntimeError: no exception to reraise — not yet fixed",
        "`python -m pytest -q` failed (1 of 2 runs): 1 failed, 3 passed in 0.1s — fixed: its "
        "last run passed (4 passed in 0.1s)",
        "`python reproduce.py` failed: TypeError: bad — not yet fixed",
    ]


# An earlier summary's failures, and what a span summarized after it makes of them: a span
# summarized in pieces (the failure in the first piece, the passing run in the second) must
# neither drop a failure nor keep calling it unfixed; a failure's lines go with its command's.
MIX = "`mix test` failed: exit 2 — not yet fixed\nother"
MAKE = (
    "`make` failed: exit 2; E1 — not yet fixed; 2 failure "
    "lines, the others below\n  ↳ E0\n`tox` failed: exit 1 — not yet fixed"
)
AFTER_AN_EARLIER_SUMMARY = [
    pytest.param(
        MIX,
        ("mix test", "5 tests, 0 failures\n<returncode>0</returncode>"),
        ["`mix test` failed: exit 2 — fixed: its last run passed (exit 0)", "other"],
        id="a failure an earlier summary reported is said fixed when it passes here",
    ),
    pytest.param(
        MIX,
        ("mix test", "<returncode>2</returncode>"),
        ["other", "`mix test` failed: exit 2 — not yet fixed"],
        id="failing here again, the line of this span replaces the earlier one",
    ),
    pytest.param(
        MAKE,
        ("ls", "<returncode>0</returncode>"),
        [
            "`make` failed: exit 2; E1 — not yet fixed; 2 failure lines, the others below",
            "  ↳ E0",
            "`tox` failed: exit 1 — not yet fixed",
        ],
        id="failure lines not run here are carried under the line of their command",
    ),
    pytest.param(
        MAKE,
        ("make", "<returncode>0</returncode>"),
        [
            "`make` failed: exit 2; E1 — fixed: its last run passed (exit 0)",
            "`tox` failed: exit 1 — not yet fixed",
        ],
        id="passing here, a command is fixed and its old failure lines go",
    ),
]


@pytest.mark.parametrize(("earlier", "run", "lines"), AFTER_AN_EARLIER_SUMMARY)
async def test_an_earlier_summarys_failures_after_a_span(
    earlier: str, run: tuple[str, str], lines: list[str]
) -> None:
    assert await _lines_after(earlier, _run("a", *run)) == lines


async def test_the_latest_failure_is_said_whatever_else_gives_way() -> None:
    edits = tuple(
        m
        for n in range(30)
        for m in edit_turn(f"e{n}", f"src/module_{n}.py", f"v = {n}", f"v = {n + 1}")
    )
    span = (*_run("a", "make check", "<returncode>2</returncode>"), *edits)
    assert await _discoveries(span, budget=300) == "`make check` failed: exit 2 — not yet fixed"


@SETTINGS
@given(st.lists(RUN, min_size=1, max_size=12))
async def test_every_failed_command_is_said_once_and_fixed_exactly_when_its_last_run_passed(
    runs: list[tuple[str, str]],
) -> None:
    # ... and no later run (of another command) prints its failure again (issue 53).
    span = tuple(m for n, (c, kind) in enumerate(runs) for m in _run(f"r{n}", c, OUTPUTS[kind]))
    text = await _discoveries(span, budget=8_000)
    heads = [ln for ln in text.splitlines() if ln.startswith("`") and "` failed" in ln]
    # The expectation, worked out here: a run failed when it printed a failure.
    for command in dict.fromkeys(c for c, _ in runs):
        kinds = [k for c, k in runs if c == command]
        said = [ln for ln in heads if ln.startswith(f"`{command}` failed")]
        if not {"fail", "error"} & set(kinds):
            assert said == []
            continue
        assert len(said) == 1, text
        last = max(n for n, (c, _) in enumerate(runs) if c == command)
        failure = [k for k in kinds if k in ("fail", "error")][-1]
        again = any(k == failure for _, k in runs[last + 1 :])
        passed_last = kinds[-1] in ("pass", "silent") and not again
        assert said[0].endswith("not yet fixed") != passed_last, (kinds, said[0])
        assert ("— fixed: its last run passed" in said[0]) == passed_last


async def test_a_long_failure_line_is_quoted_whole() -> None:
    # An assertion's message runs long; cut at 160 characters it was no longer the line.
    line = "AssertionError: assert " + " == ".join(f"Matrix([[{n}, {n + 1}]])" for n in range(12))
    assert 200 < len(line) <= 300
    span = _run("a", "pytest -q", f"E   {line}\n<returncode>1</returncode>")
    assert await _discoveries(span) == (f"`pytest -q` failed: exit 1; {line} — not yet fixed")


async def test_a_run_that_exits_0_but_prints_its_failure_has_not_passed() -> None:
    # A reproduction script catches its exception and prints it: exit 0, the bug still there.
    caught = "Error: user-defined function raised exception\n<returncode>0</returncode>"
    span = (
        *_run("a", "python reproduce.py", "Traceback:\nKeyError: 'x'\n<returncode>1</returncode>"),
        *_run("b", "python reproduce.py", caught),
    )
    assert await _discoveries(span) == (
        "`python reproduce.py` failed (2 of 2 runs): exit 0; Error: user-defined function raised "
        "exception — not yet fixed"
    )
    only = _run("c", "python check.py", caught)
    assert await _discoveries(only) == (
        "`python check.py` printed a failure: exit 0; Error: user-defined function raised "
        "exception — not yet fixed"
    )
