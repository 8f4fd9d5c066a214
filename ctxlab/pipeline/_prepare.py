"""`prepare`: the preparation pipeline, stages 1–8, from working state to a validated request.

A deterministic function of (working state, config, materials, counter, summarizer). It returns the
request, its manifest and the candidate working state; the caller commits that state only when
validation passed. Failures raise a `PreparationError` that carries the failed manifest.

Each stage is a function of its own (``_stages.py``, ``_scan.py``, ``_compaction.py``). What a
repeated preparer reuses from one step to the next lives in a `PreparationMemo` that the caller
owns and passes in: nothing is parked on the token counter or in a process-wide table.
"""

from __future__ import annotations

import dataclasses
import uuid
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from ctxlab.config._config import ContextConfig, require_config
from ctxlab.config._sections import ProviderEdits
from ctxlab.exceptions import PreparationError
from ctxlab.manifest import ContextManifest, Purpose, Thresholds
from ctxlab.materials import Materials
from ctxlab.messages import ToolPairScanner
from ctxlab.messages._request import ModelRequest, ToolSchema
from ctxlab.messages._state import WorkingState
from ctxlab.pipeline._budget import SelectionPolicy
from ctxlab.pipeline._compaction import (
    CompactionRecord,
    Reduction,
    ReductionLimits,
    reduce_conversation,
    reduction_due,
    summary_tokens,
)
from ctxlab.pipeline._layout import ManifestFactory, lay_out, validate
from ctxlab.pipeline._offload import Offloader
from ctxlab.pipeline._provider_edits import apply_provider_edits
from ctxlab.pipeline._scan import ConversationScan, message_items, rescanned, scan_conversation
from ctxlab.pipeline._stages import (
    FixedPart,
    Projection,
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
    "PreparationMemo",
    "Purpose",
    "prepare",
]


@dataclass
class PreparationMemo:
    """What one preparer (an agent, a replay) reuses between its consecutive preparations.

    Every entry is checked against its inputs before use, so a memo never changes a result, only
    its cost; a fresh memo (or none) gives the same request and manifest.
    """

    thresholds: tuple[ContextConfig, int | None, int | None, ContextConfig, Thresholds] | None = (
        None
    )
    """The last (config, window, output size), the checked config and its lines: recomputed
    when one changes."""
    fixed: FixedPart | None = None
    """System and tool schemas, itemized: rebuilt when either changes."""
    scan: ConversationScan | None = None
    """The last processed conversation: the next step processes only what was appended."""

    def thresholds_for(
        self,
        config: ContextConfig,
        context_window: int | None,
        max_output_tokens: int | None = None,
    ) -> Thresholds:
        """The lines of ``config`` at ``context_window``, computed once per change."""
        return self.checked(config, context_window, max_output_tokens)[1]

    def checked(
        self,
        config: ContextConfig,
        context_window: int | None,
        max_output_tokens: int | None = None,
    ) -> tuple[ContextConfig, Thresholds]:
        """``config`` validated (whatever reaches a preparation is valid) and its lines; both
        computed once per new config, window or output size."""
        if self.thresholds is not None:
            old_config, old_window, old_output, valid, lines = self.thresholds
            if (
                old_config is config
                and old_window == context_window
                and old_output == max_output_tokens
            ):
                return valid, lines
        valid = require_config(config)
        lines = Thresholds.compute(valid, context_window, max_output_tokens)
        self.thresholds = (config, context_window, max_output_tokens, valid, lines)
        return valid, lines


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


@dataclass(frozen=True)
class CallerInputs:
    """What the agent that calls `prepare` contributes besides its state and materials."""

    projection: Projection | None = None
    """The task-state material for the reduced conversation (never omitted)."""
    usage_notice: bool = True
    """False holds the usage notice back (the agent does while a todo item is in progress, as
    002 says for plan tasks)."""
    selection_policy: SelectionPolicy | None = None
    """Orders the omission of optional material (000's contextSelectionPolicy)."""


@dataclass(frozen=True)
class CompactionOrder:
    """How this one request compacts, against the config's defaults."""

    force: bool = False
    """Compact whatever the size (overflow recovery, "Compact now")."""
    threshold: int | None = None
    """Replaces the trigger line for this request (the CompressContext tool compacts from the
    usage-notice line)."""
    instructions: str | None = None
    """A hint for the summary ("keep every file path")."""


