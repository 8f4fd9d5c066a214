"""The handover flags a last run that passed but still printed warnings: "still getting
warnings" is not done. Its first next step names the command and its last warning line (a
Python warning, a compiler's ``warning:``, npm's ``WARN``, or pytest's tally counting them);
the agent's self-assessment is dropped, as after a failure. A failing last run still comes
first; a run that passed cleanly adds nothing (the control); a warning from an earlier run
that a later clean run followed is not flagged."""

from __future__ import annotations

import pytest

from ctxlab.messages import AssistantMessage
from tests.helpers import extractive_fields
from tests.pipeline.test_discoveries import PASS, _run

CLAIM = AssistantMessage(content="All tests pass now; the change looks good.")


@pytest.mark.parametrize(
    ("output", "line"),
    [
        (
            "tests/test_a.py::test_x\n  /src/a.py:3: DeprecationWarning: parse() is deprecated\n"
            + PASS,
            "DeprecationWarning: parse() is deprecated",
        ),
        (
            "src/main.c:12:5: warning: unused variable 'n' [-Wunused-variable]\nbuilt\n"
            "<returncode>0</returncode>",
            "warning: unused variable 'n' [-Wunused-variable]",
        ),
        ("npm WARN deprecated glob@7.2.3: no longer supported\nadded 3 packages", None),
        ("...\n==== 5 passed, 2 warnings in 0.31s ====\n<returncode>0</returncode>", None),
    ],
)
async def test_a_last_run_still_printing_warnings_is_flagged(output: str, line: str | None) -> None:
    span = (*_run("a", "make check", output), CLAIM)
    steps = (await extractive_fields(span, budget=4_000))["next_steps"]
    assert steps.startswith("`make check` still prints warnings: ")
    said = line or ("npm WARN deprecated glob@7.2.3" if "npm" in output else "2 warnings")
    assert said in steps.splitlines()[0]
    assert "looks good" not in steps


async def test_a_clean_last_run_is_not_flagged_and_a_failure_comes_first() -> None:
    warned = "/src/a.py:3: DeprecationWarning: parse() is deprecated\n" + PASS
    clean = (*_run("a", "make check", warned), *_run("b", "make check", PASS), CLAIM)
    assert "warnings" not in (await extractive_fields(clean, budget=4_000))["next_steps"]
    failed = "E   AssertionError: 1 != 2\n==== 1 failed in 0.2s ====\n<returncode>1</returncode>"
    failing = (*_run("a", "make check", warned), *_run("b", "pytest", failed), CLAIM)
    steps = (await extractive_fields(failing, budget=4_000))["next_steps"]
    assert steps.startswith("First make `pytest` pass")
    assert "warnings" not in steps
