"""The same fork code runs a real model: `AnthropicModel` against a local server speaking the
Messages API, and `OpenAIModel` against a local OpenAI-compatible server — each server answering
from the request it receives (read back from the wire into ctxlab's messages) with
`MemorylessModel`'s policy. Through either SDK, the branches do what the offline model does:
the same steps, verdicts and replies."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from ctxlab.demo import DEMO_WORKSPACE, demo_config, task_done
from ctxlab.fork import Outcomes, fork, run_forward
from ctxlab.io.formats._chat import from_openai
from ctxlab.messages import TextBlock, ToolUseBlock
from ctxlab.messages._request import ModelRequest, ToolSchema
from ctxlab.models import (
    MemorylessModel,
    Model,
    OpenAIModel,
    messages_from_anthropic,
)
from ctxlab.models._memoryless import decide
from tests.fork.helpers import demo_session, tree_hash
from tests.models.chat_api import ChatAPI, completion
from tests.models.messages_api import MessagesAPI, message, sonnet

WINDOW, OUTPUT = 8_000, 512


def _tools(
    body: dict[str, Any], schema: Callable[[dict[str, Any]], dict[str, Any]]
) -> tuple[ToolSchema, ...]:
    return tuple(ToolSchema(**schema(t)) for t in body.get("tools") or ())


def _anthropic_answer(body: dict[str, Any]) -> dict[str, Any]:
    system = body.get("system") or ""
    if isinstance(system, list):  # blocks, with the prompt-cache breakpoint
        system = "".join(b.get("text", "") for b in system)
    tools = _tools(body, lambda t: {"name": t["name"], "description": t.get("description", "")})
    request = ModelRequest(system, tuple(messages_from_anthropic(body["messages"])), tools)
    content = [
        {"type": "tool_use", "id": b.id, "name": b.name, "input": b.input}
        if isinstance(b, ToolUseBlock)
        else {"type": "text", "text": b.text}
        for b in decide(request)
    ]
    return message(content, input_tokens=1000, output_tokens=50)


def _openai_answer(body: dict[str, Any]) -> dict[str, Any]:
    builder, system = from_openai(body["messages"], "the local server")
    messages, _, _, _ = builder.finish()
    tools = _tools(body, lambda t: {"name": t["function"]["name"]})
    blocks = decide(ModelRequest(system, tuple(messages), tools))
    text = "\n".join(b.text for b in blocks if isinstance(b, TextBlock)) or None
    calls = [(b.id, b.name, b.input) for b in blocks if isinstance(b, ToolUseBlock)]
    return completion(text, calls, prompt_tokens=1000, completion_tokens=50)


def _offline() -> MemorylessModel:
    model = MemorylessModel(context_window=WINDOW)
    model.max_output_tokens = OUTPUT  # the budget the SDK models reserve
    return model


async def _outcomes(tmp_path: Path, model: Model | Callable[[], Model], name: str) -> Outcomes:
    session = await demo_session(tmp_path / name)
    tree = tree_hash(session.workspace)
    branches = [
        await fork(
            session.agent,
            at=at,
            name=f"{label}@{at}",
            config=config,
            model=model,
            workspace=DEMO_WORKSPACE,
            root=tmp_path / name / "b",
        )
        for at in (1, 3)
        for label, config in (("original", None), ("cut", demo_config(tool_result_limit=300)))
    ]
    outcomes = await run_forward(branches, check=task_done, max_steps=10)
    assert tree_hash(session.workspace) == tree
    return outcomes


def _same(outcomes: Outcomes) -> list[tuple[object, ...]]:
    frame = outcomes.frame()
    return list(zip(frame["branch"], frame["steps"], frame["passed"], frame["reply"], strict=True))


@contextlib.contextmanager
def _served(kind: str) -> Iterator[tuple[Any, Model]]:
    """A local server of ``kind`` answering with the policy, and the SDK model that calls it."""
    if kind == "anthropic":
        with MessagesAPI(responder=_anthropic_answer) as api:
            yield (
                api,
                sonnet(api, max_tokens=OUTPUT, context_window=WINDOW),
            )
        return
    with ChatAPI([], responder=_openai_answer) as chat:
        yield (
            chat,
            OpenAIModel(
                "local-model",
                base_url=chat.url,
                max_retries=0,
                max_tokens=OUTPUT,
                context_window=WINDOW,
            ),
        )


@pytest.mark.parametrize("kind", ["anthropic", "openai"])
async def test_a_real_model_through_its_sdk_runs_the_branches_as_the_offline_one(
    tmp_path: Path, kind: str
) -> None:
    offline = _same(await _outcomes(tmp_path, _offline, "offline"))
    with _served(kind) as (api, model):
        real = await _outcomes(tmp_path, model, kind)
        sent = len(api.requests)
    assert _same(real) == offline
    assert all(r.passed for r in real.runs)
    # Every step of every run went through the server (and was billed as it said).
    assert sent == real.frame()["steps"].sum()
    assert all(m.provider_usage is not None for r in real.runs for m in r.manifests)
