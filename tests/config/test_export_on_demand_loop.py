"""``config.export("anthropic_loop")`` (issue 56 item 1): the exported compaction-on-demand loop
runs in the Anthropic SDK against the local Messages API server — it sends a compaction request
(``compaction={"type": "summarize"}``, the conversation so far) where the config's rules ask, and
the requests after it open with the returned block in place of what it summarizes. The asks fall
where a ctxlab replay of the same conversation under the same config puts its compactions."""

from __future__ import annotations

import json
from typing import Any

import pytest

from ctxlab import ApproximateCounter, ContextConfig
from ctxlab.analysis import replay
from ctxlab.config import OnDemandCompaction
from ctxlab.exceptions import UsageError
from ctxlab.messages import parse_messages

anthropic = pytest.importorskip("anthropic")

PROMPTS = ["Fix the parser.", "Now fix the printer.", "Last, fix the docs."]
CALLS = 3  # tool calls per task


class Agent:
    """The local server's model: per task, ``CALLS`` tool calls then a reply; a compaction
    request is answered with a compaction block."""

    def __init__(self) -> None:
        self.calls = 0
        self.summaries = 0

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        from tests.models.messages_api import message

        if "compaction" in body:
            self.summaries += 1
            block = {"type": "compaction", "content": f"SUMMARY-{self.summaries}"}
            return message([block], stop="compaction", input_tokens=900, output_tokens=120)
        last = body["messages"][-1]
        spoke = isinstance(last["content"], str) or not any(
            b.get("type") == "tool_result" for b in last["content"]
        )
        if spoke:
            self.calls = 0
        if self.calls < CALLS:
            self.calls += 1
            n = sum(1 for m in body["messages"] if m["role"] == "assistant") + self.summaries * 100
            use = {"type": "tool_use", "id": f"t{n}", "name": "bash", "input": {"cmd": "make"}}
            return message([use], input_tokens=500 + 40 * len(body["messages"]))
        return message("Done.", input_tokens=500 + 40 * len(body["messages"]))


def exported(config: ContextConfig) -> dict[str, Any]:
    out = config.export("anthropic_loop")
    namespace: dict[str, Any] = {}
    exec(compile(out.value, "exported_loop.py", "exec"), namespace)
    return namespace


def run(config: ContextConfig) -> tuple[list[dict[str, Any]], list[dict[str, str]], Agent]:
    from tests.models.messages_api import MessagesAPI

    loop = exported(config)
    agent = Agent()
    with MessagesAPI(responder=agent) as api:
        client = anthropic.Anthropic(api_key="k", base_url=api.url, max_retries=0)
        loop["run"](client, "claude-sonnet-4-6", PROMPTS, execute=lambda name, args: "ok")
        return api.requests, api.headers, agent


def test_at_each_new_task_the_block_replaces_the_conversation_before() -> None:
    cfg = ContextConfig(on_demand=OnDemandCompaction(at_task=True))
    requests, headers, agent = run(cfg)
    compactions = [n for n, r in enumerate(requests) if "compaction" in r]
    assert agent.summaries == 2  # before the second and the third task
    for number, n in enumerate(compactions, start=1):
        asked = requests[n]
        assert asked["compaction"] == {"type": "summarize"}
        assert "compact-2026-09-04" in headers[n]["anthropic-beta"]
        # The compaction request holds the conversation up to the last reply, not the prompt.
        assert asked["messages"][-1]["role"] == "assistant"
        after = requests[n + 1]
        first = after["messages"][0]
        assert first["role"] == "user"
        assert first["content"][0] == {"type": "compaction", "content": f"SUMMARY-{number}"}
        assert first["content"][1] == {"type": "text", "text": PROMPTS[number]}
        # Nothing it summarizes is sent again.
        sent = json.dumps(after["messages"])
        assert PROMPTS[number - 1] not in sent
        assert not any(
            f'"id": "{b["id"]}"' in sent
            for m in asked["messages"]
            if m["role"] == "assistant"
            for b in m["content"]
            if b["type"] == "tool_use"
        )


def test_every_n_requests_a_mid_task_compaction_keeps_the_call_with_its_results() -> None:
    cfg = ContextConfig(on_demand=OnDemandCompaction(every_requests=3))
    requests, _, agent = run(cfg)
    compactions = [n for n, r in enumerate(requests) if "compaction" in r]
    assert agent.summaries == len(compactions) >= 2
    for n in compactions:
        after = requests[n + 1]["messages"]
        assert after[0]["content"][0]["type"] == "compaction"
        # Every result sent answers a call sent in the same request.
        calls = {b["id"] for m in after for b in _blocks(m) if b.get("type") == "tool_use"}
        results = {
            b["tool_use_id"] for m in after for b in _blocks(m) if b.get("type") == "tool_result"
        }
        assert results <= calls
    # The asks fall where a ctxlab replay of the same conversation compacts.
    assert _asked_numbers(requests) == _replayed_numbers(cfg.merge(compaction={"keep_messages": 1}))


def _blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message["content"]
    return [{"type": "text", "text": content}] if isinstance(content, str) else content


def _asked_numbers(requests: list[dict[str, Any]]) -> list[int]:
    # Reasoning requests (by number) that a compaction request came before.
    out, number = [], 0
    for n, request in enumerate(requests):
        if "compaction" in request:
            continue
        if n and "compaction" in requests[n - 1]:
            out.append(number)
        number += 1
    return out


def _replayed_numbers(cfg: ContextConfig) -> list[int]:
    # The same conversation, built here as the local model answers it, replayed under cfg.
    import asyncio

    conversation: list[dict[str, Any]] = []
    for t, prompt in enumerate(PROMPTS):
        conversation.append({"role": "user", "content": prompt})
        for n in range(CALLS):
            use = {"type": "tool_use", "id": f"c{t}{n}", "name": "bash", "input": {"cmd": "make"}}
            result = {"type": "tool_result", "tool_use_id": f"c{t}{n}", "content": "ok"}
            conversation += [
                {"role": "assistant", "content": [use]},
                {"role": "user", "content": [result]},
            ]
        conversation.append({"role": "assistant", "content": "Done."})
    messages = parse_messages(conversation)

    async def steps() -> list[int]:
        return [
            s.number
            async for s in replay(
                messages, context_window=1_000_000, counter=ApproximateCounter(), config=cfg
            )
            if s.compaction is not None
        ]

    return asyncio.run(steps())


def test_a_config_without_the_policy_is_refused_saying_what_to_set() -> None:
    with pytest.raises(UsageError, match="set on_demand"):
        ContextConfig().export("anthropic_loop")
    plain = ContextConfig(on_demand=OnDemandCompaction(at_task=True)).export("anthropic")
    assert any(d.startswith("on_demand:") for d in plain.dropped)
