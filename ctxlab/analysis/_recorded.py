"""A recording *as recorded*: the requests the recorded agent itself sent, rebuilt from the file.

A replay (`ctxlab.replay`) asks what ctxlab's pipeline would have sent; this module asks what
the recorded agent did send — the conversation as it grew, restarted from the summary after each
of the session's own compactions (a Claude Code ``/compact``, manual or automatic), exactly as the
agent restarted it. Those are the requests the provider billed, so they are what the bill is
compared with (`ctxlab.calibrate`).

What a recording does not hold — the System prompt and tool schemas of a Claude Code session,
thinking the provider redacted — cannot be rebuilt; `unrecorded_parts` names it, and the
calibration estimates its size from the billed usage.
"""

from __future__ import annotations

import dataclasses
import itertools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ctxlab.analysis._recorded_compactions import (
    RecordedCompaction,
    compactions_by_request,
    recorded_compactions,
)
from ctxlab.analysis._recorded_turns import (
    CLEARED,
    EARLIER_REASONING_DROPPED,
    opens_turn,
    sent_by,
)
from ctxlab.analysis._sent_forms import as_sent, sent_forms
from ctxlab.io._arguments import checked_transcript
from ctxlab.manifest import ContextManifest, ManifestItem, Transform
from ctxlab.manifest._manifest import PlacedPrefix, placed_totals
from ctxlab.materials import Unrecorded
from ctxlab.messages import (
    AssistantMessage,
    ProviderUsage,
    RedactedThinkingBlock,
    ThinkingBlock,
    UserMessage,
    request_start,
)
from ctxlab.pipeline._scan import message_items
from ctxlab.pipeline._stages import unrecorded_item
from ctxlab.tokens import TokenCache
from ctxlab.util._views import Prefix

if TYPE_CHECKING:
    from ctxlab.io._transcript import Transcript

__all__ = [
    "CLEARED",
    "EARLIER_REASONING_DROPPED",
    "RecordedCompaction",
    "RecordedRequest",
    "compactions_by_request",
    "recorded_compactions",
    "recorded_manifest",
    "recorded_requests",
    "unrecorded_parts",
]

Message = UserMessage | AssistantMessage


@dataclass(frozen=True)
class RecordedRequest:
    """One request the recorded agent sent, as far as the file shows it."""

    number: int
    """Its number among the recording's requests, from 0 (the plot's x)."""
    reply: int
    """The message index of the reply it produced."""
    start: int
    """The first message it held (0, or a recorded compaction's summary message)."""
    messages: Sequence[Message]
    """The conversation it sent, from ``start``: the summary alone opens it after a compaction
    (a `Prefix` of its segment's messages: the requests of a segment share one tuple)."""
    segment: int
    """How many recorded compactions came before it."""
    usage: ProviderUsage | None
    """What the provider billed for it, when recorded."""
    model: str | None
    """The model that answered it, when recorded."""
    compactions: tuple[RecordedCompaction, ...] = ()
    """The recorded compactions it is the first request after (usually none or one)."""
    compactions_after: tuple[RecordedCompaction, ...] = ()
    """For the last request only: compactions recorded after it, with no request after them
    (a session that ended on ``/compact``)."""

    @property
    def compaction(self) -> RecordedCompaction | None:
        """The latest of `compactions`, if any."""
        return self.compactions[-1] if self.compactions else None


