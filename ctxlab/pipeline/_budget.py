"""Stage 4: omission of optional material when it does not fit (the input limit itself is a
`Thresholds` line)."""

from __future__ import annotations

from collections.abc import Sequence

from ctxlab.manifest import Transform
from ctxlab.materials import Material

__all__ = ["OMISSION_ORDER", "omit_for_budget"]

OMISSION_ORDER = {"memory": 0, "knowledge": 1, "source": 2}
"""Optional material is omitted memory first, then knowledge, then other sources."""


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
