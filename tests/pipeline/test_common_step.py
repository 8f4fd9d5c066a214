"""The common step's path (`ctxlab.pipeline._common_step`) gives what every stage gives.

Generated histories (appends of plain, tool, long, image, undecodable and server-compacted
messages; config, materials, caller and compaction orders changed between steps) are prepared
step by step twice, each with its own memo: once with the common step's path enabled, once with
it disabled. Request, manifest (field by field), candidate state and compaction must be equal,
and a failure must fail alike.
"""

from __future__ import annotations

import dataclasses
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ctxlab.pipeline._common_step as common_step
import ctxlab.pipeline._prepare as prepare_module
from ctxlab import (
    ApproximateCounter,
    AssistantMessage,
    ContextBlock,
    ContextConfig,
    Material,
    Materials,
    PreparationError,
    Summary,
    SystemPart,
    TextBlock,
    TokenCache,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    WorkingState,
    WorkspaceOffloader,
    prepare,
)
from ctxlab.manifest import ContextManifest
from ctxlab.messages import DECODE_NOTE, ProviderBlock
from ctxlab.pipeline import CallerInputs, CompactionOrder, PreparationMemo
from tests.helpers import counted_calls, session
from tests.pipeline.test_properties import image, run, text

KINDS = (
    "plain",
    "tool",
    "medium",
    "long",
    "image",
    "result image",
    "decoded",
    "server compaction",
)


def _reply(kind: str, n: int, draw: st.DrawFn) -> list[Any]:
    """An assistant turn and the user turn answering it, of ``kind`` (``n``: a unique number)."""
    if kind == "plain":
        return [AssistantMessage(content=draw(text())), UserMessage(content=draw(text()))]
    if kind == "server compaction":
        block = ProviderBlock(
            data={"type": "compaction", "content": "so far", "encrypted_content": "e"}
        )
        return [AssistantMessage(content=(block,)), UserMessage(content=draw(text()))]
    if kind == "image":
        return [AssistantMessage(content=draw(text())), UserMessage(content=(image(n),))]
    call = ToolUseBlock(id=f"call_{n}", name="bash", input={"cmd": draw(text(1, 4))})
    output: Any = {
        "tool": draw(text()),
        # Under most limits: the conversation grows to the trigger by common steps.
        "medium": f"{n} " + "line of output " * draw(st.integers(20, 120)),
        "long": "line of output " * draw(st.integers(100, 3_000)),
        "result image": (TextBlock(text=draw(text())), image(n)),
        "decoded": DECODE_NOTE.format(count=3) + draw(text()),
    }[kind]
    return [
        AssistantMessage(content=(call,)),
        UserMessage(content=(ToolResultBlock(tool_use_id=call.id, content=output),)),
    ]


