"""The what-if's tables beside its comparison: retention by category, every step with its
cost, what two configs sent differently at one request, and the comparison's tokens sent in
the provider's tokens."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from ctxlab.analysis._breakeven_of import paid_back_count, run_break_evens
from ctxlab.analysis._calibration import CalibrationFit, calibrated_total
from ctxlab.analysis._comparison import HEADLINE_COLUMNS, comparison_row, headline_row
from ctxlab.analysis._replay import replay_row
from ctxlab.analysis._unrecorded import unrecorded_note
from ctxlab.manifest import item_rows
from ctxlab.messages._request import ModelRequest
from ctxlab.models._demo import MADE_UP_USAGE, made_up_usage
from ctxlab.retention._next_use import next_use_columns
from ctxlab.tokens import counting_note

if TYPE_CHECKING:
    import pandas as pd

    from ctxlab.analysis._whatif import ConfigRun, WhatIf
    from ctxlab.io._transcript import Transcript

__all__ = [
    "DIFF_COLUMNS",
    "NEXT_USE_COLUMNS",
    "add_calibrated",
    "add_next_use",
    "comparison_frame",
    "cumulative_costs",
    "diff_frame",
    "next_use_frame",
    "retention_frame",
    "steps_frame",
]

DIFF_COLUMNS = ("side", "kind", "source", "what", "tokens", "placement", "role", "id")
"""The columns of `WhatIf.diff`, in order."""


NEXT_USE_COLUMNS = ("config", "step", "items", "held", "share", "floor", "fresh", "lost")
"""The columns of `WhatIf.next_use`, in order."""


def next_use_frame(runs: Iterable[ConfigRun], transcript: Transcript) -> pd.DataFrame:
    """One row per (config, compaction): the items the recorded agent's next replies used that
    appeared before it, how many the request the config built holds, the share, the floor (the
    latest message alone), the fresh items left out and the lost ones (`WhatIf.next_use`)."""
    import pandas as pd

    rows = [
        {
            "config": run.name,
            "step": graded.step,
            "items": len(graded.items),
            "held": sum(graded.held),
            "share": graded.share,
            "floor": graded.floor,
            "fresh": len(graded.fresh),
            "lost": tuple(i.text for i in graded.lost),
        }
        for run in runs
        for graded in run.next_uses(transcript.system)
    ]
    return pd.DataFrame(rows, columns=NEXT_USE_COLUMNS)


def add_next_use(frame: pd.DataFrame, runs: Iterable[ConfigRun], transcript: Transcript) -> None:
    """Add ``next_use_retention`` and ``next_use_floor`` to the what-if's ``frame`` (one row
    per run, in order): each run's mean share over its compactions of what the recorded agent
    used next, and the same for the latest message alone (`ctxlab.retention._next_use`)."""
    columns = [next_use_columns(r.next_uses(transcript.system)) for r in runs]
    for name in ("next_use_retention", "next_use_floor"):
        frame[name] = _floats(c[name] for c in columns)


def add_paid_back(frame: pd.DataFrame, runs: Iterable[ConfigRun]) -> None:
    """Add ``compactions_paid_back`` to the what-if's ``frame`` (one row per run, in order):
    how many of each run's compactions paid back their break, "2 of 3" (`run_break_evens`)."""
    import pandas as pd

    # Not for a replay that stopped part way: its savings stop with it.
    frame["compactions_paid_back"] = pd.Series(
        [None if r.error else paid_back_count(run_break_evens(r)) for r in runs],
        index=frame.index,
        dtype=object,  # None where there is no count (pandas' text dtype would make it NaN)
    )


def _floats(values: Iterable[float | None]) -> list[float]:
    # None as NaN: a config with no graded compaction has no figure.
    return [math.nan if v is None else v for v in values]


