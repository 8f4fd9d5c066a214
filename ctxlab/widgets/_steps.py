"""The Lab's record of a session: one row per reasoning request, built from the agent's events.

Pure Python (no widgets), so it is cheap to test and its per-step cost is measurable on its own.
Columns are kept as growing lists; the DataFrame is built only when asked for.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ctxlab.agent import (
    CompactionEvent,
    ContextBuildEvent,
    Event,
    ModelResponseEvent,
)
from ctxlab.analysis._breakeven import BreakEven, CompactionAt, break_evens
from ctxlab.analysis._cache_clock import manifest_times
from ctxlab.analysis._calibration import Calibration, CalibrationPoint, bill_flag, fit_points
from ctxlab.analysis._cost import (
    CacheRules,
    Price,
    RequestCost,
    cache_rules_for,
    costs_of_manifests,
    price_for,
    pricing_note,
)
from ctxlab.analysis._recorded import AFTER
from ctxlab.analysis._usage_cost import PricedFrom, billed_costs
from ctxlab.exceptions import UsageError
from ctxlab.manifest import (
    STEP_COLUMNS,
    ContextManifest,
    StepRow,
    step_row,
    usage_columns,
)
from ctxlab.messages import MAX_TOKENS
from ctxlab.messages._request import ModelRequest
from ctxlab.pipeline._record import CompactionRecord
from ctxlab.retention import retention_columns
from ctxlab.util._checks import instance_of, shown, whole_number
from ctxlab.widgets._step_marks import CompactionMark, step_number

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["STEP_COLUMNS", "CompactionMark", "StepLog", "step_number"]

REASONING = ("reasoning", "recovery")


@dataclass
class StepLog:
    """Rows of reasoning requests and the compactions between them."""

    rows: list[StepRow] = field(default_factory=list)
    """One row per reasoning request; a replayed compaction's retention columns are filled
    when the frame is asked for (`graded`)."""
    manifests: list[ContextManifest] = field(default_factory=list)
    requests: list[ModelRequest | None] = field(default_factory=list)
    sent: list[ContextManifest] = field(default_factory=list)
    """Every request in the order it was sent, summary calls included (what the costs price)."""
    compactions: list[CompactionMark] = field(default_factory=list)
    calibration: Calibration | None = None
    """Estimates reconciled with the bill (see `calibrate`); fills the ``calibrated`` column."""
    segmented: bool = False
    """Whether the recorded compactions restart the requests (a recording *as recorded*): the
    calibration's fixed part is then the one measured after the latest, and each row's
    ``calibrated`` is the request's forecast out of sample (from the requests before it)."""
    _forecasts: dict[int, int | None] = field(default_factory=dict)
    _recorded: list[int] = field(default_factory=list)
    usage_changes: list[int] = field(default_factory=list)
    """The rows whose usage columns a response filled, in order (what a view redraws)."""
    model: str = ""
    """The model the costs are priced as: a recording's recorded model (its replayed requests
    are ctxlab's); empty: the first request's model."""
    price: Price | None = None
    """A price to use instead of the model's (`price_for`): a model no table knows is
    unpriced, its costs NaN, unless one is given."""
    billed: bool = False
    """Whether each request's provider usage is its own bill (a recording shown as recorded):
    a request's cost is then that usage at its model's price, the cache model's only where no
    usage was recorded (the frame's ``priced_from``: ``usage`` or ``model``,
    `ctxlab.analysis._usage_cost.billed_costs`)."""
    calibration_revision: int = 0
    """Counts `calibrate` calls: every row's ``calibrated`` changed with each."""
    sites: list[tuple[str, bool]] = field(default_factory=list)
    """Where each of a recording's own compactions fired against the threshold its tool
    documents, in order: the sentence and whether it is far (`ctxlab.compaction_sites`)."""
    clock: dict[str, float] = field(default_factory=dict)
    """When each request was sent, by request id, for requests whose manifest does not say
    (``sent_at``): a recording's, on its own clock (`ctxlab.sources.ReplaySession`)."""
    """The recorded compactions up to and including each row (kept as rows are added: the
    segment of a row, without a pass over the rows before it)."""
    _by_request_id: dict[str, int] = field(default_factory=dict)
    _ungraded: dict[int, CompactionRecord] = field(default_factory=dict)
    """The rows whose compaction's retention is not in the row yet (`graded`)."""
    _frame: Any = None
    _last_purpose: str = ""
    _priced: tuple[tuple[int, ...], list[RequestCost]] | None = None
    _evens: tuple[tuple[int, ...], list[BreakEven]] | None = None

    def feed(self, event: Event) -> int | None:
        """Take one event; returns the step it added or changed (None when nothing changed)."""
        if isinstance(event, ContextBuildEvent):
            manifest = event.manifest
            self._last_purpose = manifest.purpose
            if manifest.purpose == "summary":
                self.sent.append(manifest)  # priced with the step it belongs to
                self._frame = None
            if manifest.purpose not in REASONING:
                return None
            return self._add(event, manifest)
        if isinstance(event, ModelResponseEvent):
            index = self._by_request_id.get(event.request_id)
            if index is None or event.usage is None:
                return None
            row = self.rows[index]
            # (mypy does not take a parent TypedDict as part of its child: the ignore.)
            row.update(usage_columns(event.usage, row["total"]))  # type: ignore[typeddict-item]
            row["calibration_flag"] = bill_flag(row["calibrated"], row["usage_total_input"])
            self.usage_changes.append(index)
            answered = self.manifests[index]
            # The engine's manifest when it has one: the provider's edits and what it billed.
            known = event.manifest
            self.manifests[index] = (
                known
                if known is not None and known.request_id == answered.request_id
                else answered.with_usage(event.usage)
            )
            # The answered request is near the end of what was sent: looked for from there.
            for position in range(len(self.sent) - 1, -1, -1):
                if self.sent[position] is answered:
                    self.sent[position] = self.manifests[index]
                    break
            self._frame = None
            return index
        if isinstance(event, CompactionEvent):
            # The event follows the context_build of the preparation that compacted: a reasoning
            # request's own compaction belongs to its row; a manual or agentic one falls between
            # that row and the next.
            step = len(self.rows) - 1
            within = self._last_purpose in REASONING and step >= 0
            self.compactions.append(
                CompactionMark(
                    step,
                    event.trigger,
                    event.method,
                    event.tokens_before,
                    event.tokens_after,
                    within,
                )
            )
            if within:
                self.rows[step]["compaction"] = event.method
                self.rows[step]["compacted_messages"] = event.record.messages_compacted
                # Graded when the frame is asked for: a replay's record grades when its
                # retention is read, and the plot never reads it.
                self._ungraded[step] = event.record
                self._frame = None
            return step
        return None

    def calibrate(self, calibration: Calibration | None, *, segmented: bool = False) -> None:
        """Fill the ``calibrated`` column of every row (and of rows to come) from
        ``calibration``."""
        if calibration is not None:
            instance_of(calibration, Calibration, "calibration", "a Calibration or None")
        self.calibration, self.segmented = calibration, segmented
        self._forecasts = (
            {int(r["step"]): r["forecast"] for r in calibration.rows}  # type: ignore[call-overload, misc]
            if calibration is not None and segmented
            else {}
        )
        self.calibration_revision += 1
        for step in range(len(self.rows)):
            self._calibrate_row(step)
        self._frame = None

    def fit_calibration(self) -> Calibration:
        """Fit a calibration on this log's own requests with usage (a live agent's)."""
        points = [
            CalibrationPoint(
                row["step"],
                row["total"] - row["unrecorded"],
                row["usage_total_input"],
                self._segment(step),
                self.manifests[step].model,
            )
            for step, row in enumerate(self.rows)
            if row["usage_total_input"] and row["total"] >= 0
        ]
        return fit_points(points)

    def _segment(self, step: int) -> int:
        return self._recorded[step] if self.segmented else 0

    def _calibrate_row(self, step: int) -> None:
        row = self.rows[step]
        row["calibrated"] = self._calibrated(step)
        row["calibration_flag"] = bill_flag(row["calibrated"], row["usage_total_input"])

    def _calibrated(self, step: int) -> int | None:
        row = self.rows[step]
        if self.calibration is None or row["total"] < 0:
            return None
        if self.segmented:
            # The recorded requests themselves: each forecast by a fit that never saw it.
            return self._forecasts.get(step)
        model = self.manifests[step].model or None
        # The calibration adds its own unrecorded part to ctxlab's count of the rest.
        counted = row["total"] - row["unrecorded"]
        return self.calibration.calibrated(counted, self._segment(step), model)

    def flags(self) -> list[tuple[int, str]]:
        """The requests whose calibrated estimate must not be read beside their bill unsaid,
        with why (`ctxlab.analysis._calibration.bill_flag`: a bill of 0, an estimate more than
        `OFF_FACTOR` times off): ``(step, reason)`` in request order."""
        return [(r["step"], r["calibration_flag"]) for r in self.rows if r["calibration_flag"]]

    @property
    def recorded_compactions(self) -> int:
        """How many of the rows hold a recorded compaction."""
        return self._recorded[-1] if self._recorded else 0

    def _add(self, event: ContextBuildEvent, manifest: ContextManifest) -> int:
        step = len(self.rows)
        self.rows.append(step_row(manifest, step=step, call=event.call))
        before = self._recorded[-1] if self._recorded else 0
        self._recorded.append(before + bool(self.rows[step]["recorded_compaction"]))
        self.manifests.append(manifest)
        self.sent.append(manifest)
        self.requests.append(event.request)
        self._by_request_id[manifest.request_id] = step
        if self.calibration is not None:
            self._calibrate_row(step)
        self._frame = None
        return step

    def manifest(self, step: int) -> ContextManifest:
        """The manifest of request ``step`` (-1: the latest); `UsageError` naming the requests
        there are when there is no such request."""
        count = len(self.rows)
        step = step_number(step)
        if not -count <= step < count:
            where = (
                f"requests 0 to {count - 1} (or -1 for the latest)" if count else "no request yet"
            )
            msg = f"no request {shown(step)}: this Lab has {where}"
            raise UsageError(msg)
        return self.manifests[step]

    def graded(self) -> list[StepRow]:
        """`rows` with every compaction's ``retention`` and ``retention_control`` filled in
        (graded now if its record grades on first read, as a replay's does; a live agent's
        records come graded): what the frame shows. ``rows`` alone never waits for a grader."""
        for step, record in sorted(self._ungraded.items()):
            kept = retention_columns(record)
            self.rows[step]["retention"] = kept["retention"]
            self.rows[step]["retention_control"] = kept["retention_control"]
        self._ungraded.clear()
        return self.rows

    def frame(self) -> pd.DataFrame:
        """One row per reasoning request (cached until the next change), every compaction
        graded (`graded`)."""
        if self._frame is None:
            import pandas as pd

            self.graded()

            self._frame = pd.DataFrame(self.rows, columns=list(STEP_COLUMNS))
            costs, priced_from = self._costs()
            self._frame["cost"] = costs
            self._frame["cumulative_cost"] = list(itertools.accumulate(costs))
            self._frame["priced_from"] = priced_from
        frame: pd.DataFrame = self._frame
        return frame

    def pricing(self) -> tuple[str, Price, CacheRules]:
        """The model the costs are priced as, its price and its provider's cache rules (an
        unknown model: `Price.unknown`, every cost NaN)."""
        model = self.model or (self.sent[0].model if self.sent else "")
        return model, self.price or price_for(model), cache_rules_for(model, self.price)

    @property
    def pricing_note(self) -> str:
        """What the costs are priced as, or that they are unpriced (`pricing_note`)."""
        return pricing_note(*self.pricing())

    def _costs(self) -> tuple[list[float], list[PricedFrom]]:
        # Each step's request plus the summary calls made since the previous step; a step is
        # priced from usage when all of it was.
        per_step = [0.0] * len(self.rows)
        sources: list[PricedFrom] = ["model"] * len(self.rows)
        mixed = [False] * len(self.rows)
        step = 0
        model, _, rules = self.pricing()
        if self.billed:
            priced = billed_costs(self.sent, self.price, rules, model=model, times=self.clock)
            costs = [p.cost for p in priced]
            origins: list[PricedFrom] = [p.priced_from for p in priced]
        else:
            costs = self._sent_costs()
            origins = ["model"] * len(costs)
        for manifest, cost, origin in zip(self.sent, costs, origins, strict=True):
            # (Summary calls after the last step have no step to be added to.)
            if step >= len(per_step):
                break
            per_step[step] += cost.cost
            mixed[step] |= origin == "model"
            if manifest.purpose == "summary":
                continue
            sources[step] = "model" if mixed[step] else "usage"
            step += 1
        return per_step, sources

    def _key(self) -> tuple[int, ...]:
        # What the costs and break-evens depend on, each only ever growing.
        return len(self.sent), len(self.usage_changes), len(self.compactions), len(self.clock)

    def _sent_costs(self) -> list[RequestCost]:
        """Every sent request priced (kept until a request, a bill or a compaction arrives)."""
        key = self._key()
        if self._priced is None or self._priced[0] != key:
            _, price, rules = self.pricing()
            self._priced = key, costs_of_manifests(self.sent, price, rules, times=self.clock)
        return self._priced[1]

    def break_evens(self) -> list[BreakEven]:
        """Whether each compaction paid back its break (`BreakEven`): ctxlab's, and a
        recording's own where its requests are shown as recorded — priced as `frame`'s costs,
        each request timed as they are (its ``sent_at``, else `clock`)."""
        key = self._key()
        if self._evens is not None and self._evens[0] == key:
            return self._evens[1]
        sent = [n for n, m in enumerate(self.sent) if m.purpose in REASONING]
        compactions = [
            CompactionAt(sent[row], mark.tokens_before - mark.tokens_after, mark.label)
            for mark in self.compactions
            if (row := mark.step + (not mark.within)) < len(sent) and row >= 0
        ]
        compactions += [
            CompactionAt(sent[row], None, f"recorded {t.detail or 'compaction'}")
            for row, manifest in enumerate(self.manifests)
            if self.rows[row]["call"] == "recorded"
            for t in manifest.transforms
            if t.kind == "recorded_compaction" and t.target != AFTER
        ]
        evens: list[BreakEven] = []
        if compactions:
            _, price, rules = self.pricing()
            at = manifest_times(self.manifests, self.clock, None)
            evens = break_evens(self._sent_costs(), compactions, price, rules, at, rules.lifetime)
        self._evens = key, evens
        return evens

    def summary(self) -> str:
        """ctxlab's compactions and the peak request, in words (what a replay's status line
        compares before and after)."""
        ours = sum(1 for r in self.rows if r["compaction"])
        peak = max((r["total"] for r in self.rows), default=0)
        return f"{ours} ctxlab compactions, peak {peak:,} tokens"

    def recent_compactions(self, requests: int) -> int:
        """Compactions among the latest ``requests`` requests."""
        first = len(self.rows) - whole_number(requests, "requests", high=MAX_TOKENS)
        return sum(1 for mark in self.compactions if mark.step >= first)

    def __len__(self) -> int:
        return len(self.rows)
