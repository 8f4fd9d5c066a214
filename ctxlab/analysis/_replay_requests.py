"""The per-request inputs of a replay besides the conversation: what each request held that the
recording does not, the idle compactions a config orders after long pauses, the batch counted
ahead, and the grade a compaction gets when its retention is first read (`replay`'s parts).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence

from ctxlab.analysis._unrecorded import UnrecordedPart
from ctxlab.config._config import ContextConfig
from ctxlab.exceptions import UsageError
from ctxlab.manifest import Thresholds
from ctxlab.materials import Materials, Unrecorded
from ctxlab.messages import MAX_TOKENS, AssistantMessage, UserMessage, request_start
from ctxlab.messages._state import WorkingState
from ctxlab.pipeline import CompactionOrder, idle_threshold, pauses
from ctxlab.retention import Retention, UserLines, compaction_retention
from ctxlab.tokens import TokenCache
from ctxlab.util._checks import shown

__all__ = ["checked_unrecorded", "count_ahead", "deferred_grade", "idle_orders", "with_unrecorded"]


def count_ahead(messages: Sequence[UserMessage | AssistantMessage], cache: TokenCache) -> int:
    """Count in one batch what the steps will send; return the index the replay starts from."""
    # No request can start with an assistant turn: a recording that begins with one (a
    # continued session, an export that lost the prompt) replays from its first user message
    # that answers no call made before it.
    start = request_start(messages)
    # What the steps will send is known ahead — every message before the last assistant turn
    # (what follows it is never requested) — so it is counted in one batch, or read from the
    # cache's store when another run counted it; each step then finds its messages counted.
    last = max((i for i, m in enumerate(messages) if isinstance(m, AssistantMessage)), default=0)
    cache.count_ahead(messages[start:last])
    return start


def with_unrecorded(
    materials: Materials, unrecorded: UnrecordedPart | Unrecorded | None, index: int
) -> Materials:
    """``materials`` holding what the request at reply ``index`` held unrecorded."""
    if unrecorded is None:
        return materials
    unseen = unrecorded.at(index) if isinstance(unrecorded, UnrecordedPart) else unrecorded
    if unseen == materials.unrecorded:
        return materials
    return dataclasses.replace(materials, unrecorded=unseen)


def checked_unrecorded(value: object) -> UnrecordedPart | Unrecorded | None:
    # A number is a stated size; anything else that is not a part is refused, saying what is.
    if value is None or isinstance(value, UnrecordedPart | Unrecorded):
        return value
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= MAX_TOKENS:
        return Unrecorded(value, "what the recording does not hold", "stated")
    msg = (
        "unrecorded must be an UnrecordedPart (ctxlab.unrecorded_part), an Unrecorded, a whole "
        f"number of tokens a request (0 to {MAX_TOKENS:,}), or None; got {shown(value)}"
    )
    raise UsageError(msg)


def idle_orders(
    messages: Sequence[UserMessage | AssistantMessage],
    config: ContextConfig | None,
    context_window: int,
    max_output_tokens: int | None,
    times: Mapping[int, float] | None,
    lifetime: float | None,
) -> dict[int, CompactionOrder]:
    # The requests that come after a pause longer than the cache's lifetime (`pauses`: from
    # their replies' times), by reply index, with the idle line they compact from
    # (`idle_threshold`); none when the config does not compact while idle.
    if not isinstance(config, ContextConfig) or config.compaction.idle_ratio is None:
        return {}
    if not times or lifetime is None:
        return {}
    lines = Thresholds.compute(config, context_window, max_output_tokens)
    replies = [i for i, m in enumerate(messages) if isinstance(m, AssistantMessage)]
    orders: dict[int, CompactionOrder] = {}
    for index, pause in zip(replies, pauses(times.get(i) for i in replies), strict=True):
        line = idle_threshold(config, lines, pause, lifetime)
        if line is not None:
            orders[index] = CompactionOrder(threshold=line)
    return orders


def deferred_grade(
    messages: Sequence[UserMessage | AssistantMessage],
    start: int,
    index: int,
    before: WorkingState,
    after: WorkingState,
    reader: UserLines,
) -> Callable[[], Retention | None]:
    # The grade of one compaction, run when its retention is first read: the recording's
    # messages up to the request, sliced then (a slice held per compaction would keep the
    # session's messages again for each), and the states around it.
    def grade() -> Retention | None:
        return compaction_retention(messages[start:index], before, after, reader=reader)

    return grade
