"""Inspect AI logs, .eval and .json, made by the real inspect_ai (tests/fixtures/inspect)."""

from __future__ import annotations

import builtins
import json
from pathlib import Path
from typing import Any

import pytest

from ctxlab.exceptions import MessageFormatError
from ctxlab.io import detect_format, load
from ctxlab.messages import ProviderUsage, find_tool_pair_problems

FIXTURES = Path(__file__).parents[1] / "fixtures" / "inspect"


@pytest.mark.parametrize("name", ["add.eval", "add.json"])
@pytest.mark.parametrize(("episode", "a", "b", "total"), [(0, 2, 3, 5), (1, 10, 4, 14)])
def test_each_sample_loads_with_its_tool_call_and_usage(
    name: str, episode: int, a: int, b: int, total: int
) -> None:
    transcript = load(FIXTURES / name, episode=episode)
    assert transcript.meta["source"] == "inspect"
    assert (transcript.meta["samples"], transcript.meta["models"]) == (2, ["mockllm/model"])
    assert [m.role for m in transcript.messages] == ["user", "assistant", "user", "assistant"]
    assert transcript.messages[0].content[0].text == f"What is {a} + {b}?"  # type: ignore[union-attr]
    (use,) = transcript.messages[1].tool_uses  # type: ignore[union-attr]
    (result,) = transcript.messages[2].tool_results  # type: ignore[union-attr]
    assert (use.name, use.input, result.tool_use_id, result.text) == (
        "add",
        {"a": a, "b": b},
        use.id,
        str(total),
    )
    assert transcript.messages[3].content[0].text == f"The sum is {total}."  # type: ignore[union-attr]
    assert transcript.usage == {1: ProviderUsage(120, 9, 0, 0), 3: ProviderUsage(120, 9, 100, 0)}
    assert find_tool_pair_problems(transcript.messages) == [] and "repairs" not in transcript.meta


def test_the_json_log_is_detected_and_a_missing_sample_is_named() -> None:
    assert detect_format(json.loads((FIXTURES / "add.json").read_text())) == "inspect"
    with pytest.raises(MessageFormatError, match=r"no sample 2 .*holds 2"):
        load(FIXTURES / "add.json", episode=2)


def test_without_zstandard_an_eval_log_says_how_to_read_it(monkeypatch: pytest.MonkeyPatch) -> None:
    real = builtins.__import__

    def no_zstandard(name: str, *args: Any, **kwargs: Any) -> Any:
        if name == "zstandard":
            raise ImportError("no zstandard")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_zstandard)
    with pytest.raises(
        MessageFormatError, match=r"compressed with zstandard.*ctxlab\[inspect\].*--to json"
    ):
        load(FIXTURES / "add.eval")
