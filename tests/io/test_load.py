"""`ctxlab.load`: sessions of other tools, checked against the normalized corpus."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxlab import ApproximateCounter, ContextConfig, compare_configs, load_transcript
from ctxlab.exceptions import MessageFormatError
from ctxlab.io import FORMATS, detect_format, load
from ctxlab.io._transcript import corpus_dir
from ctxlab.messages import AssistantMessage, find_tool_pair_problems
from tests.conftest import requires_corpus
from tests.fuzz.seeds import WRITTEN
from tests.io.contracts.openai_responses import RESPONSES_ITEMS
from tests.io.mutate import loads_or_refuses


def raw(kind: str, pattern: str) -> list[Path]:
    return sorted((corpus_dir() / "raw" / kind).glob(pattern))


def shape(messages: Any) -> list[tuple[str, ...]]:
    """Roles and tool-call ids, message by message (what an importer must get right). Thinking
    is left out: the normalized corpus dropped it, ctxlab keeps it."""
    out = []
    for message in messages:
        ids = [
            getattr(b, "id", "") or getattr(b, "tool_use_id", "")
            for b in message.content
            if b.type not in ("thinking", "redacted_thinking")
        ]
        out.append((message.role, *ids))
    return out


@requires_corpus
@pytest.mark.parametrize("kind", ["claude_code", "mini_swe_agent"])
def test_raw_sessions_load_like_the_normalized_corpus(kind: str) -> None:
    pattern = "*.jsonl" if kind == "claude_code" else "*.traj.json"
    files = raw(kind, pattern)
    assert files
    for path in files:
        stem = path.name.split(".")[0]
        transcript = load(path)
        normalized = load_transcript(corpus_dir() / "norm" / f"{kind}__{stem}.jsonl")
        assert shape(transcript.messages) == shape(normalized.messages), path.name
        assert find_tool_pair_problems(transcript.messages) == []
        assert transcript.meta["source"] == kind
        steps = sum(isinstance(m, AssistantMessage) for m in transcript.messages)
        assert 0 < len(transcript.usage) <= steps  # the provider's usage per step, where recorded
    if kind == "mini_swe_agent":
        # The same messages, to the letter — but for the reasoning LiteLLM returned with a
        # reply, which the normalized corpus dropped and ctxlab keeps as a thinking block.
        assert _without_thinking(transcript.messages) == list(normalized.messages)
        kept = [b.thinking for m in transcript.messages for b in m.content if b.type == "thinking"]
        assert kept == _raw_reasoning(path), path.name


def _raw_reasoning(path: Path) -> list[str]:
    # Counted from the file itself: each reply's response message's reasoning text.
    found = []
    for message in json.loads(path.read_text())["messages"]:
        response = (message.get("extra") or {}).get("response") or {}
        for choice in (response.get("choices") or [])[:1]:
            text = choice["message"].get("reasoning_content") or choice["message"].get("reasoning")
            if text and text.strip():
                found.append(text)
    return found


def _without_thinking(messages: Any) -> list[Any]:
    kept = []
    for message in messages:
        blocks = [b for b in message.content if b.type != "thinking"]
        kept.append(message.model_copy(update={"content": tuple(blocks)}))
    return kept


@requires_corpus
def test_claude_code_compactions_and_sidechains() -> None:
    path = next(p for p in raw("claude_code", "*.jsonl") if p.name.startswith("ae4a77f8"))
    transcript = load(path)
    (compaction,) = transcript.meta["compactions"]
    assert compaction["trigger"] == "manual" and compaction["pre_tokens"] == 142431
    summary = transcript.messages[compaction["summary_index"]]
    assert summary.role == "user" and "summar" in str(summary.model_dump()).lower()
    subagent = load(
        next(path.parent.glob(f"{path.stem}/subagents/agent-a*.jsonl")), sidechains=True
    )
    assert subagent.messages and find_tool_pair_problems(subagent.messages) == []


@requires_corpus
def test_tau_bench_episodes_load_like_the_normalized_corpus() -> None:
    (path,) = raw("tau_bench", "*.json")
    episodes = json.loads(path.read_text())
    for norm in sorted((corpus_dir() / "norm").glob("tau_bench__*.jsonl"))[:4]:
        meta = json.loads(norm.read_text().splitlines()[0])
        index = next(
            i
            for i, e in enumerate(episodes)
            if e["task_id"] == meta["task_id"] and e["trial"] == meta["trial"]
        )
        transcript = load(path, episode=index)
        normalized = load_transcript(norm)
        assert len(transcript.messages) == len(normalized.messages)
        assert find_tool_pair_problems(transcript.messages) == []
        assert transcript.system == normalized.system


@requires_corpus
async def test_a_loaded_session_replays_without_an_invalid_request() -> None:
    path = raw("mini_swe_agent", "psf__requests-1142.traj.json")[0]
    transcript = load(path)
    frame = await compare_configs(
        transcript.messages,
        {"default": ContextConfig()},
        context_window=32_000,
        counter=ApproximateCounter(),
        system=transcript.system,
    )
    assert (frame["validation"] == "passed").all()
    assert (frame["total"] <= frame["input_limit"]).all()


def test_openai_messages_with_tools_legacy_functions_and_a_repeated_id() -> None:
    messages = [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": [{"type": "text", "text": "weather?"}]},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {
                    "id": "c1",
                    "type": "function",
                    "function": {"name": "get", "arguments": '{"city": "Oslo"}'},
                }
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "rain"},
        {
            "role": "assistant",
            "tool_calls": [{"id": "c1", "function": {"name": "get", "arguments": "not json"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "snow"},
        {"role": "assistant", "function_call": {"name": "legacy", "arguments": "{}"}},
        {"role": "function", "name": "legacy", "content": "done"},
        {
            "role": "assistant",
            "content": "Rain, then snow.",
            "usage": {
                "prompt_tokens": 1_200,
                "completion_tokens": 6,
                "prompt_tokens_details": {"cached_tokens": 1_024},
            },
        },
    ]
    assert detect_format(messages) == "openai"
    transcript = load(messages)
    assert transcript.system == "Be brief."
    assert find_tool_pair_problems(transcript.messages) == []
    uses = [b for m in transcript.messages for b in getattr(m, "tool_uses", ())]
    assert [u.id for u in uses] == ["c1", "c1__dup2", "function_1"]
    assert uses[0].input == {"city": "Oslo"} and uses[1].input == {"_raw_arguments": "not json"}
    assert transcript.meta["renamed_tool_ids"] == 1
    # OpenAI's prompt tokens include the cached ones: 1,200 = 176 + 1,024.
    (usage,) = transcript.usage.values()
    assert (usage.input_tokens, usage.cache_read_input_tokens, usage.output_tokens) == (
        176,
        1_024,
        6,
    )


def test_an_anthropic_request_with_system_tools_and_a_missing_result() -> None:
    request = {
        "system": [{"type": "text", "text": "Be careful."}],
        "tools": [
            {"name": "read", "description": "Read a file", "input_schema": {"type": "object"}}
        ],
        "messages": [
            {"role": "user", "content": "read a.py"},
            {
                "role": "assistant",
                "content": [
                    {"type": "thinking", "thinking": "hm", "signature": "x"},
                    {"type": "tool_use", "id": "t1", "name": "read", "input": {"path": "a.py"}},
                ],
            },
            {"role": "user", "content": "never mind"},
        ],
    }
    transcript = load(request)
    assert transcript.system == "Be careful." and transcript.tools[0].name == "read"
    assert find_tool_pair_problems(transcript.messages) == []
    assert transcript.meta["synthesized_results"] == 1
    assert "dropped_blocks" not in transcript.meta
    thinking = transcript.messages[1].content[0]
    assert (thinking.type, thinking.thinking, thinking.signature) == ("thinking", "hm", "x")  # type: ignore[union-attr]


def test_bad_files_name_the_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "session.jsonl"
    bad.write_text(
        '{"type": "user", "sessionId": "s", "message": {"role": "user", "content": "hi"}}\n{oops\n'
    )
    with pytest.raises(MessageFormatError, match=r"session.jsonl line 2: not JSON"):
        load(bad)
    odd = tmp_path / "odd.json"
    odd.write_text(json.dumps({"what": "is this"}))
    with pytest.raises(MessageFormatError, match="pass format="):
        load(odd)


json_value = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(
                [
                    "role",
                    "content",
                    "type",
                    "tool_calls",
                    "messages",
                    "traj",
                    "id",
                    "text",
                    "function",
                    "tool_call_id",
                    "system",
                ]
            ),
            inner,
            max_size=5,
        )
    ),
    max_leaves=20,
)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(json_value)
def test_any_data_loads_or_raises_a_typed_error(data: Any) -> None:
    loads_or_refuses(lambda: load(data))


@settings(
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(
    st.binary(max_size=300)
    | st.lists(json_value, max_size=4).map(
        lambda values: "\n".join(json.dumps(v) for v in values).encode()
    )
)
def test_any_file_loads_or_raises_a_typed_error(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "session.jsonl"
    path.write_bytes(data)
    loads_or_refuses(lambda: load(path))


async def test_replay_counts_the_recorded_tool_schemas() -> None:
    from ctxlab import ToolSchema

    transcript = load(
        {
            "tools": [
                {
                    "name": "read",
                    "description": "Read a file. " * 40,
                    "input_schema": {"type": "object"},
                }
            ],
            "messages": [
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "hello"},
            ],
        }
    )
    assert isinstance(transcript.tools[0], ToolSchema)
    common = dict(context_window=8_000, counter=ApproximateCounter())
    bare = await compare_configs(transcript.messages, {"d": ContextConfig()}, **common)
    full = await compare_configs(
        transcript.messages, {"d": ContextConfig()}, tools=transcript.tools, **common
    )
    assert bare["tools"].iloc[0] == 0 and full["tools"].iloc[0] > 100
    assert full["total"].iloc[0] == bare["total"].iloc[0] + full["tools"].iloc[0]


@requires_corpus
def test_swe_agent_trajectories_in_both_history_formats() -> None:
    norms = sorted((corpus_dir() / "norm").glob("swe_agent__*.jsonl"))
    files = raw("swe_agent", "**/*.traj")
    assert len(files) == len(norms) == 7
    for path in files:
        transcript = load(path)
        normalized = load_transcript(
            next(n for n in norms if n.name.endswith(f"__{path.stem}.jsonl"))
        )
        roles = [(m.role, len(m.content)) for m in transcript.messages]
        assert roles == [(m.role, len(m.content)) for m in normalized.messages], path.name
        assert transcript.system == normalized.system
        assert find_tool_pair_problems(transcript.messages) == []


@pytest.mark.parametrize("format", ["ctxlab", "anthropic", "openai"])
async def test_an_agent_session_saves_and_loads_back(tmp_path: Path, format: str) -> None:
    from ctxlab.agent import Agent
    from ctxlab.models import ScriptedModel, tool_call

    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    model = ScriptedModel([tool_call("add", {"a": 2, "b": 3}), "It is 5."])
    agent = Agent(system_prompt="Be brief.", model=model, tools=[add], counter=ApproximateCounter())
    await agent("What is 2 + 3?")
    transcript = agent.transcript()
    assert transcript.tools[0].name == "add" and sorted(transcript.usage) == [1, 3]
    path = transcript.save(tmp_path / f"session.{format}", format=format)
    back = load(path)
    assert back.system == "Be brief."
    assert [m.model_dump() for m in back.messages] == [m.model_dump() for m in transcript.messages]
    if format != "openai":
        assert back.tools == transcript.tools
    if format == "ctxlab":
        assert back.usage == transcript.usage


_COUNT = st.integers(min_value=0, max_value=10**9)


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(bills=st.lists(st.tuples(_COUNT, _COUNT, _COUNT, _COUNT), min_size=1, max_size=4))
def test_a_saved_transcript_keeps_every_part_of_each_bill(
    tmp_path: Path, bills: list[tuple[int, int, int, int]]
) -> None:
    from ctxlab.io._transcript import Transcript
    from ctxlab.messages import ProviderUsage, UserMessage

    messages: list[Any] = []
    usage = {}
    for n, bill in enumerate(bills):
        messages += [UserMessage(content=f"question {n}"), AssistantMessage(content=f"answer {n}")]
        usage[2 * n + 1] = ProviderUsage(*bill)
    transcript = Transcript("billed", {"source": "test"}, "", tuple(messages), usage=usage)
    back = load(transcript.save(tmp_path / "billed.jsonl"))
    # Input, output, cache reads and cache writes, each as billed, on the same replies (a bill
    # of nothing at all is none: read back as no usage).
    parts = ("input_tokens", "output_tokens", "cache_read_input_tokens")
    parts += ("cache_creation_input_tokens",)
    assert {i: tuple(getattr(u, p) for p in parts) for i, u in back.usage.items()} == {
        i: bill for i, bill in zip(usage, bills, strict=True) if any(bill)
    }


def test_langchain_message_dicts() -> None:
    # The shape of langchain_core.messages.messages_to_dict(...).
    messages = [
        {"type": "system", "data": {"content": "Be brief.", "type": "system"}},
        {"type": "human", "data": {"content": "2 + 3?", "type": "human"}},
        {
            "type": "ai",
            "data": {
                "content": "",
                "tool_calls": [
                    {"name": "add", "args": {"a": 2, "b": 3}, "id": "call_1", "type": "tool_call"}
                ],
                "usage_metadata": {
                    "input_tokens": 120,
                    "output_tokens": 9,
                    "total_tokens": 129,
                    "input_token_details": {"cache_read": 100},
                },
            },
        },
        {"type": "tool", "data": {"content": "5", "tool_call_id": "call_1", "status": "success"}},
        {"type": "ai", "data": {"content": "5."}},
    ]
    assert detect_format(messages) == "langchain"
    transcript = load(messages)
    assert transcript.system == "Be brief." and find_tool_pair_problems(transcript.messages) == []
    assert transcript.messages[1].tool_uses[0].input == {"a": 2, "b": 3}  # type: ignore[union-attr]
    usage = transcript.usage[1]
    assert (usage.input_tokens, usage.cache_read_input_tokens, usage.total_input_tokens) == (
        20,
        100,
        120,
    )


def test_pydantic_ai_message_json() -> None:
    # The shape of pydantic_ai.messages.ModelMessagesTypeAdapter.dump_python(..., mode="json"):
    # the fuzz harness's seed (system and user prompts, a tool call and its return, the answer),
    # its call's response opening with thinking, with a cache read and a model's name.
    messages = copy.deepcopy(WRITTEN["pydantic_ai"][1])
    calling = messages[1]
    calling["parts"].insert(0, {"part_kind": "thinking", "content": "easy"})
    calling["usage"] |= {"cache_read_tokens": 10}
    calling["model_name"] = "test"
    assert detect_format(messages) == "pydantic_ai"
    transcript = load(messages)
    assert transcript.system == "Be brief." and find_tool_pair_problems(transcript.messages) == []
    assert "dropped_blocks" not in transcript.meta
    assert transcript.messages[1].content[0].thinking == "easy"  # type: ignore[union-attr]
    result = transcript.messages[2].content[0]
    assert result.text == "5"  # type: ignore[union-attr]
    assert (
        transcript.usage[1].input_tokens == 40 and transcript.usage[1].cache_read_input_tokens == 10
    )


async def test_a_session_log_exports_a_transcript_that_replays(tmp_path: Path) -> None:
    from ctxlab.models import tool_call
    from tests.session.logged import logged_agent

    def add(a: int, b: int) -> int:
        """Add two integers."""
        return a + b

    replies = [tool_call("add", {"a": 1, "b": 2}), "3", "bye"]
    agent, log = await logged_agent(tmp_path, replies, [add], "1 + 2?", "thanks")
    transcript = log.transcript(agent.log.key)
    assert [m.model_dump() for m in transcript.messages] == [m.model_dump() for m in agent.history]
    assert transcript.usage == agent.transcript().usage and len(transcript.usage) == 3
    back = load(transcript.save(tmp_path / "out.jsonl"))
    assert back.messages == transcript.messages and back.usage == transcript.usage


def test_openai_responses_items() -> None:
    # Input items of the Responses API as a request sends them (a developer message, a
    # reasoning item, a call and its output): the fixture, whose census the contract checks
    # (tests/io/contracts/openai_responses.py).
    items = json.loads(RESPONSES_ITEMS.read_text())
    assert detect_format(items) == "openai_responses"
    transcript = load(items)
    assert transcript.system == "Be brief." and find_tool_pair_problems(transcript.messages) == []
    assert [m.role for m in transcript.messages] == ["user", "assistant", "user", "assistant"]
    assert transcript.messages[1].tool_uses[0].input == {"city": "Oslo"}  # type: ignore[union-attr]
    assert transcript.meta["skipped"] == {"reasoning": 1}


def test_an_openhands_completion_log() -> None:
    log = {
        "fncall_messages": [
            {"role": "system", "content": "You are OpenHands."},
            {"role": "user", "content": "Fix the bug."},
            {
                "role": "assistant",
                "content": "Looking.",
                "tool_calls": [
                    {
                        "id": "t1",
                        "type": "function",
                        "function": {"name": "execute_bash", "arguments": '{"command": "ls"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "t1", "name": "execute_bash", "content": "a.py"},
        ],
        "fncall_response": {
            "choices": [{"message": {"role": "assistant", "content": "Found a.py."}}],
            "usage": {
                "prompt_tokens": 900,
                "completion_tokens": 12,
                "prompt_tokens_details": {"cached_tokens": 600},
            },
        },
        "kwargs": {
            "tools": [
                {
                    "type": "function",
                    "function": {"name": "execute_bash", "parameters": {"type": "object"}},
                }
            ]
        },
    }
    assert detect_format(log) == "openhands"
    transcript = load(log)
    assert transcript.system == "You are OpenHands." and transcript.tools[0].name == "execute_bash"
    assert transcript.messages[-1].content[0].text == "Found a.py."  # type: ignore[union-attr]
    assert transcript.usage[3].cache_read_input_tokens == 600


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    json_value,
    st.sampled_from([f for f in FORMATS if f not in ("ctxlab", "claude_code")]),
)
def test_every_importer_takes_any_data_or_raises_a_typed_error(data: Any, format: str) -> None:
    loads_or_refuses(lambda: load(data, format=format))  # type: ignore[arg-type]


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(st.lists(json_value, max_size=4), st.sampled_from(["ctxlab", "claude_code"]))
def test_the_file_importers_take_any_lines_or_raise_a_typed_error(
    tmp_path: Path, values: list[Any], format: str
) -> None:
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(json.dumps(v) for v in values))
    loads_or_refuses(lambda: load(path, format=format))  # type: ignore[arg-type]


def test_a_session_cut_off_during_a_tool_call_keeps_its_usage() -> None:
    usage = {"prompt_tokens": 90, "completion_tokens": 5}
    messages = [
        {"role": "user", "content": "list files"},
        {"role": "assistant", "content": "Looking.", "usage": usage},
        {"role": "user", "content": "go on"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c1", "function": {"name": "ls", "arguments": "{}"}}],
            "usage": {**usage, "prompt_tokens": 120},
        },
    ]
    transcript = load(messages, format="openai")
    # The unanswered last call gets an error result; the usage stays on its replies.
    assert find_tool_pair_problems(transcript.messages) == []
    assert transcript.meta["synthesized_results"] == 1
    assert transcript.usage[1].input_tokens == 90
    assert transcript.usage[3].input_tokens == 120


def test_a_compact_summary_after_tool_results_is_found_in_their_turn() -> None:
    fixture = Path(__file__).parents[1] / "fixtures" / "sessions" / "claude_code_session.jsonl"
    transcript = load(fixture)
    (compaction,) = transcript.meta["compactions"]
    summary = transcript.messages[compaction["summary_index"]]
    texts = [b.text for b in summary.content if b.type == "text"]  # type: ignore[union-attr]
    assert any("being continued from a previous conversation" in t for t in texts)


@requires_corpus
def test_every_line_of_a_claude_code_session_is_a_message_or_counted() -> None:
    # Counted from the raw lines, independently: user/assistant lines of the main thread are
    # messages; compaction boundaries are recorded; everything else is in meta["skipped"].
    for path in raw("claude_code", "*.jsonl")[:6]:
        lines = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        messages = sum(
            1 for r in lines if r.get("type") in ("user", "assistant") and not r.get("isSidechain")
        )
        boundaries = sum(
            1
            for r in lines
            if r.get("type") == "system"
            and r.get("subtype") in ("compact_boundary", "microcompact_boundary")
        )
        transcript = load(path)
        skipped = transcript.meta.get("skipped", {})
        subagent_lines = skipped.get("subagent line", 0)
        others = sum(
            v for k, v in skipped.items() if k not in ("subagent line", "empty reply line")
        )
        # A subagent's lines are agent_progress lines of the file: counted once, as subagents'.
        progress_agents = sum(
            1
            for r in lines
            if r.get("type") == "progress" and r["data"].get("type") == "agent_progress"
        )
        assert subagent_lines <= progress_agents + sum(1 for r in lines if r.get("isSidechain"))
        assert messages + boundaries + others + progress_agents + sum(
            1 for r in lines if r.get("isSidechain")
        ) == len(lines), path.name
        assert sum(e["lines"] for e in transcript.meta.get("subagents", [])) == subagent_lines
