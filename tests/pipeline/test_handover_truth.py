"""The handover tells the state true (issue 53): a run the harness killed or never ran, a
traceback and a missing command are failures, never "→ ok"; "fixed" only when the last run of
that same command passed and no later output prints its error again; the next steps are not the
agent's self-assessment when the last outcome contradicts it. Each summary is checked by the
independent audit of `tests/pipeline/handover_audit.py`, which shares no code with the
summarizer."""

from __future__ import annotations

from hypothesis import example, given
from hypothesis import strategies as st

from ctxlab.messages import AssistantMessage, Summary, TextBlock
from tests.helpers import extractive_fields
from tests.pipeline.handover_audit import audit
from tests.pipeline.test_discoveries import _run
from tests.strategies import SETTINGS


def _timeout(command: str, output: str = "") -> str:
    # mini-SWE-agent's timeout_template (src/minisweagent/agents/default.py), as sent.
    return (
        f"The last command <command>{command}</command> timed out and has been killed.\n"
        f"The output of the command was:\n <output>\n{output}\n</output>\n"
        "Please try another command and make sure to avoid those requiring interactive input."
    )


async def test_a_run_the_harness_killed_is_a_failure_not_ok() -> None:
    span = (*_run("a", "python3 verify.py", _timeout("python3 verify.py")),)
    fields = await extractive_fields(span, budget=4_000)
    assert "$ python3 verify.py  → timed out" in fields["context_to_preserve"]
    assert fields["important_discoveries"].startswith("`python3 verify.py` failed: timed out")
    assert audit(fields, span, span, "").false_ok == []


async def test_swe_agents_cancelled_and_unexecuted_commands_are_failures() -> None:
    # SWE-agent's command_cancelled_timeout_template and shell_check_error_template.
    cancelled = (
        "The command 'pytest -x' was cancelled because it took more than 30 seconds. "
        "Please try a different command that completes more quickly."
    )
    unexecuted = "Your bash command contained syntax errors and was NOT executed. Please fix"
    span = (*_run("a", "pytest -x", cancelled), *_run("b", "echo (", unexecuted))
    fields = await extractive_fields(span, budget=4_000)
    assert "$ pytest -x  → timed out" in fields["context_to_preserve"]
    assert "$ echo (  → not run" in fields["context_to_preserve"]
    assert "→ ok" not in fields["context_to_preserve"]


async def test_a_traceback_naming_no_error_and_a_missing_command_are_failures() -> None:
    traceback = (
        'Traceback (most recent call last):\n  File "r.py", line 3, in <module>\n'
        "django.core.exceptions.ImproperlyConfigured: Requested setting INSTALLED_APPS"
    )
    span = (
        *_run("a", "python r.py", traceback),
        *_run("b", "tox -e py", "bash: tox: command not found"),
    )
    fields = await extractive_fields(span, budget=4_000)
    context = fields["context_to_preserve"]
    assert "$ python r.py  → traceback" in context
    assert "$ tox -e py  → bash: tox: command not found" in context
    discoveries = fields["important_discoveries"]
    assert "`python r.py` failed: traceback" in discoveries
    assert "`tox -e py` failed: bash: tox: command not found — not yet fixed" in discoveries


_LONG = "cat <<'EOF' > reproduce.py\n" + "import os\n" * 20  # past the 120 characters shown


async def test_commands_a_cut_name_stands_for_are_told_apart() -> None:
    # django-11138: two heredocs writing the same script, cut to one name; the first's last
    # run failed, the second passed: the name is not fixed.
    first, second = _LONG + "print(1)\nEOF\npython reproduce.py", _LONG + "EOF\ntrue"
    span = (
        *_run("a", first, "NameError: name 'x' is not defined\n<returncode>1</returncode>"),
        *_run("b", second, "<returncode>1</returncode>"),
        *_run("c", second, "<returncode>0</returncode>"),
    )
    fields = await extractive_fields(span, budget=4_000)
    discoveries = fields["important_discoveries"]
    assert "— fixed" not in discoveries
    assert (
        "failed (2 of 3 runs): exit 1; NameError: name 'x' is not defined — not yet" in discoveries
    )
    assert audit(fields, span, span, "").false_fixed == []


_FAILING = "TypeError: Cannot filter a query once a slice has been taken."


async def test_not_fixed_while_a_later_output_prints_the_error() -> None:
    # django-15957: the reproduction passed, a later test run still prints its error.
    span = (
        *_run("a", "python3 repro.py", f"{_FAILING}\n<returncode>0</returncode>"),
        *_run("b", "python3 repro.py", "OK\n<returncode>0</returncode>"),
        *_run("c", "python3 tests.py", f"E   {_FAILING}\n<returncode>1</returncode>"),
    )
    fields = await extractive_fields(span, budget=4_000)
    repro = fields["important_discoveries"].splitlines()[0]
    assert repro == (
        f"`python3 repro.py` printed a failure (1 of 2 runs): exit 0; {_FAILING}; its last run"
        " passed, but `python3 tests.py` still prints it — not yet fixed"
    )
    assert audit(fields, span, span, "").false_fixed == []