@st.composite
def histories(draw: st.DrawFn) -> list[tuple[list[Any], dict[str, Any]]]:
    """Steps: the messages each appends (the last request's reply first), and what it is
    prepared with (a config, materials, caller or order of the example's few, which a step
    changes sometimes and keeps most of the time: the common step needs the same objects)."""
    configs = [
        ContextConfig(tool_result_limit=draw(st.sampled_from([300, 2_000, 8_000]))),
        ContextConfig(
            tool_result_limit=draw(st.sampled_from([300, 8_000])),
            max_image_num=draw(st.integers(0, 3)),
            trigger_ratio=draw(st.floats(0.3, 0.9)),
            tool_result_eviction={"max_result_chars": 5_000},
        ),
        ContextConfig(provider_edits={"clear_tool_uses": {"trigger_input_tokens": 500}}),
        ContextConfig(compaction={"mask": {}}),
        ContextConfig(compaction={"trigger_messages": draw(st.integers(4, 20))}),
        ContextConfig(compaction={"enabled": False}),  # growing over the limit: both fail
    ]
    system = (SystemPart("system_prompt", draw(text(1, 30))),)
    block = Material("memory/m", "memory", "memory", ContextBlock.runtime("m", draw(text(1, 80))))
    materials = [
        Materials(system=system),
        Materials(system=system, blocks=(block,)),
        # No material, but a failed source: a transform every step records first.
        Materials(system=system, failures=(("docs", "the folder is gone"),)),
    ]
    callers = [CallerInputs(), CallerInputs(usage_notice=False)]
    orders: list[CompactionOrder | None] = [None, CompactionOrder(force=True)]
    summaries = [None, Summary(fields={"task_overview": "fix"}, text=draw(text(1, 200)))]
    inputs = {
        "config": configs[0],
        "materials": materials[0],
        "caller": callers[0],
        "compaction": None,
        "context_window": draw(st.sampled_from([2_000, 4_000, 8_000, 40_000])),
    }
    inputs["config"] = draw(st.sampled_from(configs))
    # A first prompt of some size: a history that starts near the usage notice's line shows
    # the notice at common steps (its figures change between them, or not when nothing is
    # appended).
    # (A word is 1.25 tokens to the approximate counter; the line is at 60% of the window.)
    share = draw(st.sampled_from([0.0, 0.0, 0.5, 0.62, 0.7]))
    prompt = draw(text()) + " word" * int(inputs["context_window"] * share / 1.25)
    steps = [([UserMessage(content=prompt)], dict(inputs))]
    for n in range(draw(st.integers(1, 20))):
        weights = st.sampled_from(["plain"] * 3 + ["tool"] * 3 + ["medium"] * 4 + list(KINDS))
        messages = [
            m
            # None at times: a step prepared again with nothing appended (a retry) has the
            # last step's usage notice, which the path reuses.
            for _ in range(draw(st.integers(0, 3)))
            for m in _reply(draw(weights), n * 10 + _, draw)
        ]
        change = draw(st.integers(0, 9))
        if change == 0:
            inputs["config"] = draw(st.sampled_from(configs))
        elif change == 1:
            inputs["materials"] = draw(st.sampled_from(materials))
        elif change == 2:
            inputs["caller"] = draw(st.sampled_from(callers))
        step = dict(inputs)
        step["compaction"] = orders[1] if change == 3 else None
        if change == 4:  # the caller's own summary (an edited state): the size kept is stale
            step["summary"] = draw(st.sampled_from(summaries))
        elif change == 5:  # a rewound state (a fork, an edit): the last messages replaced
            step["rewind"] = draw(st.integers(1, 3))
        steps.append((messages, step))
    return steps


def _prepared(state: WorkingState, memo: PreparationMemo, enabled: bool, **options: Any) -> Any:
    """The preparation of ``state`` with the common step's path on or off: the result, or the
    error's type, message and manifest."""
    common_step.ENABLED = enabled
    try:
        return run(prepare(state, memo=memo, request_id="r", **options))
    except PreparationError as exc:
        return type(exc), str(exc), exc.manifest
    finally:
        common_step.ENABLED = True


def _assert_same_manifest(fast: ContextManifest, full: ContextManifest) -> None:
    for field in dataclasses.fields(ContextManifest):
        assert getattr(fast, field.name) == getattr(full, field.name), field.name


def _assert_same(fast: Any, full: Any) -> None:
    if isinstance(full, tuple):  # a failure: alike
        assert isinstance(fast, tuple), fast
        assert fast[:2] == full[:2]
        assert (fast[2] is None) == (full[2] is None)
        if full[2] is not None:
            _assert_same_manifest(fast[2], full[2])
        return
    assert fast.request == full.request
    _assert_same_manifest(fast.manifest, full.manifest)
    assert fast.state == full.state
    assert (fast.compaction is None) == (full.compaction is None)


async def _stub_summarizer(request: Any) -> dict[str, Any]:
    return {"task_overview": "the work so far"}


