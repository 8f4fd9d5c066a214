"""Hostile inputs at the public entry points: every input either works or raises a `CtxlabError`
whose message names the problem; nothing on disk is overwritten; the agent stays usable."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxlab import (
    ApproximateCounter,
    ContextConfig,
    WorkingState,
    WorkspaceOffloader,
    load_transcript,
    prepare,
)
from ctxlab.agent import Agent
from ctxlab.exceptions import CtxlabError
from ctxlab.messages import find_tool_pair_problems, parse_messages
from ctxlab.models import ScriptedModel, messages_from_anthropic, tool_call

SETTINGS = settings(
    max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)

# Text from any alphabet: surrogates and control characters included.
any_text = st.text(alphabet=st.characters(codec=None, categories=None), max_size=40)
json_leaf = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | any_text
json_value = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(any_text, inner, max_size=4),
    max_leaves=12,
)
block_kinds = st.sampled_from(
    ["text", "image", "tool_use", "tool_result", "thinking", "hint", None]
)


@st.composite
def message_dicts(draw: st.DrawFn) -> Any:
    """Message-like dicts: mostly plausible shapes with hostile values, sometimes anything."""
    if draw(st.integers(0, 9)) == 0:
        return draw(json_value)
    blocks = []
    for _ in range(draw(st.integers(0, 3))):
        block: dict[str, Any] = {"type": draw(block_kinds)}
        for key in draw(
            st.lists(
                st.sampled_from(
                    ["text", "id", "name", "input", "tool_use_id", "content", "is_error", "source"]
                ),
                max_size=4,
            )
        ):
            block[key] = draw(json_value)
        blocks.append(block)
    content = draw(st.sampled_from(["blocks", "text", "other"]))
    return {
        "role": draw(st.sampled_from(["user", "assistant", "system", "tool", None])),
        "content": blocks
        if content == "blocks"
        else draw(any_text)
        if content == "text"
        else draw(json_value),
    }


def typed(call: Any, *args: Any) -> Any:
    """Run ``call``; a failure must be a `CtxlabError` with a message."""
    try:
        return call(*args)
    except CtxlabError as exc:
        assert str(exc).strip()
        return None


@SETTINGS
@given(st.lists(message_dicts(), max_size=5))
def test_message_dicts_parse_or_raise_a_typed_error(data: list[Any]) -> None:
    for reader in (parse_messages, messages_from_anthropic):
        parsed = typed(reader, data)
        if parsed is not None:
            for message in parsed:
                message.model_dump_json()  # always serializable


@SETTINGS
@given(
    st.binary(max_size=400)
    | st.lists(json_value, max_size=4).map(
        lambda values: "\n".join(json.dumps(v) for v in values).encode()
    )
)
def test_transcript_files_load_or_raise_a_typed_error(tmp_path_factory: Any, data: bytes) -> None:
    path = tmp_path_factory.mktemp("t") / "session.jsonl"
    path.write_bytes(data)
    typed(load_transcript, path)


@SETTINGS
@given(st.dictionaries(st.sampled_from(list(ContextConfig.model_fields)), json_value, max_size=4))
def test_configs_are_valid_or_refused_at_every_boundary(overrides: dict[str, Any]) -> None:
    try:
        config = ContextConfig(**overrides)
    except ValueError as exc:  # 002: a ValueError (pydantic's) naming the field and the rule
        assert any(name in str(exc) for name in overrides)
        return
    bypass = ContextConfig().model_copy(update=overrides)
    typed(lambda: Agent(model=ScriptedModel([]), context_config=bypass))
    assert Agent(model=ScriptedModel([]), context_config=config).context_config is config


@st.composite
def tool_outputs(draw: st.DrawFn) -> Any:
    return draw(st.binary(max_size=300) | any_text | json_value)


@SETTINGS
@given(
    outputs=st.lists(tool_outputs(), min_size=1, max_size=4),
    ids=st.lists(any_text.filter(bool), min_size=1, max_size=4),
)
async def test_any_tool_output_and_any_call_id_leave_a_working_agent(
    tmp_path_factory: Any, outputs: list[Any], ids: list[str]
) -> None:
    workspace = tmp_path_factory.mktemp("ws")
    produced = iter(outputs)

    def tool() -> Any:
        """Returns whatever the test hands it."""
        return next(produced, "")

    calls = [tool_call("tool", id=i) for i in ids][: len(outputs)]
    model = ScriptedModel([*calls, "done", "after"], context_window=4_000)
    config = ContextConfig(tool_result_limit=200)
    agent = Agent(
        model=model,
        tools=[tool],
        counter=ApproximateCounter(),
        workspace=workspace,
        context_config=config,
    )
    try:
        await agent("go")
    except CtxlabError as exc:
        assert str(exc).strip()  # e.g. a repeated id: refused, nothing kept
    for request in model.requests:
        assert not find_tool_pair_problems(request.messages)
        json.dumps(request.to_anthropic())
    assert all(
        m.input_limit >= m.estimated_input_tokens
        for m in agent.manifests
        if m.validation == "passed"
    )
    written = {p: p.read_bytes() for p in Path(workspace).rglob("*") if p.is_file()}
    model.replies = ["after"]  # a valid reply now: whatever happened before, the agent works
    reply = await agent("and now?")
    assert reply.content
    for path, data in written.items():
        assert path.read_bytes() == data  # nothing overwritten


@SETTINGS
@given(st.lists(any_text, min_size=1, max_size=6), st.binary(max_size=200))
def test_offload_paths_stay_inside_and_never_clobber(
    tmp_path_factory: Any, ids: list[str], data: bytes
) -> None:
    from ctxlab.pipeline._offload import offload_name

    root = tmp_path_factory.mktemp("off")
    offloader = WorkspaceOffloader(root)
    for index, item in enumerate(ids):
        content = data + str(index).encode()
        path = Path(offloader.write(f"large/{offload_name(item, content)}.txt", content))
        assert path.is_relative_to(root.resolve()) and path.read_bytes() == content


@SETTINGS
@given(st.lists(message_dicts(), max_size=6))
async def test_prepare_on_any_parsed_conversation_is_valid_or_typed(data: list[Any]) -> None:
    messages = typed(parse_messages, data)
    if not messages:
        return
    state = WorkingState(conversation=tuple(messages))
    try:
        prep = await prepare(state, context_window=2_000, counter=ApproximateCounter())
    except CtxlabError as exc:
        assert str(exc).strip() and getattr(exc, "manifest", None) is not None
        return
    assert not find_tool_pair_problems(prep.request.messages)
    assert prep.manifest.estimated_input_tokens <= prep.manifest.input_limit
