"""Texts that made a pattern take the square of their length: aider's token line followed by
thirty thousand digits, a mini-SWE-agent reply of 160 kB of unclosed action tags, a user message
of unclosed harness tags, test output of endless rules and blank lines. Each now loads (or is
read) in time linear in its length: timed at a length ``n`` and at ``4n`` — four times as long,
give or take; sixteen when quadratic — with bounds generous for a busy two-core machine, and
under an absolute bound far below what the quadratic patterns took (15 s and more)."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from ctxlab import load
from ctxlab.messages import TextBlock, UserMessage
from ctxlab.pipeline._span import _scan_result, read_span
from ctxlab.retention._users import _scan as user_lines
from tests.hostile import assert_linear


def test_aiders_token_line_with_thirty_thousand_digits(tmp_path: Path) -> None:
    def make(n: int) -> Callable[[], object]:
        path = tmp_path / f"{n}.aider.chat.history.md"
        path.write_text(
            "# aider chat started at 2026-01-01 10:00:00\n\n#### fix it\n\nDone.\n\n"
            f"> Tokens: {'1' * n}\n> Tokens: {'1' * n} sent, {'2,' * (n // 2)} received.\n"
        )
        return lambda: load(path)

    assert_linear(make, 30_000, bound=5.0)
    transcript = load(tmp_path / "30000.aider.chat.history.md")
    # No count has thirty thousand digits: the line is no token report, and nothing is billed.
    assert transcript.usage == {}
    assert [m.role for m in transcript.messages] == ["user", "assistant"]


def test_a_mini_swe_agent_reply_of_unclosed_tags(tmp_path: Path) -> None:
    def make(n: int) -> Callable[[], object]:
        reply = "<mswea_bash_command>ls " * (n // 23) + "```bash\nls " * (n // 12)
        path = tmp_path / f"{n}.traj.json"
        messages = [
            {"role": "system", "content": "You are a helpful assistant."},
            {"role": "user", "content": "Fix the bug."},
            {"role": "assistant", "content": reply},
            {"role": "user", "content": "Please always provide exactly one action."},
        ]
        path.write_text(json.dumps({"trajectory_format": "mini-swe-agent-1", "messages": messages}))
        return lambda: load(path)

    assert_linear(make, 40_000, bound=5.0)  # 160 kB at 4n: 15-19 s before
    reply = load(tmp_path / "160000.traj.json").messages[1]
    assert reply.role == "assistant" and not reply.tool_uses  # type: ignore[union-attr]


def test_a_user_message_of_unclosed_harness_tags() -> None:
    def make(n: int) -> Callable[[], object]:
        text = "<system-reminder>x " * (n // 38) + "<command-name>x " * (n // 32)
        message = UserMessage(content=(TextBlock(text=text),))
        return lambda: (read_span([message]), user_lines(text))

    assert_linear(make, 40_000, bound=5.0)


def test_test_output_of_endless_rules_and_blank_lines() -> None:
    def make(n: int) -> Callable[[], object]:
        output = ("=" * (n // 4) + " ") + ("= " * (n // 8)) + "\n" * (n // 4) + "\t" * (n // 4)
        output += "Error" + "\nE" + " " * (n // 8) + "x\n" + "\n" * (n // 8) + "Errorx"
        return lambda: _scan_result(output, False)

    assert_linear(make, 10_000, bound=5.0)


def test_a_command_repeating_sed_and_an_option() -> None:
    from ctxlab.retention._paths import _edits_in_place

    def make(n: int) -> Callable[[], object]:
        command = "sed -a -" * (n // 8)
        return lambda: _edits_in_place(command)

    assert_linear(make, 40_000, bound=5.0)
    assert _edits_in_place("sed -n -i s/a/b/ f") and not _edits_in_place("sed -n s/a/b/ f")