def walk(steps: list[tuple[list[Any], dict[str, Any]]], offloader: Any) -> int:
    """Prepare every step both ways, committing each path's own state; returns how many steps
    the common step's path took."""
    memos = {True: PreparationMemo(), False: PreparationMemo()}
    caches = {flag: TokenCache(ApproximateCounter()) for flag in memos}
    states = {flag: WorkingState() for flag in memos}
    previous: dict[bool, ContextManifest | None] = {True: None, False: None}
    taken = 0
    for messages, step in steps:
        options = {k: v for k, v in step.items() if k not in ("summary", "rewind")}
        results = {}
        for flag in (True, False):
            state = states[flag]
            if "rewind" in step:
                kept = state.conversation[: -step["rewind"]]
                state = WorkingState(conversation=kept, summary=state.summary)
            state = state.append(*messages)
            if "summary" in step:
                state = WorkingState(conversation=state.conversation, summary=step["summary"])
            last = memos[flag].last
            results[flag] = _prepared(
                state,
                memos[flag],
                flag,
                counter=caches[flag],
                summarizer=_stub_summarizer,
                offloader=offloader,
                previous=previous[flag],
                **options,
            )
            if not isinstance(results[flag], tuple):
                taken += flag and last is not None and memos[flag].last is last
                states[flag], previous[flag] = results[flag].state, results[flag].manifest
            else:
                states[flag] = state  # a failed step is sent anyway: what follows appends
        _assert_same(results[True], results[False])
    return taken


@settings(
    max_examples=120,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(steps=histories(), offload=st.booleans())
def test_the_common_steps_path_gives_what_every_stage_gives(
    steps: list[tuple[list[Any], dict[str, Any]]], offload: bool
) -> None:
    with tempfile.TemporaryDirectory() as folder:
        walk(steps, WorkspaceOffloader(Path(folder)) if offload else None)


def test_a_plain_session_takes_the_common_steps_path_and_gives_the_same() -> None:
    # A control that the property above compares the path at all: a session of plain
    # exchanges takes it at nearly every step (not at the first, nor where it compacts).
    messages = session(30, output_chars=400)
    steps: list[tuple[list[Any], dict[str, Any]]] = []
    options = {"config": ContextConfig(), "context_window": 200_000}
    pending: list[Any] = []
    for message in messages:
        if isinstance(message, AssistantMessage) and pending:
            steps.append((pending, options))
            pending = []
        pending.append(message)
    taken = walk(steps, None)
    assert taken == len(steps) - 1


def test_a_step_that_changes_anything_upstream_takes_every_stage(monkeypatch) -> None:
    # Each change of the inputs between two plain steps: the second runs every stage.
    full_path = counted_calls(monkeypatch, prepare_module, "scan_conversation")
    first = [UserMessage(content="start the work")]
    more = [AssistantMessage(content="ok"), UserMessage(content="and now?")]
    base = {"config": ContextConfig(), "context_window": 40_000}
    changes = [
        {},  # nothing changed: the common step (the control)
        {"config": ContextConfig()},  # another config object
        {"materials": Materials(system=(SystemPart("system_prompt", "be brief"),))},
        {"caller": CallerInputs(usage_notice=False)},
        {"compaction": CompactionOrder(force=True)},
        {"context_window": 30_000},
    ]
    ran = []
    for change in changes:
        full_path.clear()
        walk([(first, base), (more, {**base, **change})], None)
        ran.append(len(full_path))
    # Both paths prepare both steps: the first step runs every stage twice; the second once
    # (the disabled path) when it is common, twice when it is not.
    assert ran == [3, 4, 4, 4, 4, 4]


def test_what_a_common_step_returns_is_not_changed_by_the_steps_after_it() -> None:
    # The scan a common step moves on in place (its items list, pair state, conversation) is
    # shared from step to step: what a step returned must hold its own immutable copies.
    messages = session(12, output_chars=300)
    memo, cache = PreparationMemo(), TokenCache(ApproximateCounter())
    seen: list[tuple[Any, tuple[Any, ...], tuple[Any, ...]]] = []
    state = WorkingState()
    for message in messages:
        state = state.append(message)
        if isinstance(message, AssistantMessage):
            continue
        done = run(prepare(state, context_window=200_000, counter=cache, memo=memo))
        assert type(done.manifest.items) is tuple and type(done.request.messages) is tuple
        seen.append((done, tuple(done.manifest.items), tuple(done.request.messages)))
    assert memo.last is not None and len(seen) == 13
    for done, items, sent in seen:
        assert done.manifest.items == items and done.request.messages == sent
        assert len(items) == len(sent) == len(done.state.conversation)
