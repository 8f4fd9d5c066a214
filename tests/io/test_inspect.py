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
from tests.helpers import validations
from tests.io.shown import added_up

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


def _sample_variant(change: Any) -> dict[str, Any]:
    log = json.loads((FIXTURES / "add.json").read_text())
    change(log["samples"][0])
    return log


async def _replays(transcript: Any) -> list[str]:
    return [v for window in (200_000, 32_000) for v in await validations(transcript, window)]


async def test_a_reply_of_reasoning_alone_is_kept_with_its_usage(tmp_path: Path) -> None:
    def reasoning_only(sample: dict[str, Any]) -> None:
        last = sample["messages"][-1]
        last["content"] = [{"type": "reasoning", "reasoning": "2 + 3 is 5.", "signature": "s"}]

    path = tmp_path / "log.json"
    path.write_text(json.dumps(_sample_variant(reasoning_only)))
    transcript = load(path)
    last = transcript.messages[-1]
    assert last.role == "assistant" and last.content[0].type == "thinking"
    assert transcript.usage[3] == ProviderUsage(120, 9, 100, 0)  # the second model call's bill
    census = transcript.census
    assert census is not None and census.adds_up and census.usage_lost == {}
    assert await _replays(transcript) == ["passed"] * 4


async def test_a_sample_logged_with_its_events_alone_is_read_from_them(tmp_path: Path) -> None:
    whole = load(FIXTURES / "add.json")

    def events_only(sample: dict[str, Any]) -> None:
        del sample["messages"]

    path = tmp_path / "log.json"
    path.write_text(json.dumps(_sample_variant(events_only)))
    transcript = load(path)
    assert transcript.meta["read_from"] == "events"
    assert transcript.messages == whole.messages
    assert transcript.usage == whole.usage and len(transcript.usage) == 2
    added_up(transcript)
    assert await _replays(transcript) == ["passed"] * 4
