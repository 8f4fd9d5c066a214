"""`prepare`: the preparation pipeline, stages 1–8, from working state to a validated request.

A deterministic function of (working state, config, materials, counter, summarizer). It returns the
request, its manifest and the candidate working state; the caller commits that state only when
validation passed. Failures raise a `PreparationError` that carries the failed manifest.

`prepare` reads top to bottom as the stages in order, each one call of a function named for it
(here, over ``_stages.py``, ``_scan.py``, ``_compaction.py``; stage 7 is ``_layout.py``'s
`lay_out_sent`); what the caller passes besides state and materials is in
``_prepare_inputs.py``. What a repeated preparer reuses from one step to the next lives in a
`PreparationMemo` that the caller owns and passes in: nothing is parked on the token counter or
in a process-wide table.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ctxlab.config._config import ContextConfig
from ctxlab.exceptions import PreparationError
from ctxlab.manifest import ContextManifest, Purpose, Thresholds
from ctxlab.materials import Material, Materials
from ctxlab.messages._request import ModelRequest, ToolSchema
from ctxlab.messages._state import Summary, WorkingState
from ctxlab.pipeline._common_step import StepInputs, common_result, last_step
from ctxlab.pipeline._compaction import (
    CompactionRecord,
    Conversation,
    Reduction,
    ReductionLimits,
    reduce_conversation,
    reduction_due,
    summary_tokens,
)
from ctxlab.pipeline._layout import ManifestFactory, lay_out_sent, validate
from ctxlab.pipeline._offload import Offloader
from ctxlab.pipeline._preparation_memo import PreparationMemo
from ctxlab.pipeline._prepare_inputs import CallerInputs, CompactionOrder, grouped
from ctxlab.pipeline._scan import ConversationScan, scan_conversation
from ctxlab.pipeline._stages import (
    Budgeted,
    FixedPart,
    budget_materials,
    fixed_part,
    project,
    source_failures,
)
from ctxlab.pipeline._summary import Summarizer
from ctxlab.tokens import TokenCache, TokenCounter
from ctxlab.util._checks import instance_of, sequence_of

__all__ = [
    "CallerInputs",
    "CompactionOrder",
    "Preparation",
    "Purpose",
    "prepare",
]


@dataclass(frozen=True)
class Preparation:
    """The result of a successful preparation."""

    request: ModelRequest
    """What to send to the model."""
    manifest: ContextManifest
    """What the request contains and how it was built."""
    state: WorkingState
    """The candidate working state (compacted, truncated); commit it once the request is sent."""
    compaction: CompactionRecord | None = None
    """The compaction this preparation performed, if any."""


_DEFAULT_CONFIG = ContextConfig()
"""The config of a preparation given none (frozen: shared safely)."""
_NO_CALLER = CallerInputs()
"""What a preparation given no caller inputs reads (frozen: shared, not built at each step)."""
_NO_ORDER = CompactionOrder()
"""How a request given no compaction order compacts (frozen: shared likewise)."""
_NO_MATERIALS = Materials()
"""The materials of a preparation given none (frozen: shared; the common step asks one object)."""


def _checked_inputs(
    state: object,
    materials: object,
    tools: object,
    memo: object,
    caller: object,
    compaction: object,
    previous: object,
) -> tuple[ToolSchema, ...]:
    # What `prepare` takes, checked before any stage reads it. Each names the argument and
    # what it takes. A step of a replay passes what the last step passed: the checks that pass
    # are plain `isinstance` (the messages are built only for what fails), and a tools tuple
    # already checked by this memo is not walked again.
    if not isinstance(state, WorkingState):
        instance_of(state, WorkingState, "state", "a WorkingState (WorkingState.of(messages))")
    for value, kind, name in (
        (materials, Materials, "materials"),
        (memo, PreparationMemo, "memo"),
        (caller, CallerInputs, "caller"),
        (compaction, CompactionOrder, "compaction"),
        (previous, ContextManifest, "previous"),
    ):
        if value is not None and not isinstance(value, kind):
            instance_of(value, kind, name, f"a {kind.__name__} or None")
    if isinstance(memo, PreparationMemo) and tools is memo.tools and type(tools) is tuple:
        return tools
    checked = sequence_of(tools, ToolSchema, "tools", "a list of ToolSchema (transcript.tools)")
    if isinstance(memo, PreparationMemo) and type(tools) is tuple:
        memo.tools = tools  # a tuple cannot change: checked once
    return checked


async def prepare(
    state: WorkingState,
    *,
    context_window: int | None,
    counter: TokenCounter | TokenCache,
    config: ContextConfig | None = None,
    materials: Materials | None = None,
    tools: Sequence[ToolSchema] = (),
    summarizer: Summarizer | None = None,
    offloader: Offloader | None = None,
    purpose: Purpose = "reasoning",
    request_id: str | None = None,
    model: str = "",
    previous: ContextManifest | None = None,
    memo: PreparationMemo | None = None,
    max_output_tokens: int | None = None,
    caller: CallerInputs | None = None,
    compaction: CompactionOrder | None = None,
    **legacy: Any,
) -> Preparation:
    """Prepare the next model request from ``state``.

    Stages, in order: materials, images, tool results, budget, conversation reduction,
    projection, layout, validation. ``memo`` is the caller's `PreparationMemo`: pass the same one
    at every step of a session to pay only for what is new. ``max_output_tokens``, the response
    size the request asks for, reserves more when larger than the budget policy's reservation.
    ``caller``: what the calling agent contributes (`CallerInputs`); ``compaction``: how this
    request compacts (`CompactionOrder`). Former keywords (``projection=``, ``call_id=``...) warn.
    Raises `InvalidToolPairs`, `ContextBudgetExceeded` or `CompressionError`, with the manifest.
    """
    # Long by its signature and docstring: the body, the stages in order, is under 60 lines.
    if legacy:
        caller, compaction, request_id = grouped(legacy, caller, compaction, request_id)
    tools = _checked_inputs(state, materials, tools, memo, caller, compaction, previous)
    caller = caller or _NO_CALLER
    # One default for every call: `memo.checked` knows a config by identity, and a new one per
    # step would validate it and compute its lines at every step (a quarter of a replay's time).
    config = config or _DEFAULT_CONFIG
    materials = materials or _NO_MATERIALS
    cache = counter if isinstance(counter, TokenCache) else TokenCache(counter)
    memo = memo if memo is not None else PreparationMemo()
    memo.counted_by(cache.method)
    config, lines = memo.checked(config, context_window, max_output_tokens)
    manifest = ManifestFactory(
        request_id or uuid.uuid4().hex[:16], purpose, model, cache, lines, previous
    )
    window = (context_window, max_output_tokens)
    inputs = StepInputs.of(materials, tools, config, offloader, caller, compaction, window, purpose)
    common = common_result(state, inputs, memo, cache, manifest)
    if common is not None:
        return Preparation(*common, state)  # the common step: see `_common_step`
    memo.last = None  # until this step passed
    fixed = _materials(materials, tools, cache, memo, manifest)
    scan = _images_and_results(state.conversation, config, offloader, cache, memo, manifest)
    previous_summary = summary_tokens(state.summary, cache)
    material = _budget(materials.blocks, scan, fixed, previous_summary, lines, caller, cache)
    reduction = await _reduction(
        scan, state.summary, material, fixed, lines, config, cache, compaction, summarizer, manifest
    )
    sizes = _reduced_sizes(reduction, scan, state.summary, previous_summary, cache)
    material = _projection(
        material, reduction, sum(sizes), fixed, lines, config, caller, purpose, cache, manifest
    )
    layout, pairs, kept = lay_out_sent(
        fixed, reduction, sizes, material, scan, config.provider_edits, lines, cache, manifest
    )
    memo.scan = kept
    passed = validate(layout, pairs, purpose, manifest)
    memo.last = last_step(inputs, reduction.summary, sizes[1], kept, fixed, lines)
    return Preparation(layout.request, passed, _next_state(state, reduction), reduction.compaction)


def _materials(
    materials: Materials,
    tools: tuple[ToolSchema, ...],
    cache: TokenCache,
    memo: PreparationMemo,
    manifest: ManifestFactory,
) -> FixedPart:
    """Stage 1, materials: the System parts and tool schemas, itemized once per change (with what
    a recording does not hold of them, by its size); loading failures and notes become
    transforms."""
    fixed = memo.fixed = fixed_part(
        materials.system, tuple(tools), cache, memo.fixed, materials.unrecorded
    )
    manifest.transforms.extend(source_failures(materials))
    manifest.transforms.extend(materials.notes)
    return fixed


def _images_and_results(
    conversation: Conversation,
    config: ContextConfig,
    offloader: Offloader | None,
    cache: TokenCache,
    memo: PreparationMemo,
    manifest: ManifestFactory,
) -> ConversationScan:
    """Stages 2 and 3, images and tool results: only what was appended since the memo's scan is
    processed; the memo keeps the new scan for the next step."""
    scan, moved = scan_conversation(conversation, config, offloader, cache, memo.scan)
    memo.scan = scan
    manifest.transforms.extend(moved)
    return scan


def _budget(
    blocks: Sequence[Material],
    scan: ConversationScan,
    fixed: FixedPart,
    previous_summary: int,
    lines: Thresholds,
    caller: CallerInputs,
    cache: TokenCache,
) -> Budgeted:
    """Stage 4, budget: optional material gives way when it would starve the conversation below
    the tail a compaction keeps (plus the summary it already has)."""
    floor = min(scan.tokens, lines.reserve_tokens) + previous_summary
    return budget_materials(
        blocks,
        cache,
        excess_without_them=fixed.tokens + floor - lines.input_limit,
        policy=caller.selection_policy,
    )


async def _reduction(
    scan: ConversationScan,
    summary: Summary | None,
    material: Budgeted,
    fixed: FixedPart,
    lines: Thresholds,
    config: ContextConfig,
    cache: TokenCache,
    compaction: CompactionOrder | None,
    summarizer: Summarizer | None,
    manifest: ManifestFactory,
) -> Reduction:
    """Stage 5, conversation reduction: light passes, then compaction when due (skipped when
    nothing is), as ``compaction`` orders. A failure raises carrying the manifest of what was
    built so far."""
    order = compaction or _NO_ORDER
    limits = ReductionLimits.of(lines, fixed.tokens + material.total, order.threshold)
    due = reduction_due(scan, summary, config=config, cache=cache, limits=limits, force=order.force)
    if not due:
        return Reduction(scan.conversation, summary)
    try:
        reduction = await reduce_conversation(
            scan.conversation,
            summary,
            config=config,
            cache=cache,
            limits=limits,
            summarizer=summarizer,
            order=order,
            conversation_tokens=scan.tokens,
        )
    except PreparationError as exc:
        manifest.transforms.extend(material.transforms)
        exc.manifest = manifest([], "build_failed", str(exc))
        raise
    return reduction


def _reduced_sizes(
    reduction: Reduction,
    scan: ConversationScan,
    summary: Summary | None,
    previous_summary: int,
    cache: TokenCache,
) -> tuple[int, int]:
    """The reduced conversation's tokens and its summary's: what was measured before is reused
    when the reduction left it as it was (the common step: nothing to reduce)."""
    conversation = reduction.conversation
    conversation_tokens = (
        scan.tokens if conversation is scan.conversation else cache.messages(conversation)
    )
    summary_size = (
        previous_summary
        if reduction.summary is summary
        else summary_tokens(reduction.summary, cache)
    )
    return conversation_tokens, summary_size


def _projection(
    material: Budgeted,
    reduction: Reduction,
    history: int,
    fixed: FixedPart,
    lines: Thresholds,
    config: ContextConfig,
    caller: CallerInputs,
    purpose: Purpose,
    cache: TokenCache,
    manifest: ManifestFactory,
) -> Budgeted:
    """Stage 6, projection: optional material that no longer fits beside the reduced history
    (summary and conversation, ``history`` tokens) is omitted; then task state, runtime
    material and the usage notice, then references, are added. The manifest records the
    material's transforms, then the reduction's."""
    material = material.omit(fixed.tokens + material.total + history - lines.input_limit)
    material = project(
        material,
        reduction.conversation,
        cache=cache,
        projection=caller.projection,
        base_tokens=fixed.tokens + history,
        thresholds=lines,
        purpose=purpose,
        tool_enabled=config.compression_tool_enabled,
        with_notice=caller.usage_notice,
    )
    manifest.transforms.extend(material.transforms)
    manifest.transforms.extend(reduction.transforms)
    return material


def _next_state(state: WorkingState, reduction: Reduction) -> WorkingState:
    """The candidate working state: ``state`` itself when the reduction changed nothing."""
    conversation, summary = reduction.conversation, reduction.summary
    # The same tuple when nothing was replaced (the common step): no comparison at all; else
    # tuple equality, identity first, at C speed.
    changed = summary is not state.summary or (
        conversation is not state.conversation and conversation != state.conversation
    )
    if not changed:
        return state
    return WorkingState(conversation=conversation, summary=summary, revision=state.revision + 1)
