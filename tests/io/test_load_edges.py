"""Loading without losing or refusing what it need not: an image through an OpenAI round trip,
a result that names no call, an errored tau-bench episode said as such."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from ctxlab import Transcript, load
from ctxlab.exceptions import MessageFormatError
from ctxlab.messages import AssistantMessage, ImageBlock, TextBlock, UserMessage
from tests.io.contracts.swe_agent import DEMONSTRATION
from tests.io.shown import added_up


@pytest.mark.parametrize("format", ["openai", "anthropic", "ctxlab"])
def test_an_image_survives_a_save_and_load_round_trip(tmp_path: Path, format: str) -> None:
    data = base64.b64encode(b"\x89PNG\r\n\x1a\n" + b"\x00" * 16).decode()
    image = ImageBlock(source={"type": "base64", "media_type": "image/png", "data": data})
    messages = (
        UserMessage(content=(TextBlock(text="what is in this picture?"), image)),
        AssistantMessage(content="A blank image."),
    )
    transcript = Transcript("pic", {}, "", messages)
    path = transcript.save(tmp_path / f"pic.{format}.json", format=format)  # type: ignore[arg-type]
    back = load(path)
    assert back.messages == messages
    assert "skipped" not in back.meta and "dropped_blocks" not in back.meta


def test_a_result_without_a_call_id_is_left_out_and_counted_not_refused() -> None:
    history = [
        {"role": "user", "content": "run it"},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "a", "name": "bash", "input": {}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "content": "orphan output"}]},
        {"role": "assistant", "content": "done"},
    ]
    transcript = load(history, format="anthropic")
    # The message of only that result: skipped once, for it (i67-skip).
    assert transcript.meta["skipped"] == {"tool result without a call id": 1}
    census = added_up(transcript)
    assert census.left_out == {}
    assert census.skipped == {"tool result without a call id": 1}
    assert transcript.meta["synthesized_results"] == 1  # the call itself, answered by a repair
    texts = [b.text for m in transcript.messages for b in m.content if b.type == "text"]  # type: ignore[union-attr]
    assert texts == ["run it", "done"]  # nothing else lost


def test_an_errored_tau_bench_episode_says_so() -> None:
    results = [
        {
            "task_id": 7,
            "trial": 0,
            "reward": 0.0,
            "info": {"error": "RateLimitError: 429"},
            "traj": [],
        },
        {
            "task_id": 8,
            "trial": 0,
            "reward": 1.0,
            "info": {},
            "traj": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}],
        },
    ]
    with pytest.raises(
        MessageFormatError, match=r"task 7.*recorded no messages.*RateLimitError: 429.*episode="
    ):
        load(results, format="tau_bench")
    assert len(load(results, format="tau_bench", episode=1).messages) == 2


def test_a_swe_agent_demonstration_without_its_trajectory_is_recognised() -> None:
    from ctxlab.io import detect_format

    # SWE-agent's demonstrations keep the history (each entry with its agent and message type)
    # and may leave the trajectory out (SWE-agent/SWE-agent, trajectories/demonstrations): the
    # fixture, whose census the contract checks (tests/io/contracts/swe_agent.py).
    demo = json.loads(DEMONSTRATION.read_text())
    assert "trajectory" not in demo and {e["agent"] for e in demo["history"]} == {"primary"}
    assert detect_format(demo) == "swe_agent"
    transcript = load(demo)
    assert transcript.system == "You are an autonomous programmer."
    assert [m.role for m in transcript.messages][:2] == ["user", "assistant"]


def test_claude_code_behind_one_foreign_line_loads_and_counts_it(tmp_path: Path) -> None:
    session = Path(__file__).parents[1] / "fixtures" / "sessions" / "claude_code_session.jsonl"
    lines = session.read_text().splitlines()
    foreign = json.dumps({"type": "meta", "tool": "session-sync", "version": 3})
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join([foreign, *lines]) + "\n")
    transcript, whole = load(path), load(session)
    assert transcript.meta["source"] == "claude_code"
    assert transcript.messages == whole.messages and transcript.usage == whole.usage
    census = added_up(transcript)
    assert census.skipped["line of another tool"] == 1
    assert sum(census.read.values()) == len(lines) + 1


async def test_a_conversation_that_opens_with_a_call_replays_from_its_first_user_message() -> None:
    from ctxlab import ApproximateCounter, recorded_requests, replay
    from ctxlab.messages import request_start

    history = [
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "a", "name": "ls", "input": {}}],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a", "content": "x"}]},
        {"role": "assistant", "content": "I see x."},
        {"role": "user", "content": "Now sort it."},
        {"role": "assistant", "content": "Sorted."},
    ]
    transcript = load(history, format="anthropic")
    assert request_start(transcript.messages) == 3  # not 1: its result answers a call before it
    for window in (200_000, 32_000):
        steps = [
            s.manifest.validation
            async for s in replay(
                transcript.messages, context_window=window, counter=ApproximateCounter()
            )
        ]
        assert steps == ["passed"]
    (request,) = recorded_requests(transcript)
    assert (request.reply, request.start) == (4, 3)


def test_images_without_data_are_left_out_and_counted_not_a_failed_load() -> None:
    no_bytes = {"type": "image", "source": {"type": "base64", "media_type": "image/png"}}
    no_link = {"type": "image", "source": {"type": "url"}}
    history = [
        {"role": "user", "content": [no_bytes, {"type": "text", "text": "what is this?"}]},
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "s", "name": "shot", "input": {}}],
        },
        {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "s", "content": [no_link]}],
        },
        {"role": "assistant", "content": "A cat."},
    ]
    transcript = load(history, format="anthropic")
    assert [b.type for m in transcript.messages for b in m.content] == [
        "text",
        "tool_use",
        "tool_result",
        "text",
    ]
    census = added_up(transcript)
    assert census.left_out == {"image without data": 2}
