"""What-if: one recorded session replayed under several configs, side by side — tokens sent,
cost with prompt caching, compactions, retention, peak, failures — against two references:

- the **baseline**, a policy that can run at this window: no summary, the oldest turns dropped
  (whole: a call never without its result; the first user message kept) until the request fits
  the input limit, as a harness without compaction does;
- **no compaction**: the whole session sent at every step, as if the window were unlimited —
  labelled as what it is, since where a request passes the limit a provider rejects it
  (`WhatIf.references()` says how many).

Token counts are shared by every config (one `TokenCache`): the first replay tokenizes, the
others look counts up, so moving a slider re-replays one config in a fraction of the first load.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ctxlab.analysis._calibration import Calibration, calibrate
from ctxlab.analysis._comparison import COMPARISON_COLUMNS, comparison_row
from ctxlab.analysis._config_run import ConfigRun, replay_run
from ctxlab.analysis._cost import (
    CacheRules,
    Price,
    RequestCost,
    checked_price,
    price_for,
    request_costs,
    shape_of,
)
from ctxlab.analysis._references import References, output_cost, reference_shapes
from ctxlab.analysis._replay import replay_row
from ctxlab.analysis._verdict import baseline_verdict
from ctxlab.config._config import ContextConfig
from ctxlab.exceptions import UsageError
from ctxlab.io._transcript import Transcript
from ctxlab.tokens import TokenCache, TokenCounter, default_counter
from ctxlab.util._checks import context_window as context_window_of

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["COMPARISON_COLUMNS", "ConfigRun", "WhatIf"]


class WhatIf:
    """A transcript replayed under named configs (see the module's documentation).

    Args:
        transcript: The session (`ctxlab.load`).
        configs: Name → config (presets: ``ContextConfig.preset(...)``).
        context_window: The window to replay for.
        counter: How to count tokens (tiktoken cl100k_base when omitted), or a `TokenCache`
            to share counts with other what-ifs of the same session.
        price: The model's `Price` (``price_for(model)`` when omitted; Claude Sonnet's when the
            transcript names no model).
        rules: The provider's `CacheRules` (Anthropic's when omitted).
        summary_calls: Price a model call per compaction (True: the agent's model writes the
            summaries); False when summaries are made offline (`extractive_summarizer` as the
            agent's summarizer), which costs no call — the summary's tokens are still paid in
            every request that carries it.
    """

    def __init__(
        self,
        transcript: Transcript,
        configs: Mapping[str, ContextConfig],
        *,
        context_window: int,
        counter: TokenCounter | TokenCache | None = None,
        price: Price | None = None,
        rules: CacheRules | None = None,
        summary_calls: bool = True,
    ) -> None:
        if not configs:
            msg = "pass at least one named config, e.g. {'default': ContextConfig()}"
            raise UsageError(msg)
        self.transcript = transcript
        self._calibration: Calibration | None = None
        self.context_window = context_window_of(context_window)
        # A `TokenCache` may be shared by several what-ifs of one session (other windows).
        self.cache = (
            counter if isinstance(counter, TokenCache) else TokenCache(counter or default_counter())
        )
        models = transcript.meta.get("models") or [""]
        self.price = checked_price(price) or price_for(str(models[0]))
        self.rules = rules or CacheRules.anthropic()
        self.summary_calls = summary_calls
        self.runs: dict[str, ConfigRun] = {n: ConfigRun(n, c) for n, c in configs.items()}
        self._priced: tuple[References, References] | None = None

    async def run(self, *names: str) -> None:
        """Replay the named configs (all when none is named) and price them."""
        for name in names or tuple(self.runs):
            await self._replay(self.runs[name])

    async def set_config(self, name: str, config: ContextConfig) -> ConfigRun:
        """Put ``config`` under ``name`` (new or replacing) and replay it."""
        run = self.runs[name] = ConfigRun(name, config)
        await self._replay(run)
        return run

    async def _replay(self, run: ConfigRun) -> None:
        await replay_run(
            run,
            self.transcript,
            context_window=self.context_window,
            cache=self.cache,
            price=self.price,
            rules=self.rules,
            priced_calls=self.summary_calls,
        )

    @property
    def no_compaction(self) -> list[RequestCost]:
        """The session sent whole at every step (no compaction, no truncation), same cache: as
        if the window were unlimited (`references` counts the requests over the limit)."""
        return self._references()[1].costs

    @property
    def baseline(self) -> list[RequestCost]:
        """A policy that fits the window: no summary; the oldest turns dropped whole (the first
        user message kept) until each request fits the input limit. A request whose latest turn
        alone cannot fit has that turn's results cut to what is left (`references` counts
        them)."""
        return self._references()[0].costs

    def _references(self) -> tuple[References, References]:
        """The baseline and never-compacting, priced once (they depend on the session alone)."""
        if self._priced is None:
            run = next((r for r in self.runs.values() if r.steps), None)
            first = shape_of(run.steps[0].manifest) if run is not None else None
            fixed = (
                (tuple(first.keys[: first.fixed]), tuple(first.tokens[: first.fixed]))
                if first
                else ((), ())
            )
            limit = run.steps[0].manifest.input_limit if run is not None else self.context_window
            messages = self.transcript.messages
            feasible, unlimited = (
                reference_shapes(messages, self.cache, fixed, limit, cap) for cap in (limit, None)
            )
            self._priced = (
                References(
                    request_costs(feasible.shapes, self.price, self.rules), feasible.over_limit
                ),
                References(
                    request_costs(unlimited.shapes, self.price, self.rules), unlimited.over_limit
                ),
            )
        return self._priced

    def references(self) -> pd.DataFrame:
        """The two references, one row each: requests, ``over_limit`` (for the baseline: requests
        whose latest turn had to be cut to fit; for no compaction: requests over the input
        limit, which a provider would reject), input cost, output cost and all-in cost (USD)."""
        import pandas as pd

        rows = []
        names = ("baseline (drop oldest turns to fit)", "no compaction (unlimited window)")
        for name, reference in zip(names, self._references(), strict=True):
            output = output_cost(reference.costs, self.price)
            total = sum(c.cost for c in reference.costs)
            rows.append(
                {
                    "reference": name,
                    "requests": len(reference.costs),
                    "over_limit": reference.over_limit,
                    "input_cost": total - output,
                    "output_cost": output,
                    "cost": total,
                }
            )
        return pd.DataFrame(rows).set_index("reference")

    def table(self) -> pd.DataFrame:
        """One row per config: requests, input tokens sent, cost (USD all-in, its input and
        output parts, and relative to the feasible baseline and to never compacting),
        compactions, retention (mean and worst compaction, and the control: the kept tail
        alone), peak request, failed preparations, replay time. ``attrs["verdict"]`` says in
        a sentence whether any config beats the feasible baseline (`verdict`)."""
        import pandas as pd

        # A reference that costs nothing (a free model) makes no ratio: NaN, not a 100% saving.
        feasible = sum(c.cost for c in self.baseline)
        unlimited = sum(c.cost for c in self.no_compaction)
        rows = [comparison_row(run, feasible, unlimited, self.price) for run in self.runs.values()]
        frame = pd.DataFrame(rows).set_index("config")
        frame.attrs["verdict"] = self.verdict()
        calibration = self.calibration
        fit = calibration.fit() if calibration is not None else None
        if fit is not None:
            # The recording billed its requests: the tokens sent in the provider's tokens too.
            frame["tokens_sent_calibrated"] = [
                sum(fit.calibrated(m.estimated_input_tokens) for m in run.manifests)
                for run in self.runs.values()
            ]
            frame.attrs["calibration"] = (
                "tokens_sent_calibrated is in the provider's tokens: ctxlab's estimates times "
                f"{fit.ratio:.3f}, plus the unrecorded fixed part ({fit.fixed[min(fit.fixed)]:,.0f} "
                "a request), both measured on this recording's usage (ctxlab.calibrate)"
            )
        return frame

    def verdict(self) -> str:
        """A plain sentence: whether any config that ran to the end costs less than the
        feasible baseline at this window, and by how much the cheapest does (or does not)."""
        feasible = sum(c.cost for c in self.baseline)
        costs = {
            name: run.cost if run.error is None else math.nan for name, run in self.runs.items()
        }
        return baseline_verdict(self.context_window, costs, feasible)

    @property
    def calibration(self) -> Calibration | None:
        """The recording's estimates reconciled with its bill (None without usage): what
        ``tokens_sent_calibrated`` in `table` uses."""
        if not self.transcript.usage:
            return None
        if self._calibration is None:
            self._calibration = calibrate(self.transcript, self.cache)
        return self._calibration

    def retention(self) -> pd.DataFrame:
        """Retention by config and category, summed over the compactions: items, kept (in the
        summary or the kept tail), in the summary, and the control — in the kept tail alone —
        each also as a share."""
        import pandas as pd

        rows: list[dict[str, Any]] = []
        for run in self.runs.values():
            sums: dict[str, list[int]] = {}
            for step in run.steps:
                kept = step.compaction.retention if step.compaction is not None else None
                for row in kept.rows() if kept is not None else ():
                    acc = sums.setdefault(row["category"], [0, 0, 0, 0])
                    for n, key in enumerate(("total", "kept", "in_summary", "in_tail")):
                        acc[n] += row[key]
            for category, (total, kept_, in_summary, in_tail) in sums.items():
                rows.append(
                    {
                        "config": run.name,
                        "category": category,
                        "items": total,
                        "kept": kept_ / total,
                        "in_summary": in_summary / total,
                        "control": in_tail / total,
                    }
                )
        columns = ["config", "category", "items", "kept", "in_summary", "control"]
        return pd.DataFrame(rows, columns=columns)

    def steps(self) -> pd.DataFrame:
        """One row per (config, reasoning request): the step table's columns plus cache and
        cost (the summary call a compaction made is in that step's cost)."""
        import pandas as pd

        rows: list[dict[str, Any]] = []
        for run in self.runs.values():
            reasoning = [c for c in run.costs if c.purpose != "summary"]
            extra = _summary_costs_by_step(run)
            cumulative = 0.0
            for index, (step, cost) in enumerate(zip(run.steps, reasoning, strict=False)):
                step_cost = cost.cost + extra.get(index, 0.0)
                cumulative += step_cost
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

    def diff(self, a: str, b: str, step: int) -> pd.DataFrame:
        """At request ``step``: the items ``a`` sent that ``b`` did not (``side="only in a"``)
        and the reverse, with their tokens — what one config kept that the other dropped."""
        import pandas as pd

        left = self.runs[a].manifests[step].items
        right = self.runs[b].manifests[step].items
        rows: list[dict[str, Any]] = []
        for side, ours, theirs in ((f"only in {a}", left, right), (f"only in {b}", right, left)):
            known = {(i.id, i.content_hash) for i in theirs}
            rows.extend(
                {
                    "side": side,
                    "id": i.id,
                    "kind": i.kind,
                    "placement": i.placement,
                    "role": i.role,
                    "tokens": i.tokens,
                }
                for i in ours
                if (i.id, i.content_hash) not in known
            )
        return pd.DataFrame(rows, columns=["side", "id", "kind", "placement", "role", "tokens"])


def _summary_costs_by_step(run: ConfigRun) -> dict[int, float]:
    out: dict[int, float] = {}
    index = 0
    for cost in run.costs:
        if cost.purpose == "summary":
            out[index] = out.get(index, 0.0) + cost.cost
        else:
            index += 1
    return out
