"""The time-to-live split of Anthropic's cache writes, as a recording's raw usage gives it.

Anthropic's Messages API reports, beside ``cache_creation_input_tokens``, a ``cache_creation``
object: ``ephemeral_5m_input_tokens`` and ``ephemeral_1h_input_tokens``, the writes of each time
to live (Anthropic's prompt-caching docs, "Tracking cache performance"; Claude Code writes the
object as the API returned it). The two add up to the total. Where they do not — a hand-edited
or damaged file, a proxy that rewrote one count — the split is not trusted: the total stands,
the 1-hour part is kept only when it fits inside it, and the reply is flagged
(``meta["cache_split_flagged"]``, `ConversationBuilder.distrust_split`). Never an error: the
total is what is billed.
(LangChain's copy of the split is read by its format: `ctxlab.io.formats._frameworks`.)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxlab.messages import ProviderUsage
from ctxlab.messages._usage import count_or_none

__all__ = ["cache_split", "split_notes", "split_usage"]


def cache_split(usage: Mapping[str, Any], total: int) -> tuple[int, bool]:
    """The 1-hour cache writes ``usage["cache_creation"]`` records of ``total`` writes, and
    whether its split adds up. No ``cache_creation`` object (older recordings, other
    providers): 0 and trusted — the recording does not say (`split_usage` tells it apart)."""
    split = usage.get("cache_creation")
    if split is None:
        return 0, True
    if not isinstance(split, Mapping):
        return 0, False
    five = _count(split, "ephemeral_5m_input_tokens")
    hour = _count(split, "ephemeral_1h_input_tokens")
    if five is not None and hour is not None and five + hour == total:
        return hour, True
    return (hour if hour is not None and hour <= total else 0), False


def split_usage(usage: ProviderUsage, raw: Mapping[str, Any]) -> tuple[ProviderUsage, bool | None]:
    """``usage`` with its 1-hour cache writes from ``raw`` (the Anthropic usage it was read
    from), and whether the split adds up — None when ``raw`` records no split (see
    `cache_split`; hand both to `ConversationBuilder.cache_split`)."""
    if "cache_creation" not in raw:
        return usage, None
    hour, trusted = cache_split(raw, usage.cache_creation_input_tokens)
    if hour:
        usage = ProviderUsage(
            usage.input_tokens,
            usage.output_tokens,
            usage.cache_read_input_tokens,
            usage.cache_creation_input_tokens,
            hour,
        )
    return usage, trusted


def _count(split: Mapping[str, Any], key: str) -> int | None:
    # Missing: none of that kind; not a count (negative, a fraction, text): not trusted.
    value = split.get(key)
    return 0 if value is None else count_or_none(value)


def split_notes(
    usage: Mapping[int, ProviderUsage], splits: Mapping[int, tuple[ProviderUsage, bool]]
) -> dict[str, Any]:
    """The meta notes of a transcript's recorded splits: ``cache_split_recorded`` (how many
    placed usages recorded one) and ``cache_split_flagged`` (the replies whose split does not
    add up). ``splits`` holds each registered usage by its identity, with whether its split
    adds up: the split travels with the usage object wherever an importer put it."""
    trusted_by_reply: dict[int, bool] = {}
    for index, placed in usage.items():
        held, trusted = splits.get(id(placed), (None, True))
        if held is placed:
            trusted_by_reply[index] = trusted
    notes: dict[str, Any] = {}
    if trusted_by_reply:
        notes["cache_split_recorded"] = len(trusted_by_reply)
    flagged = sorted(i for i, trusted in trusted_by_reply.items() if not trusted)
    if flagged:
        notes["cache_split_flagged"] = flagged
    return notes