_DEFAULT_CONFIG = ContextConfig()
"""The config of a preparation given none (frozen: shared safely)."""


_LEGACY = {
    "projection": ("caller", "projection"),
    "usage_notice": ("caller", "usage_notice"),
    "selection_policy": ("caller", "selection_policy"),
    "force_compaction": ("compaction", "force"),
    "compaction_threshold": ("compaction", "threshold"),
    "instructions": ("compaction", "instructions"),
    "call_id": ("", "request_id"),
}
"""`prepare`'s keyword arguments before they were grouped: accepted with a warning."""


def _checked_inputs(
    state: object,
    materials: object,
    tools: object,
    memo: object,
    caller: object,
    compaction: object,
    previous: object,
) -> tuple[ToolSchema, ...]:
    # What `prepare` takes, checked before any stage reads it (a few checks a step; the tools
    # are a handful). Each names the argument and what it takes.
    instance_of(state, WorkingState, "state", "a WorkingState (WorkingState.of(messages))")
    for value, kind, name in (
        (materials, Materials, "materials"),
        (memo, PreparationMemo, "memo"),
        (caller, CallerInputs, "caller"),
        (compaction, CompactionOrder, "compaction"),
        (previous, ContextManifest, "previous"),
    ):
        if value is not None:
            instance_of(value, kind, name, f"a {kind.__name__} or None")
    return sequence_of(tools, ToolSchema, "tools", "a list of ToolSchema (transcript.tools)")


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
    projection, layout, validation. ``memo`` is the caller's `PreparationMemo`: pass the same
    one at every step of a session to pay only for what is new. ``max_output_tokens`` is the
    response size the request will ask for: a larger one than the budget policy's reservation
    reserves more. ``caller`` is what the calling agent contributes (`CallerInputs`: task-state
    projection, usage notice, selection policy); ``compaction`` how this request compacts
    (`CompactionOrder`: forced, another threshold, a hint). The former keywords
    (``projection=``, ``force_compaction=``, ``call_id=``, ...) still work, with a
    `DeprecationWarning`. Raises `InvalidToolPairs`, `ContextBudgetExceeded` or
    `CompressionError`, each carrying the failed manifest.
    """
    # Longer than a screen only by its signature and docstring (the public API); the body is
    # the eight stages in order, each one call.
    if legacy:
        caller, compaction, request_id = _grouped(legacy, caller, compaction, request_id)
    tools = _checked_inputs(state, materials, tools, memo, caller, compaction, previous)
    caller = caller or CallerInputs()
    order = compaction or CompactionOrder()
    # One default for every call: `memo.checked` knows a config by identity, and a new one per
    # step would validate it and compute its lines at every step (a quarter of a replay's time).
    config = config or _DEFAULT_CONFIG
    materials = materials or Materials()
    cache = counter if isinstance(counter, TokenCache) else TokenCache(counter)
    memo = memo if memo is not None else PreparationMemo()
    config, lines = memo.checked(config, context_window, max_output_tokens)
    manifest = ManifestFactory(
        request_id or uuid.uuid4().hex[:16], purpose, model, cache, lines, previous
    )
    # 1. Materials: System parts and tool schemas are fixed (with what a recording does not hold
    # of them, by its size); loading failures become transforms.
    fixed = memo.fixed = fixed_part(
        materials.system, tuple(tools), cache, memo.fixed, materials.unrecorded
    )
    manifest.transforms.extend(source_failures(materials))
    manifest.transforms.extend(materials.notes)
    # 2. Images, 3. tool results: only what was appended since the memo's scan is processed.
    scan, moved = scan_conversation(state.conversation, config, offloader, cache, memo.scan)
    memo.scan = scan
    manifest.transforms.extend(moved)
    # 4. Budget: optional material gives way when it would starve the conversation below the
    # tail a compaction keeps.
    previous_summary = summary_tokens(state.summary, cache)
    floor = min(scan.tokens, lines.reserve_tokens) + previous_summary
    material = budget_materials(
        materials.blocks,
        cache,
        excess_without_them=fixed.tokens + floor - lines.input_limit,
        policy=caller.selection_policy,
    )
    # 5. Conversation reduction: light passes, then compaction when due (skipped when nothing is).
    limits = ReductionLimits.of(lines, fixed.tokens + material.total, order.threshold)
    due = reduction_due(
        scan, state.summary, config=config, cache=cache, limits=limits, force=order.force
    )
    reduction = Reduction(scan.conversation, state.summary)
    try:
        if due:
            reduction = await reduce_conversation(
                scan.conversation,
                state.summary,
                config=config,
                cache=cache,
                limits=limits,
                summarizer=summarizer,
                force=order.force,
                instructions=order.instructions,
                conversation_tokens=scan.tokens,
            )
    except PreparationError as exc:
        manifest.transforms.extend(material.transforms)
        exc.manifest = manifest([], "build_failed", str(exc))
        raise
    conversation, summary = reduction.conversation, reduction.summary
    unchanged = conversation is scan.conversation
    conversation_tokens = scan.tokens if unchanged else cache.messages(conversation)
    summary_size = previous_summary if summary is state.summary else summary_tokens(summary, cache)
    history = summary_size + conversation_tokens
    material = material.omit(fixed.tokens + material.total + history - lines.input_limit)
    # 6. Projection: task state, runtime material and the usage notice, then references.
    material = project(
        material,
        conversation,
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
    # 7. Layout: System → conversation → transient → references; schemas travel apart. The
    # provider's own edits act on what is sent (the working state keeps what they cleared).
    sent, sent_tokens = conversation, conversation_tokens
    if config.provider_edits is not None or scan.compactions:
        estimate = fixed.tokens + summary_size + conversation_tokens + material.total
        sent, edited = apply_provider_edits(
            conversation,
            config.provider_edits or ProviderEdits(),
            cache,
            estimate,
            lines.input_limit,
            server_compacted=bool(scan.compactions),
        )
        manifest.transforms.extend(edited)
        if edited:
            unchanged, sent_tokens = False, cache.messages(sent)
    if unchanged:
        items, pairs = scan.items, scan.pairs
    else:
        seen: dict[str, int] = {}
        items = message_items(sent, cache, seen)
        pairs = ToolPairScanner().feed(conversation)
        if sent is conversation:
            # The reduced conversation is already processed (its messages passed stages 2-3):
            # the next step, which appends to it, scans only what it appends, not all of it.
            memo.scan = rescanned(scan, conversation, conversation_tokens, items, seen, pairs)
    layout = lay_out(fixed, summary, summary_size, sent, items, sent_tokens, material, cache)
    # 8. Validation: tool pairs, then budget.
    passed = validate(layout, pairs, purpose, manifest)
    # Tuple equality compares identity first: C speed when nothing was replaced.
    changed = summary is not state.summary or conversation != state.conversation
    new_state = (
        WorkingState(conversation=conversation, summary=summary, revision=state.revision + 1)
        if changed
        else state
    )
    return Preparation(layout.request, passed, new_state, reduction.compaction)


def _grouped(
    legacy: dict[str, Any],
    caller: CallerInputs | None,
    compaction: CompactionOrder | None,
    request_id: str | None,
) -> tuple[CallerInputs | None, CompactionOrder | None, str | None]:
    # The former keywords of `prepare`, folded into their groups with a warning each.
    unknown = sorted(set(legacy) - set(_LEGACY))
    if unknown:
        msg = f"prepare() got an unexpected keyword argument {unknown[0]!r}"
        raise TypeError(msg)
    groups: dict[str, dict[str, Any]] = {"caller": {}, "compaction": {}}
    for name, value in legacy.items():
        group, field = _LEGACY[name]
        kind = "CallerInputs" if group == "caller" else "CompactionOrder"
        new = f"{group}={kind}({field}=...)" if group else "request_id="
        warnings.warn(f"prepare({name}=) is now {new}", DeprecationWarning, stacklevel=3)
        if group:
            groups[group][field] = value
        else:
            request_id = request_id or value
    if groups["caller"]:
        caller = dataclasses.replace(caller or CallerInputs(), **groups["caller"])
    if groups["compaction"]:
        compaction = dataclasses.replace(compaction or CompactionOrder(), **groups["compaction"])
    return caller, compaction, request_id
