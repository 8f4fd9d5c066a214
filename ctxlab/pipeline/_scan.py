"""Stages 2–3 and the conversation's bookkeeping, done incrementally.

In a live session each request's conversation is the previous one plus a few messages. The scan
of the previous request (processed conversation, token total, manifest items, tool-pair state)
is kept by the preparer (its `PreparationMemo`) and handed back; when the new conversation starts
with exactly that processed conversation, only the new messages are processed. Anything else (a compaction, another config,
an image limit reached) falls back to a full scan, so results never depend on the memo.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, fields
from itertools import repeat
from typing import Any

from ctxlab.config._config import ContextConfig
from ctxlab.manifest import ManifestItem, Transform
from ctxlab.messages import (
    DECODE_NOTE,
    AssistantMessage,
    ToolPairScanner,
    UserMessage,
    tool_names,
)
from ctxlab.pipeline._images import limit_images
from ctxlab.pipeline._offload import Offloader
from ctxlab.pipeline._provider_edits import has_compaction_block
from ctxlab.pipeline._results import truncate_results
from ctxlab.pipeline._tool_results import evict_large_results
from ctxlab.tokens import TokenCache

__all__ = [
    "ConversationScan",
    "PlainArrival",
    "appended",
    "message_items",
    "plain_arrival",
    "rescanned",
    "scan_conversation",
]

Conversation = tuple[UserMessage | AssistantMessage, ...]


@dataclass
class ConversationScan:
    """The processed conversation and what is known about it."""

    key: tuple[Any, ...] = ()
    conversation: Conversation = ()
    tokens: int = 0
    images: int = 0
    items: list[ManifestItem] = field(default_factory=list)
    seen: dict[str, int] = field(default_factory=dict)
    pairs: ToolPairScanner = field(default_factory=ToolPairScanner)
    compactions: int = 0
    """Server compaction blocks in the conversation (counted once per message, as it arrives:
    the request is sent from the latest of them on, see `from_compaction_block`)."""
    spent: bool = False
    """A later scan extended this one's ``items``, ``seen`` and ``pairs`` in place (they are
    its now): a scan from this one again starts over (see `scan_conversation`)."""


def message_items(
    conversation: Sequence[UserMessage | AssistantMessage],
    cache: TokenCache,
    seen: dict[str, int] | None = None,
) -> list[ManifestItem]:
    """Manifest items of messages; ids are content hashes, numbered when a message repeats."""
    return _items(conversation, map(cache.message, conversation), {} if seen is None else seen)


def _items(
    messages: Sequence[UserMessage | AssistantMessage],
    counts: Iterable[int],
    seen: dict[str, int],
) -> list[ManifestItem]:
    """The items of ``messages`` of ``counts`` tokens each (in order), numbered after ``seen``
    (updated): what `message_items` makes, from counts a caller already holds."""
    items: list[ManifestItem] = []
    for message, tokens in zip(messages, counts, strict=True):
        digest = message.content_hash
        count = seen.get(digest, 0)
        seen[digest] = count + 1
        item_id = f"message/{digest}" if not count else f"message/{digest}#{count + 1}"
        items.append(
            _message_item(item_id, tokens, digest, message.role, len(message.content) or 1)
        )
    return items


# `ManifestItem`'s slots, in field order. A frozen dataclass's ``__init__`` sets each field
# through ``object.__setattr__``, which looks its slot up again: an item per message of every
# step, set here through the slots themselves (the same item in half the time). A field added
# to `ManifestItem` fails here, at import, until it is set below too.
_ID, _KIND, _PLACEMENT, _TOKENS, _HASH, _SOURCE, _REVISION, _ROLE, _BLOCKS = (
    getattr(ManifestItem, f.name).__set__ for f in fields(ManifestItem)
)


def _message_item(item_id: str, tokens: int, digest: str, role: str, blocks: int) -> ManifestItem:
    """``ManifestItem(item_id, "message", "conversation", tokens, digest, None, None, role,
    blocks)``, made without its ``__init__`` (see above)."""
    item = object.__new__(ManifestItem)
    _ID(item, item_id)
    _KIND(item, "message")
    _PLACEMENT(item, "conversation")
    _TOKENS(item, tokens)
    _HASH(item, digest)
    _SOURCE(item, None)
    _REVISION(item, None)
    _ROLE(item, role)
    _BLOCKS(item, blocks)
    return item


def _images(conversation: Sequence[UserMessage | AssistantMessage]) -> int:
    return sum(m.image_count for m in conversation if isinstance(m, UserMessage))


_DECODE_PREFIX = DECODE_NOTE.split("{", 1)[0]


def scan_conversation(
    conversation: Conversation,
    config: ContextConfig,
    offloader: Offloader | None,
    cache: TokenCache,
    previous: ConversationScan | None = None,
) -> tuple[ConversationScan, list[Transform]]:
    """Stages 2–3: apply the image limit and tool-result passes; count, itemize and pair-check
    the result. ``previous`` is the scan of the last preparation, reused when it still applies."""
    key = (
        config.max_image_num,
        config.tool_result_limit,
        config.tool_result_eviction,
        id(offloader),
    )
    base = _reusable(previous, key, conversation)
    suffix = conversation[len(base.conversation) :]
    # The step's new messages in one batch (a replay has counted them all ahead: then a look-up).
    cache.count_ahead(suffix)
    transforms: list[Transform] = []
    arrived = _Arrived.of(suffix, config.tool_result_limit, cache)
    images = base.images + arrived.images
    if images > config.max_image_num:
        # The limit is global (the oldest images go first): process everything again.
        base = ConversationScan(key=key)
        suffix, moved = limit_images(conversation, config.max_image_num, offloader)
        transforms.extend(moved)
        arrived = _Arrived.of(suffix, config.tool_result_limit, cache)
        images = arrived.images
    suffix = _results_processed(base, suffix, arrived, config, offloader, cache, transforms)
    seen, items, pairs = _extended(base, base is previous, suffix, map(cache.message, suffix))
    scan = ConversationScan(
        key=key,
        conversation=_joined(base, suffix, conversation),
        tokens=base.tokens + cache.messages(suffix),
        images=images,
        items=items,
        seen=seen,
        pairs=pairs,
        compactions=base.compactions + arrived.compactions,
    )
    return scan, transforms


def _reusable(
    previous: ConversationScan | None, key: tuple[Any, ...], conversation: Conversation
) -> ConversationScan:
    """``previous`` when ``conversation`` extends what it processed under the same ``key`` (and
    no later scan took its lists), else an empty scan to start from."""
    if (
        previous is not None
        and not previous.spent
        and previous.key == key
        and len(conversation) >= len(previous.conversation)
        # Tuple equality checks identity first: C speed when the prefix is the same objects.
        and conversation[: len(previous.conversation)] == previous.conversation
    ):
        return previous
    return ConversationScan(key=key)


@dataclass(frozen=True, slots=True)
class _Arrived:
    """What stages 2–3 must know of the messages a step appends, found in one pass over them
    (a pass per check cost more than the checks: most steps append two or three messages)."""

    images: int
    """Their images (inside tool results included)."""
    decoded: list[Transform]
    """A ``tool_output_decoded`` note for each result whose bytes were not all text."""
    over: bool
    """Whether a user message's results may be over the tool-result limit (its whole count
    is): only then does truncation look at them."""

    compactions: int
    """Their server compaction blocks (`has_compaction_block`): stage 3 leaves assistant turns
    as they are, so they are counted before it."""

    @classmethod
    def of(cls, messages: Conversation, limit: int, cache: TokenCache) -> _Arrived:
        # No counts held: each looked up only where the limit asks (`_checked`).
        return cls(*_checked(messages, None, limit, cache))


def _checked(
    messages: Conversation, counts: Sequence[int] | None, limit: int, cache: TokenCache
) -> tuple[int, list[Transform], bool, int]:
    """The checks of arrived messages, the one place both the full scan (`_Arrived`) and the
    common step (`plain_arrival`) make them, in one pass: their images, their decode notes,
    whether a message with results is over ``limit`` (by its count in ``counts``, one a message,
    when the caller holds them — else looked up, and only until one is over), their server
    compaction blocks."""
    images = compactions = 0
    over, decoded = False, []
    # Strict when counts are given: one missing would leave the messages after it unchecked.
    held: Iterable[int | None] = repeat(None) if counts is None else counts
    for message, tokens in zip(messages, held, strict=counts is not None):
        if not isinstance(message, UserMessage):
            # A server compaction block changes what is sent (`from_compaction_block`).
            compactions += has_compaction_block(message)
            continue
        images += message.image_count
        results = message.tool_results
        if results:
            # A decode note is a transform: output whose bytes were not all text opens with it
            # (see `decoded_output`). Checked here, not in a helper: the common step's calls.
            for result in results:
                if result.text.startswith(_DECODE_PREFIX):
                    note = result.text.split("\n", 1)[0]
                    decoded.append(Transform("tool_output_decoded", result.tool_use_id, note))
            # A result over the limit may be cut.
            if not over:
                over = (cache.message(message) if tokens is None else tokens) > limit
    return images, decoded, over, compactions


def _results_processed(
    base: ConversationScan,
    suffix: Conversation,
    arrived: _Arrived,
    config: ContextConfig,
    offloader: Offloader | None,
    cache: TokenCache,
    transforms: list[Transform],
) -> Conversation:
    """Stage 3 on the messages after ``base`` (``arrived``: what one pass found in them):
    large results evicted to the offloader (when one is given and eviction is on), output that
    was not all text recorded (its decode note), results truncated to the limit. What each
    pass did is appended to ``transforms``."""
    if offloader is not None and _evicting(suffix, config, offloader):
        # Calls of the new results may sit in the processed prefix.
        names = tool_names((*base.conversation, *suffix))
        suffix, moved = evict_large_results(
            suffix, config.tool_result_eviction, offloader, names, cache
        )
        transforms.extend(moved)
        arrived = _Arrived.of(suffix, config.tool_result_limit, cache)  # what eviction left
    transforms.extend(arrived.decoded)
    if not arrived.over:
        return suffix  # no message is over the limit: truncation would cut nothing
    suffix, moved = truncate_results(suffix, config.tool_result_limit, offloader, cache)
    transforms.extend(moved)
    return suffix


def _evicting(suffix: Conversation, config: ContextConfig, offloader: Offloader | None) -> bool:
    """Whether eviction moves a result of ``suffix`` to ``offloader`` (one given, eviction on,
    a result over its size)."""
    eviction = config.tool_result_eviction
    return (
        offloader is not None
        and eviction.enabled
        and any(
            isinstance(m, UserMessage) and m.longest_result_chars > eviction.max_result_chars
            for m in suffix
        )
    )


@dataclass(slots=True)  # one per common step: frozen, its __init__ took three times as long
class PlainArrival:
    """The messages a step appends, when stages 2–3 leave them as they are (`plain_arrival`):
    what the scan needs of them, found in the pass that decided it."""

    counts: list[int]
    """Each message's tokens, in order (their items are made from these, not looked up
    again)."""
    tokens: int
    """Their sum."""
    images: int
    """The scan's images with theirs."""