def retention_frame(runs: Iterable[ConfigRun]) -> pd.DataFrame:
    """Retention by config and category, summed over the compactions (`WhatIf.retention`)."""
    import pandas as pd

    rows: list[dict[str, Any]] = []
    keys = ("total", "kept", "in_summary", "in_pinned", "in_tail")
    for run in runs:
        sums: dict[str, list[int]] = {}
        for step in run.steps:
            kept = step.compaction.retention if step.compaction is not None else None
            for row in kept.rows() if kept is not None else ():
                acc = sums.setdefault(row["category"], [0] * len(keys))
                for n, key in enumerate(keys):
                    acc[n] += row[key]
        for category, (total, kept_, in_summary, in_pinned, in_tail) in sums.items():
            rows.append(
                {
                    "config": run.name,
                    "category": category,
                    "items": total,
                    "kept": kept_ / total,
                    "in_summary": in_summary / total,
                    "in_pinned": in_pinned / total,
                    "control": in_tail / total,
                }
            )
    columns = ["config", "category", "items", "kept", "in_summary", "in_pinned", "control"]
    return pd.DataFrame(rows, columns=columns)


def steps_frame(runs: Iterable[ConfigRun], *, grade: bool = True) -> pd.DataFrame:
    """One row per (config, reasoning request) with cache and cost (`WhatIf.steps`); ``grade``
    False takes a run's steps as graded so far (none: retention empty) rather than grading."""
    import pandas as pd

    rows: list[dict[str, Any]] = []
    for run in runs:
        reasoning = [c for c in run.costs if c.purpose != "summary"]
        spent = _step_costs(run)
        steps = run.steps if grade or run.graded else run.prepared
        for index, (step, cost) in enumerate(zip(steps, reasoning, strict=False)):
            step_cost, cumulative = spent[index]
            rows.append(
                {
                    "config": run.name,
                    **replay_row(step, index),
                    "cache_read": cost.cache_read,
                    "cache_write": cost.cache_write,
                    "uncached": cost.uncached,
                    "cost": step_cost,
                    "cumulative_cost": cumulative,
                }
            )
    return pd.DataFrame(rows)


def diff_frame(first: ConfigRun, second: ConfigRun, step: int) -> pd.DataFrame:
    """The items one run sent at ``step`` that the other did not, both ways (`WhatIf.diff`),
    each readable: its kind, source, ``what`` it is (as the Manifest panel names it), tokens,
    placement, role and id."""
    import pandas as pd

    rows: list[dict[str, Any]] = []
    for mine, other in ((first, second), (second, first)):
        # Prepared requests: a diff reads items, never retention (nothing waits for the grader).
        ours, theirs = mine.prepared[step], other.prepared[step]
        known = {(i.id, i.content_hash) for i in theirs.manifest.items}
        # A replay keeps the state, not the request: its messages describe the items.
        request = ModelRequest(system="", messages=ours.state.conversation)
        rows.extend(
            {
                "side": f"only in {mine.name}",
                "kind": row.kind,
                "source": item.source_id or item.role or "",
                "what": row.label,
                "tokens": item.tokens,
                "placement": item.placement,
                "role": item.role,
                "id": item.id,
            }
            for item, row in zip(
                ours.manifest.items, item_rows(ours.manifest, request), strict=True
            )
            if (item.id, item.content_hash) not in known
        )
    return pd.DataFrame(rows, columns=DIFF_COLUMNS)


def cumulative_costs(run: ConfigRun) -> list[float]:
    """USD spent up to each reasoning request of ``run``, the summary calls a compaction made
    counted at its request (the step frame's ``cumulative_cost``): priced, never graded."""
    return [total for _, total in _step_costs(run)]


def _step_costs(run: ConfigRun) -> list[tuple[float, float]]:
    # Each reasoning request's cost with its summary calls, and the running sum.
    extra = _summary_costs_by_step(run)
    out: list[tuple[float, float]] = []
    cumulative = 0.0
    reasoning = (c for c in run.costs if c.purpose != "summary")
    for index, (_, cost) in enumerate(zip(run.prepared, reasoning, strict=False)):
        step_cost = cost.cost + extra.get(index, 0.0)
        cumulative += step_cost
        out.append((step_cost, cumulative))
    return out