def recorded_requests(transcript: Transcript) -> list[RecordedRequest]:
    """The requests the recorded agent sent: one per reply after the first user message, each
    holding the conversation since the session start or its latest recorded compaction (and,
    after a microcompact, the placeholder Claude Code sends for each result it cleared; a
    ctxlab recording's results as its requests sent them, cut or offloaded)."""
    checked = checked_transcript(transcript, "recorded_requests")
    messages = as_sent(checked.messages, sent_forms(transcript))
    models = transcript.meta.get("reply_models")
    models = models if isinstance(models, Mapping) else {}
    out: list[RecordedRequest] = []
    start = request_start(messages)
    now = _Segment(start)
    shared: tuple[tuple[int, int, int], tuple[Message, ...]] | None = None
    rank = sum(isinstance(m, AssistantMessage) for m in messages[:start])
    by_reply = compactions_by_request(recorded_compactions(transcript), rank)
    # Where the provider reads reasoning of the current user turn only, each turn's requests
    # share a view with the reasoning of earlier turns dropped (see `without_reasoning`).
    per_turn = transcript.meta.get(EARLIER_REASONING_DROPPED) is True
    openers = [i for i, m in enumerate(messages) if opens_turn(m)] if per_turn else []
    turn = start
    stripped: dict[int, Message] = {}
    for index in range(start, len(messages)):
        message = messages[index]
        if per_turn and opens_turn(message):
            turn = index
        if not isinstance(message, AssistantMessage):
            continue
        pending = tuple(by_reply.get(rank, ()))
        now.follow(pending, messages, index)
        key = (now.number, now.start, max(turn, now.start) if per_turn else now.start)
        if shared is None or shared[0] != key:
            # A new segment (or turn): its messages, as every request of it sends them, once.
            turns = (openers, stripped) if per_turn else None
            shared = (key, sent_by(messages, key, now.opening, now.cleared, turns))
        out.append(
            RecordedRequest(
                number=len(out),
                reply=index,
                start=now.start,
                messages=Prefix(shared[1], index - now.start),
                segment=now.number,
                usage=transcript.usage.get(index),
                model=models.get(str(rank)) or _single_model(transcript),
                compactions=pending,
            )
        )
        rank += 1
    trailing = tuple(c for r, cs in by_reply.items() if r >= rank for c in cs)
    if out and trailing:
        out[-1] = dataclasses.replace(out[-1], compactions_after=trailing)
    return out


@dataclass
class _Segment:
    """Where the recorded requests stand: the segment (compactions so far), the message they
    start at, the summary that opens them and the results a microcompact cleared."""

    start: int
    number: int = 0
    opening: Message | None = None  # the summary message, cut to the summary's blocks
    cleared: set[str] = field(default_factory=set)  # results a microcompact cleared

    def follow(
        self, pending: Sequence[RecordedCompaction], messages: Sequence[Message], index: int
    ) -> None:
        """Move past the compactions between the previous reply and reply ``index`` (this
        request is the first after them)."""
        for compaction in pending:
            self.number += 1
            if compaction.kind == "microcompact":
                self.cleared |= set(compaction.tool_ids)
            elif compaction.index < index and isinstance(
                summary := messages[compaction.index], UserMessage
            ):
                # Only a user message can open a request: a summary placed on a reply (a
                # file that opens with a reply after its boundary, a hand-made meta) is not
                # in the file, and the request goes on from where it was.
                self.start = compaction.index
                self.opening = UserMessage(content=summary.content[compaction.block :])
                self.cleared = set()


def _single_model(transcript: Transcript) -> str | None:
    models = transcript.models
    return models[0] if len(models) == 1 else None


def unrecorded_parts(transcript: Transcript) -> list[str]:
    """What the requests held that the file does not: ``System prompt``, ``tool schemas``,
    ``redacted thinking``, ``user prompts`` (a stream that leaves them out: the importer put a
    stand-in in their place), ``tool calls and results between replies`` (a session file that
    records replies but not what went between them: a stand-in takes its place) — empty when
    the recording holds all of it."""
    checked_transcript(transcript, "unrecorded_parts")
    parts: list[str] = []
    if not transcript.system:
        parts.append("System prompt")
    if not transcript.tools and any(
        getattr(b, "type", "") == "tool_use"
        for m in transcript.messages
        if isinstance(m, AssistantMessage)
        for b in m.content
    ):
        parts.append("tool schemas")
    if any(
        isinstance(b, RedactedThinkingBlock) or (isinstance(b, ThinkingBlock) and not b.thinking)
        for m in transcript.messages
        if isinstance(m, AssistantMessage)
        for b in m.content
    ):
        parts.append("redacted thinking")
    if transcript.meta.get("unrecorded_prompts"):
        parts.append("user prompts")
    if transcript.meta.get("unrecorded_exchanges"):
        parts.append("tool calls and results between replies")
    return parts


AFTER = "after"
"""The target of a ``recorded_compaction`` transform for a compaction after the request (the
session's last), not before it."""


def recorded_transforms(
    compactions: tuple[RecordedCompaction, ...], target: str, billed: int | None
) -> tuple[Transform, ...]:
    """A ``recorded_compaction`` transform per compaction: detail the trigger (``manual``,
    ``auto``, ``auto microcompact``), tokens the recording's own before (its ``preTokens``) and
    the bill of the first request after (``billed``)."""
    return tuple(
        Transform("recorded_compaction", target, c.detail, c.pre_tokens, billed)
        for c in compactions
    )


