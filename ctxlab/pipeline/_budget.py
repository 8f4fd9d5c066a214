"""Stage 4: the input limit, and omission of optional material when it does not fit."""

from __future__ import annotations

from collections.abc import Sequence

from ctxlab._config import BudgetPolicy
from ctxlab.manifest import Transform
from ctxlab.materials import Material

__all__ = ["OMISSION_ORDER", "input_limit", "omit_for_budget"]

OMISSION_ORDER = {"memory": 0, "knowledge": 1, "source": 2}
"""Optional material is omitted memory first, then knowledge, then other sources."""


def input_limit(context_window: int | None, policy: BudgetPolicy) -> int:
    """``window − output reservation − safety margin``, capped by ``max_input_tokens``.

    Defaults: the reservation is one eighth of the window, at most 4,096; the margin is 2 % of
    the window; each at least one token. An unknown window uses ``unknown_window_input_limit``.
    """
    if not context_window:
        limit = policy.unknown_window_input_limit
    else:
        reservation = policy.output_reservation or max(1, min(context_window // 8, 4096))
        margin = policy.safety_margin or max(1, context_window * 2 // 100)
        limit = context_window - reservation - margin
    if policy.max_input_tokens:
        limit = min(limit, policy.max_input_tokens)
    return max(limit, 0)


def omit_for_budget(
    materials: Sequence[Material],
    tokens: dict[str, int],
    excess: int,
) -> tuple[list[Material], list[Transform]]:
    """Drop optional material until ``excess`` tokens are freed (or nothing optional is left).

    Order: category (memory → knowledge → source), then lower priority first, then later
    material first. Task state, notices and required blocks are never omitted.
    """
    if excess <= 0:
        return list(materials), []
    candidates = sorted(
        (
            (OMISSION_ORDER[m.category], m.block.priority, -index, m)
            for index, m in enumerate(materials)
            if m.category in OMISSION_ORDER and not m.block.is_required
        ),
        key=lambda entry: entry[:3],
    )
    dropped: set[str] = set()
    transforms: list[Transform] = []
    for *_, material in candidates:
        if excess <= 0:
            break
        freed = tokens[material.item_id]
        dropped.add(material.item_id)
        excess -= freed
        transforms.append(Transform("omitted_for_budget", material.item_id, "", freed, 0))
    return [m for m in materials if m.item_id not in dropped], transforms
