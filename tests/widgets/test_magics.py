"""``%load_ext ctxlab``: ``%%ctx`` sends a cell to the current Lab, ``%ctx_budget`` one line."""

from __future__ import annotations

from typing import Any

import pytest

from ctxlab import ApproximateCounter, ScriptedModel
from ctxlab.agent import Agent
from ctxlab.exceptions import UsageError

pytest.importorskip("IPython")

from ctxlab.widgets import Lab
from ctxlab.widgets import _magics as magics


class _Shell:
    """The part of IPython's shell an extension uses: registered magics, by kind and name."""

    def __init__(self) -> None:
        self.magics: dict[tuple[str, str], Any] = {}

    def register_magic_function(self, func: Any, magic_kind: str, magic_name: str) -> None:
        self.magics[(magic_kind, magic_name)] = func


async def test_the_magics_drive_the_current_lab(capsys: pytest.CaptureFixture[str]) -> None:
    import ctxlab

    shell = _Shell()
    ctxlab.load_ipython_extension(shell)
    ctx, budget = shell.magics[("cell", "ctx")], shell.magics[("line", "ctx_budget")]
    lab = Lab(Agent(model=ScriptedModel(["first", "second"]), counter=ApproximateCounter()))
    budget("")
    assert capsys.readouterr().out.strip() == "no request yet"
    task = ctx("", "What is in the log?\n")
    assert task is not None
    await task
    assert lab.agent.history[0].content[0].text == "What is in the log?"  # type: ignore[union-attr]
    budget("")
    line = capsys.readouterr().out
    assert line.startswith("request 0: ") and "tokens (" in line and "trigger at" in line
    # The Lab displayed last is the current one.
    other = Lab(Agent(model=ScriptedModel(["x"]), counter=ApproximateCounter()))
    assert magics.current_lab() is other
    lab._repr_mimebundle_()
    assert magics.current_lab() is lab


def test_without_a_lab_the_magic_says_what_to_do() -> None:
    magics._current.clear()
    with pytest.raises(UsageError, match="no Lab yet"):
        magics.current_lab()


async def test_ctx_on_a_read_only_lab_sends_nothing_and_keeps_send_disabled() -> None:
    from ctxlab import ApproximateCounter, Transcript
    from ctxlab.messages import AssistantMessage, UserMessage
    from ctxlab.widgets import Lab
    from ctxlab.widgets._magics import send_cell

    transcript = Transcript(
        "t", {}, "", (UserMessage(content="hi"), AssistantMessage(content="yo"))
    )
    lab = await Lab.open(transcript, context_window=8_000, counter=ApproximateCounter())
    assert lab.controls.send_button.disabled
    assert send_cell(lab, "please do something") is None
    assert lab.controls.send_button.disabled and lab.controls.compact_button.disabled
    assert "nothing to send" in lab.controls.status.value


async def test_the_budget_line_of_a_recording_as_recorded_knows_no_trigger() -> None:
    from pathlib import Path

    from ctxlab import load

    fixture = Path(__file__).parents[1] / "fixtures" / "sessions" / "claude_code_session.jsonl"
    lab = await Lab.open(load(fixture), context_window=200_000, view="recorded")
    line = magics.budget_line(lab)
    assert line.startswith("request 4: ") and line.endswith("no trigger known (as recorded)")
    await lab.show_view("replayed")  # type: ignore[misc]
    assert f"trigger at {lab.next_thresholds().trigger_tokens:,}" in magics.budget_line(lab)
