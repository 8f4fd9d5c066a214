"""Stage 4: omission of optional material when it does not fit (the input limit itself is a
`Thresholds` line)."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from ctxlab.exceptions import UsageError
from ctxlab.manifest import Transform
from ctxlab.materials import Material

__all__ = [
    "OMISSION_ORDER",
    "SelectionPolicy",
    "default_order",
    "omit_for_budget",
    "policy_order",
]

OMISSION_ORDER = {"memory": 0, "knowledge": 1, "source": 2}
"""Optional material is omitted memory first, then knowledge, then other sources."""


SelectionPolicy = Callable[[Sequence[Material]], Sequence[str]]
"""000's ``contextSelectionPolicy``: given the optional material, the ids to omit, first first.
Only the ids it returns may be omitted; unknown or repeated ids, required material and System
parts are refused with a `UsageError`."""


def default_order(materials: Sequence[Material]) -> list[Material]:
    """The omission order of optional material: category (memory → knowledge → source), then
    lower priority first, then later material first."""
    ranked = sorted(
        (
            (OMISSION_ORDER[m.category], m.block.priority, -index, m)
            for index, m in enumerate(materials)
            if m.category in OMISSION_ORDER and not m.block.is_required
        ),
        key=lambda entry: entry[:3],
    )
    return [entry[-1] for entry in ranked]


def policy_order(materials: Sequence[Material], policy: SelectionPolicy) -> list[Material]:
    """The omission order ``policy`` returns, checked against 000's rules."""
    optional = {m.item_id: m for m in materials if m.category in OMISSION_ORDER}
    chosen = list(policy(tuple(optional.values())))
    problems: list[str] = []
    if len(set(chosen)) != len(chosen):
        problems.append("it returned an id twice")
    for item_id in chosen:
        material = optional.get(item_id)
        if item_id.startswith("system/"):
            problems.append(f"{item_id!r} is a System instruction")
        elif material is None:
            problems.append(f"{item_id!r} is not optional material of this request")
        elif material.block.is_required:
            problems.append(f"{item_id!r} is required material")
    if problems:
        msg = (
            f"the context selection policy is invalid: {'; '.join(problems[:3])}. Return ids of "
            f"the optional material it is given ({', '.join(optional) or 'none'}), each once"
        )
        raise UsageError(msg)
    return [optional[item_id] for item_id in chosen]


def omit_for_budget(
    materials: Sequence[Material],
    tokens: dict[str, int],
    excess: int,
    policy: SelectionPolicy | None = None,
) -> tuple[list[Material], list[Transform]]:
    """Drop optional material until ``excess`` tokens are freed (or nothing optional is left).

    Order: ``policy``'s when given, else `default_order`. Task state, notices and required
    blocks are never omitted.
    """
    if excess <= 0:
        return list(materials), []
    candidates = default_order(materials) if policy is None else policy_order(materials, policy)
    dropped: set[str] = set()
    transforms: list[Transform] = []
    for material in candidates:
        if excess <= 0:
            break
        freed = tokens[material.item_id]
        dropped.add(material.item_id)
        excess -= freed
        transforms.append(Transform("omitted_for_budget", material.item_id, "", freed, 0))
    return [m for m in materials if m.item_id not in dropped], transforms