async def test_an_earlier_not_yet_fixed_stands_while_a_later_output_prints_it() -> None:
    earlier = f"`python3 repro.py` failed: exit 1; {_FAILING} — not yet fixed"
    previous = Summary(fields={"important_discoveries": earlier}, text=earlier)
    span = (
        *_run("b", "python3 repro.py", "OK\n<returncode>0</returncode>"),
        *_run("c", "python3 tests.py", f"E   {_FAILING}\n<returncode>1</returncode>"),
    )
    fields = await extractive_fields(span, previous, budget=4_000)
    assert earlier in fields["important_discoveries"].splitlines()
    assert "— fixed" not in fields["important_discoveries"]


_COMMANDS = st.sampled_from(
    ["pytest", "python repro.py", _LONG + "EOF\npython reproduce.py", _LONG + "print(2)\nEOF"]
)
_OUTCOMES = {
    "pass": "all good\n<returncode>0</returncode>",
    "fail": "E   AssertionError: no\n<returncode>1</returncode>",
    "prints": "ValueError: bad\n<returncode>0</returncode>",
    "traceback": 'Traceback (most recent call last):\n  File "x"\nImproperlyConfigured: no',
    "timeout": _timeout("x"),
    "quiet": "<returncode>2</returncode>",
}


_PRINTS_2 = _LONG + "print(2)\nEOF"
_RUNS_IT = _LONG + "EOF\npython reproduce.py"


@SETTINGS
@given(st.lists(st.tuples(_COMMANDS, st.sampled_from(sorted(_OUTCOMES))), min_size=1, max_size=9))
@example([(_PRINTS_2, "prints"), (_PRINTS_2, "pass"), ("pytest", "prints"), (_RUNS_IT, "pass")])
async def test_fixed_only_when_the_same_commands_last_run_passed_and_nothing_prints_it(
    plan: list[tuple[str, str]],
) -> None:
    span = tuple(
        m for n, (command, kind) in enumerate(plan) for m in _run(f"r{n}", command, _OUTCOMES[kind])
    )
    fields = await extractive_fields(span, budget=4_000)
    found = audit(fields, span, span, "")
    assert found.false_fixed == []
    assert found.false_ok == []
    assert fields["important_discoveries"] != "none recorded" or all(k == "pass" for _, k in plan)


async def test_another_commands_later_pass_under_a_cut_name_does_not_hide_a_reprint() -> None:
    # Found by the property below: the command that printed the error passed, `pytest` printed
    # it again, then another command the same cut name stands for passed. That last pass is
    # not of the command that failed: the error is still printed after that command's last run.
    span = (
        *_run("a", _PRINTS_2, _OUTCOMES["prints"]),
        *_run("b", _PRINTS_2, _OUTCOMES["pass"]),
        *_run("c", "pytest", _OUTCOMES["prints"]),
        *_run("d", _RUNS_IT, _OUTCOMES["pass"]),
    )
    fields = await extractive_fields(span, budget=4_000)
    first = fields["important_discoveries"].splitlines()[0]
    assert first.endswith(
        "printed a failure (1 of 3 runs): exit 0; ValueError: bad; its last run passed, but"
        " `pytest` still prints it — not yet fixed"
    )
    assert audit(fields, span, span, "").false_fixed == []


def _previous(line: str) -> Summary:
    return Summary(fields={"important_discoveries": line}, text=line)


async def test_a_cut_names_not_yet_fixed_stands_when_another_command_of_it_passes() -> None:
    # The earlier summary knew the cut name only: a pass of some command it stands for is no fix.
    second = _LONG + "EOF\ntrue"
    name = (await extractive_fields(_run("a", second, "<returncode>1</returncode>"), budget=4_000))[
        "important_discoveries"
    ]
    assert " …` failed: exit 1 — not yet fixed" in name
    fields = await extractive_fields(
        _run("b", second, "<returncode>0</returncode>"), _previous(name), budget=4_000
    )
    assert fields["important_discoveries"] == name


async def test_an_earlier_fixed_is_reopened_when_its_failure_is_printed_again() -> None:
    fixed = f"`python3 repro.py` failed: exit 1; {_FAILING} — fixed: its last run passed (exit 0)"
    span = _run("c", "python3 tests.py", f"E   {_FAILING}\n<returncode>1</returncode>")
    fields = await extractive_fields(span, _previous(fixed), budget=4_000)
    assert fields["important_discoveries"].splitlines()[0] == (
        f"`python3 repro.py` failed: exit 1; {_FAILING}; `python3 tests.py` prints it again"
        " — not yet fixed"
    )


def _says(text: str) -> AssistantMessage:
    return AssistantMessage(content=(TextBlock(text=text),))


async def test_next_steps_are_not_a_self_assessment_the_last_run_contradicts() -> None:
    warning = "DeprecationWarning: still raised\nAssertionError: warning raised\n"
    span = (
        *_run("a", "python repro.py", f"{warning}<returncode>1</returncode>"),
        _says("The changes look good."),
    )
    steps = (await extractive_fields(span, budget=4_000))["next_steps"]
    assert steps == (
        "First make `python repro.py` pass: its last run ended AssertionError: warning raised"
    )


async def test_a_self_assessment_the_last_run_bears_out_stays() -> None:
    span = (*_run("a", "python repro.py", "OK\n<returncode>0</returncode>"), _says("It works."))
    assert (await extractive_fields(span, budget=4_000))["next_steps"] == "It works."