class RecordedItems:
    """The manifest items of a recording's requests: those of a segment's messages itemized
    once, each request's items a `Prefix` of them (with the running token total), so a long
    recording holds its items once, not once per request — once per unrecorded part a request
    of the segment may lead with (one per model), not once per request."""

    def __init__(self, fixed_items: Sequence[ManifestItem], cache: TokenCache) -> None:
        self.fixed = tuple(fixed_items)
        self.cache = cache
        self._messages: Sequence[Message] | None = None
        self._message_items: tuple[ManifestItem, ...] = ()
        # By lead: the items, their running token total, and each placement's.
        self._built: dict[
            tuple[ManifestItem, ...],
            tuple[tuple[ManifestItem, ...], list[int], dict[str, list[int]]],
        ] = {}

    def of(
        self, request: RecordedRequest, lead: tuple[ManifestItem, ...] = ()
    ) -> tuple[Sequence[ManifestItem], int]:
        """The items of ``request`` (after ``lead``: its unrecorded part's item) and their
        tokens."""
        messages = request.messages
        base = messages.base if isinstance(messages, Prefix) else messages
        if base is not self._messages:
            self._messages = base
            # A segment's messages counted in one batch (on two threads for a large one, as a
            # replay counts ahead), then itemized by look-up: one by one they were most of a
            # long recording's opening.
            self.cache.count_ahead(base)
            self._message_items = tuple(message_items(base, self.cache))
            self._built = {}
        built = self._built.get(lead)
        if built is None:
            items = (*lead, *self.fixed, *self._message_items)
            built = self._built[lead] = (
                items,
                list(itertools.accumulate(i.tokens for i in items)),
                placed_totals(items),
            )
        items, totals, placed = built
        count = len(lead) + len(self.fixed) + len(messages)
        return PlacedPrefix(items, count, placed), totals[count - 1] if count else 0


def recorded_manifest(
    request: RecordedRequest,
    cache: TokenCache,
    *,
    context_window: int,
    previous: ContextManifest | None,
    fixed_items: tuple[ManifestItem, ...] = (),
    notes: tuple[str, ...] = (),
    itemized: RecordedItems | None = None,
    unrecorded: Unrecorded | None = None,
    sent_at: float | None = None,
) -> ContextManifest:
    """The manifest of a recorded request: its messages as items (what a replayed manifest
    shows), led by ``unrecorded`` (what the request held that the file does not, by its size),
    the recorded compaction it follows as a ``recorded_compaction`` transform, and ``notes`` on
    what the file does not record. Its validation is ``budget_exceeded`` (with the reason)
    where the request — as counted with its unrecorded part, or as billed — is larger than
    ``context_window``: it was sent, to a larger window than the one it is shown at. ``itemized`` shares the items of one recording's requests
    (System and tool items included: ``fixed_items`` is then not read). ``sent_at``: when
    the recorded agent sent it (its reply's time on the recording's clock)."""
    itemized = itemized or RecordedItems(fixed_items, cache)
    lead = (unrecorded_item(unrecorded),) if unrecorded is not None else ()
    items, estimated = itemized.of(request, lead)
    fixed = len(lead) + len(itemized.fixed)
    opening = items[fixed].id if len(items) > fixed else ""
    billed = request.usage.total_input_tokens if request.usage else None
    transforms = recorded_transforms(request.compactions, opening, billed) + recorded_transforms(
        request.compactions_after, AFTER, None
    )
    # The request was sent; whether it fits the window it is shown at is another matter: by
    # ctxlab's count with the unrecorded part, or by the bill, whichever is larger.
    size = max(estimated, billed or 0)
    error = (
        f"as recorded, this request held {size:,} tokens ({'billed' if billed == size else 'estimated'})"
        f": more than the {context_window:,}-token window it is shown at — the session, as its "
        "agent ran it, does not fit this window"
        if size > context_window
        else None
    )
    return ContextManifest(
        request_id=f"recorded-{request.number}",
        purpose="reasoning",
        model=request.model or "",
        estimated_input_tokens=estimated,
        input_limit=context_window,
        counting_method=cache.method,
        exact=False,
        items=items,
        transforms=transforms,
        validation="passed" if error is None else "budget_exceeded",
        context_size=context_window,
        previous_items=previous.items if previous is not None else None,
        provider_usage=request.usage,
        error=error,
        notes=notes,
        sent_at=sent_at,
    )