def _summary_costs_by_step(run: ConfigRun) -> dict[int, float]:
    out: dict[int, float] = {}
    index = 0
    for cost in run.costs:
        if cost.purpose == "summary":
            out[index] = out.get(index, 0.0) + cost.cost
        else:
            index += 1
    return out


def add_calibrated(
    frame: pd.DataFrame, fit: CalibrationFit, runs: Iterable[ConfigRun], *, made_up: bool
) -> None:
    """Add ``tokens_sent_calibrated`` to the what-if's ``frame`` (one row per run, in order):
    each run's requests in the provider's tokens by ``fit`` (summary calls included where
    they are priced: `ConfigRun.sent`), and its note in ``attrs["calibration"]``
    (``made_up``: the recording's usage was made up by the demo model)."""
    # The fit adds its own unrecorded part to ctxlab's count of the rest.
    frame["tokens_sent_calibrated"] = [
        # A replay that failed part way is not summed (see `comparison_row`); the same
        # requests as tokens_sent, summary calls included (`calibrated_total`).
        math.nan if run.error else calibrated_total(fit, run.sent)
        for run in runs
    ]
    usage = MADE_UP_USAGE if made_up else "this recording's usage"
    frame.attrs["calibration"] = (
        "tokens_sent_calibrated is in the provider's tokens, over the same requests as "
        "tokens_sent (summary calls included): ctxlab's estimates less the unrecorded "
        f"part times {fit.ratio:.3f}, plus the unrecorded fixed part "
        f"({fit.fixed[min(fit.fixed)]:,.0f} a request that carries it), both measured on "
        f"{usage} (ctxlab.calibrate)"
    )


def headline_frame(runs: Iterable[ConfigRun], over_limit_billed: Any) -> pd.DataFrame:
    """`WhatIf.headline`: per config, the figures that need neither the grader nor the pricer
    (`HEADLINE_COLUMNS`), ``over_limit_billed(name)`` giving that column."""
    import pandas as pd

    rows = [
        {"config": run.name, **headline_row(run), "over_limit_billed": over_limit_billed(run.name)}
        for run in runs
    ]
    frame = pd.DataFrame(rows, columns=["config", *HEADLINE_COLUMNS])
    return frame.set_index("config").astype({"failed_at": "Int64"})


def comparison_frame(what: WhatIf) -> pd.DataFrame:
    """`WhatIf.table`: one row per config, with its ``attrs``."""
    import pandas as pd

    # A reference that costs nothing (a free model) makes no ratio: NaN, not a 100% saving.
    feasible = sum(c.cost for c in what.baseline)
    unlimited = sum(c.cost for c in what.no_compaction)
    rows = [
        comparison_row(run, feasible, unlimited, what.price, what.over_limit_billed(run.name))
        for run in what.runs.values()
    ]
    frame = pd.DataFrame(rows).set_index("config").astype({"failed_at": "Int64"})
    add_paid_back(frame, what.runs.values())
    frame.attrs["pricing"] = what.pricing
    frame.attrs["cache_clock"] = what.cache_clock
    frame.attrs["counting"] = counting_note(what.model, what.cache.method)
    frame.attrs["verdict"] = what.verdict()
    add_next_use(frame, what.runs.values(), what.transcript)
    calibration = what.calibration
    fit = calibration.fit() if calibration is not None else None
    if fit is not None:
        # The recording billed its requests: the tokens sent in the provider's tokens too.
        made_up = made_up_usage(what.transcript.meta)
        add_calibrated(frame, fit, what.runs.values(), made_up=made_up)
    # What the recording does not hold of each request: its size and how it is known, or
    # that every figure excludes it.
    unseen = unrecorded_note(what.transcript, what.unrecorded)
    if unseen:
        frame.attrs["unrecorded"] = unseen
    return frame