def plain_arrival(
    scan: ConversationScan,
    suffix: Conversation,
    config: ContextConfig,
    offloader: Offloader | None,
    cache: TokenCache,
) -> PlainArrival | None:
    """What ``suffix``, appended to ``scan``'s conversation (made under ``config`` and
    ``offloader``), adds to the scan when stages 2–3 would leave it as it is and note nothing;
    None when they would act on it — what `scan_conversation` acts on, checked by the full
    scan's own checks (`_checked`), fed the counts taken here (a pass per check, and the counts
    looked up again for the items, were most of a common step's calls)."""
    counts = cache.message_counts(suffix)
    images, decoded, over, compactions = _checked(suffix, counts, config.tool_result_limit, cache)
    images += scan.images
    # The image limit is global: within it, no image moves (over it, older ones would).
    if (
        compactions
        or decoded
        or over
        or images > config.max_image_num
        or (offloader is not None and _evicting(suffix, config, offloader))
    ):
        return None
    return PlainArrival(counts, sum(counts), images)


def appended(
    scan: ConversationScan, conversation: Conversation, tokens: int, arrival: PlainArrival
) -> None:
    """Move ``scan`` on, in place, to ``conversation``: its conversation followed by the
    messages of ``arrival`` (`plain_arrival`), ``tokens`` in all. It stays a whole scan (of
    the longer conversation): its holders — the memo, the last step — hold the new one, and no
    list, id table or pair state is copied or built again (a new scan at every step cost a
    tenth of the common step)."""
    _grown(scan, conversation[len(scan.conversation) :], arrival.counts)
    scan.conversation, scan.tokens, scan.images = conversation, tokens, arrival.images


