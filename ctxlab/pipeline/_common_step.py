"""The common step of a session: the last step's request and the messages appended since.

Most steps of a replay or a live session append a few messages to the conversation the last
step sent, and change nothing else: the summary, materials, tools, config and caller are the
same objects, and no stage acts on the new messages (no image over the limit, no result to
truncate or evict, no decode note, no server compaction block, no compaction due). Every stage
would then redo what it did last time and add the new messages' share. `common_result` proves a
step is such a one, with cheap checks that each say why they are enough, and builds the request
and manifest from what the last step left in the caller's `PreparationMemo` (`LastStep`, keyed
by the objects it was made from, never by a step's number); any other step gets None and
`prepare` runs every stage. The two paths give equal results (tests/pipeline/
test_common_step.py prepares generated histories with `ENABLED` on and off).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from ctxlab.config._config import ContextConfig
from ctxlab.manifest import ContextManifest, ManifestItem, Purpose, Thresholds, Transform
from ctxlab.materials import Materials
from ctxlab.messages import TextBlock, UserMessage
from ctxlab.messages._request import ModelRequest, ToolSchema
from ctxlab.messages._state import Summary, WorkingState
from ctxlab.pipeline._compaction import ReductionLimits, compaction_due
from ctxlab.pipeline._layout import (
    Layout,
    ManifestFactory,
    material_item,
    request_head,
    request_of,
    validate,
)
from ctxlab.pipeline._offload import Offloader
from ctxlab.pipeline._prepare_inputs import CallerInputs, CompactionOrder
from ctxlab.pipeline._scan import ConversationScan, appended, plain_arrival
from ctxlab.pipeline._stages import FixedPart, notice_due, source_failures, usage_material
from ctxlab.tokens import MESSAGE_OVERHEAD, TokenCache

if TYPE_CHECKING:
    from ctxlab.pipeline._preparation_memo import PreparationMemo

__all__ = ["ENABLED", "LastStep", "StepInputs", "common_result", "last_step"]

ENABLED = True
"""Whether `prepare` takes the common step's path (switched off only by the test that compares
both paths)."""


@dataclass(slots=True)  # built at every step: a frozen dataclass's __init__ costs more
class StepInputs:
    """What a step is prepared from besides its conversation and summary (all frozen)."""

    materials: Materials
    tools: tuple[ToolSchema, ...]
    config: ContextConfig
    """The checked config (`PreparationMemo.checked`: the same object while the caller's is)."""
    offloader: Offloader | None
    caller: CallerInputs
    plain: bool
    """No compaction order (it may force or move the trigger), no material (stage 4 would
    budget it), no projection (it reads the conversation)."""
    context_window: int | None
    max_output_tokens: int | None
    purpose: Purpose

    @classmethod
    def of(
        cls,
        materials: Materials,
        tools: tuple[ToolSchema, ...],
        config: ContextConfig,
        offloader: Offloader | None,
        caller: CallerInputs,
        compaction: CompactionOrder | None,
        window: tuple[int | None, int | None],
        purpose: Purpose,
    ) -> StepInputs:
        """The inputs of a step (``window``: the context window and output size)."""
        plain = compaction is None and not materials.blocks and caller.projection is None
        return cls(materials, tools, config, offloader, caller, plain, *window, purpose)

    def same(self, other: StepInputs) -> bool:
        """Whether ``other`` holds the same inputs. Identity is enough for the objects: each
        is frozen, and ``other`` (a `LastStep`'s) holds them, so none was freed and its id
        reused by another object."""
        return (
            self.materials is other.materials
            and self.tools is other.tools
            and self.config is other.config
            and self.offloader is other.offloader
            and self.caller is other.caller
            and self.context_window == other.context_window
            and self.max_output_tokens == other.max_output_tokens
            and self.purpose == other.purpose
        )


@dataclass(slots=True)
class LastStep:
    """What the last successful preparation of a memo leaves for the next step's short path."""

    inputs: StepInputs
    summary: Summary | None
    """The summary its candidate state carries (the next state's, when it was committed)."""
    summary_tokens: int
    scan: ConversationScan
    """The scan it left in the memo (its conversation: what its candidate state holds); a
    common step moves it on in place (`appended`)."""
    fixed: FixedPart
    lines: Thresholds
    transforms: tuple[Transform, ...]
    """The materials' own transforms (failed sources, loading notes): recorded first."""
    limits: ReductionLimits
    """Stage 5's lines for these inputs without material (the common step has none)."""
    lead: tuple[UserMessage, ...]
    """The summary's message, sent before the conversation (none without a summary)."""
    head: tuple[ManifestItem, ...]
    """The items before the conversation's (`request_head`: the same at every common step)."""
    plain: bool
    """`_plain` of its config and scan: the same at every common step (the config object is
    the same; a plain arrival holds no server compaction block, so the scan's count stays)."""


def last_step(
    inputs: StepInputs,
    summary: Summary | None,
    summary_tokens: int,
    scan: ConversationScan,
    fixed: FixedPart,
    lines: Thresholds,
) -> LastStep:
    """What a step that passed leaves for a common next one: its inputs, the summary its
    candidate state carries (of ``summary_tokens``), the ``scan`` it left in the memo."""
    materials = inputs.materials
    own = (*source_failures(materials), *materials.notes)
    limits = ReductionLimits.of(lines, fixed.tokens)
    lead, head = request_head(fixed, summary, summary_tokens)
    plain = _plain(inputs.config, scan)
    return LastStep(
        inputs, summary, summary_tokens, scan, fixed, lines, own, limits, lead, head, plain
    )


def common_result(
    state: WorkingState,
    inputs: StepInputs,
    memo: PreparationMemo,
    cache: TokenCache,
    manifest: ManifestFactory,
) -> tuple[ModelRequest, ContextManifest] | None:
    """The request and manifest of this step when it is a common one (see the module), built
    from the memo's last step; None when it is not (nothing is changed then). Raises what
    validation raises, as the full path would (the memo then keeps no last step)."""
    last = memo.last
    if not ENABLED or last is None or not inputs.plain or not inputs.same(last.inputs):
        return None
    config, scan = inputs.config, last.scan
    # Another preparation with this memo since (even one that failed) replaced its scan; the
    # summary is the one whose size the last step kept.
    if memo.scan is not scan or state.summary is not last.summary or not last.plain:
        return None
    conversation, done = state.conversation, scan.conversation
    # Tuple equality checks identity first: C speed when the prefix is the same objects.
    if scan.spent or len(conversation) < len(done) or conversation[: len(done)] != done:
        return None
    arrival = plain_arrival(scan, conversation[len(done) :], config, inputs.offloader, cache)
    if arrival is None:
        return None
    tokens = scan.tokens + arrival.tokens
    history = last.summary_tokens + tokens
    limits = last.limits
    # `reduction_due` when no light pass is configured (`_plain`): the trigger alone decides.
    due = compaction_due(
        config.compaction, len(conversation), limits.fixed_tokens + history, limits.trigger_tokens
    )
    # Over the input limit there is nothing to omit (no material): validation says so, as on
    # the full path.
    if due:
        return None
    memo.last = None  # until validation passed
    # The scan moves on in place: the memo's and the last step's (the same object, checked).
    appended(scan, conversation, tokens, arrival)
    built = _built(state, scan, history, last, inputs, manifest, cache)
    # Everything else the last step kept holds for this one: the same inputs and summary.
    memo.last = last
    return built


def _plain(config: ContextConfig, scan: ConversationScan) -> bool:
    """Whether stage 5 and the provider's edits have nothing to do but what the trigger
    decides: no light pass (they run at every step), no provider edits and no server
    compaction block in the conversation (they change what is sent)."""
    passes = config.compaction
    return (
        passes.truncate_args is None
        and passes.mask is None
        and config.provider_edits is None
        and not scan.compactions
    )


def _built(
    state: WorkingState,
    scan: ConversationScan,
    history: int,
    last: LastStep,
    inputs: StepInputs,
    manifest: ManifestFactory,
    cache: TokenCache,
) -> tuple[ModelRequest, ContextManifest]:
    """Stages 6–8 of the common step, as `prepare` runs them when stage 4 had no material and
    stage 5 left the conversation and summary as they were: stage 6 adds the usage notice or
    nothing (its omission finds nothing optional), and the request is laid out as `lay_out`
    lays it out, from the head the last step kept (no item, no tuple built but these)."""
    fixed, purpose = last.fixed, inputs.purpose
    base = fixed.tokens + history
    manifest.transforms.extend(last.transforms)
    conversation, lead = scan.conversation, last.lead
    estimated = fixed.tokens + (last.summary_tokens if state.summary is not None else 0)
    estimated += scan.tokens
    items: tuple[ManifestItem, ...]
    if notice_due(base, last.lines, purpose, inputs.caller.usage_notice):
        # What `project` gives for the notice alone, placed as `lay_out` places it (rendered
        # once, not once to count and once to send).
        notice = usage_material(base, last.lines, inputs.config.compression_tool_enabled)
        rendered = notice.render()
        tokens = cache.text(rendered) + MESSAGE_OVERHEAD
        sent = (*lead, *conversation, UserMessage(content=(TextBlock(text=rendered),)))
        items = (*last.head, *scan.items, material_item(notice, tokens))
        layout = Layout(request_of(fixed, sent, 1), items, estimated + tokens)
        return layout.request, validate(layout, scan.pairs, purpose, manifest)
    if lead or type(conversation) is not tuple:
        conversation = (*lead, *conversation)
    layout = Layout(request_of(fixed, conversation, 0), (*last.head, *scan.items), estimated)
    return layout.request, validate(layout, scan.pairs, purpose, manifest)