def _joined(
    base: ConversationScan, suffix: Conversation, conversation: Conversation
) -> Conversation:
    """The processed conversation: ``base``'s followed by the processed ``suffix``, or the input
    ``conversation`` itself when processing replaced nothing."""
    if not base.conversation:
        return suffix
    if suffix == conversation[len(base.conversation) :]:
        # Nothing new was replaced (identity first, at C speed): the input is the result.
        return conversation
    return (*base.conversation, *suffix)


def _extended(
    base: ConversationScan, handed_on: bool, suffix: Conversation, counts: Iterable[int]
) -> tuple[dict[str, int], list[ManifestItem], ToolPairScanner]:
    """The ids, items and pair state of ``base`` followed by ``suffix``, whose messages are of
    ``counts`` tokens each."""
    if handed_on:
        # The memo's scan is extended in place and handed on: copying its lists, ids and pair
        # state at every step would cost time in the conversation's length, not the step's.
        base.spent = True
        return _grown(base, suffix, counts)
    seen: dict[str, int] = {}  # a scan from the start
    return seen, _items(suffix, counts, seen), ToolPairScanner().feed(suffix)


def _grown(
    base: ConversationScan, suffix: Conversation, counts: Iterable[int]
) -> tuple[dict[str, int], list[ManifestItem], ToolPairScanner]:
    """``base``'s ids, items and pair state extended in place by ``suffix`` (of ``counts``
    tokens each): what a scan that goes on from ``base`` appends (`_extended`, `appended`)."""
    base.items.extend(_items(suffix, counts, base.seen))
    return base.seen, base.items, base.pairs.feed(suffix)


def rescanned(
    scan: ConversationScan,
    conversation: Conversation,
    tokens: int,
    items: list[ManifestItem],
    seen: dict[str, int],
    pairs: ToolPairScanner,
) -> ConversationScan:
    """The scan of ``conversation``, a reduction of ``scan``'s (a compaction's kept tail, masked
    or pruned messages): its messages were processed under the same key, and processing them
    again changes none (a cut result is within the limit, the images within theirs), so this is
    what a full scan of it would find. ``items``, ``seen`` and ``pairs`` become the scan's."""
    return ConversationScan(
        key=scan.key,
        conversation=conversation,
        tokens=tokens,
        images=_images(conversation),
        items=items,
        seen=seen,
        pairs=pairs,
        compactions=sum(map(has_compaction_block, conversation)),
    )
