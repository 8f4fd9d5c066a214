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
A config put in place of another (`set_config`) reuses the other's requests up to the first
whose decision may differ. Retention is graded and requests are priced when a figure asks for
them (`table`, `retention`, `steps`), then kept: `headline` and the prepared requests never wait
for either.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import TYPE_CHECKING

from ctxlab.analysis._billed import Bill, bill_of
from ctxlab.analysis._breakeven_of import break_even_frame, run_break_evens
from ctxlab.analysis._cache_clock import clock_sentence, clocked_rules, recording_clock
from ctxlab.analysis._cache_rules import checked_rules
from ctxlab.analysis._calibration import Calibration, calibrate
from ctxlab.analysis._comparison import COMPARISON_COLUMNS, HEADLINE_COLUMNS
from ctxlab.analysis._config_run import ConfigRun, named_config, replay_run
from ctxlab.analysis._cost import (
    CacheRules,
    Price,
    RequestCost,
    cache_rules_for,
    checked_price,
    price_for,
    pricing_note,
)
from ctxlab.analysis._model_summaries import ModelSummaries
from ctxlab.analysis._priced_references import priced_references, reference_limit
from ctxlab.analysis._prices import recorded_model, recorded_on
from ctxlab.analysis._references import References, references_frame
from ctxlab.analysis._summarizer_cap import refuse_over_budget, whatif_summaries
from ctxlab.analysis._unrecorded import (
    UnrecordedPart,
    UnrecordedTokens,
    unrecorded_part,
)
from ctxlab.analysis._verdict import baseline_verdict, priceless_verdict
from ctxlab.analysis._whatif_args import (
    config_name,
    run_named,
    step_of,
    whatif_configs,
    whatif_transcript,
)
from ctxlab.analysis._whatif_frames import (
    DIFF_COLUMNS,
    comparison_frame,
    diff_frame,
    headline_frame,
    next_use_frame,
    retention_frame,
    steps_frame,
)
from ctxlab.analysis._whatif_kept import KeptRuns, Pace
from ctxlab.config._config import ContextConfig
from ctxlab.exceptions import UsageError
from ctxlab.io._transcript import Transcript
from ctxlab.models import Model
from ctxlab.tokens import TokenCache, TokenCounter, counter_for
from ctxlab.util._checks import context_window as context_window_of

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["COMPARISON_COLUMNS", "DIFF_COLUMNS", "HEADLINE_COLUMNS", "ConfigRun", "WhatIf"]


class WhatIf:
    """A transcript replayed under named configs (see the module's documentation).

    Args:
        transcript: The session (`ctxlab.load`).
        configs: Name → config (presets: ``ContextConfig.preset(...)``).
        context_window: The window to replay for.
        counter: How to count tokens (the recording's model's own tokenizer where one is
            public offline, o200k_base for GPT-4o/4.1/5 and the Codex models; cl100k_base, an
            approximation, for Claude, Gemini and others: `ctxlab.tokens.counter_for`), or a
            `TokenCache` to share counts with other what-ifs of the same session.
        price: The model's `Price` (``price_for`` of the recording's model, on the day it was
            recorded, when omitted). A model no table knows is unpriced: its costs are NaN and
            `pricing` says so (pass a `Price` to price it).
        rules: The provider's `CacheRules` (``cache_rules_for`` the recording's model when
            omitted: Anthropic's, OpenAI's or Google's; none for an unknown provider).
        summary_calls: Price a model call per compaction (True: the agent's model writes the
            summaries); False when summaries are made offline (`extractive_summarizer` as the
            agent's summarizer), which costs no call — the summary's tokens are still paid in
            every request that carries it.
        unrecorded_tokens: What each recorded request held that the file does not (a
            harness's own System prompt and tool schemas): tokens a request, a harness profile
            (``"claude_code"``) or an `UnrecordedPart`; None sizes it from the recording's bill
            where it has one (`ctxlab.unrecorded_part`). Every request of every config carries
            it, against the window and the trigger, priced as the cached prefix it is.
        summarizer: Your `Model` to write each compaction's summary (its calls priced, whatever
            ``summary_calls`` says); None: ctxlab's offline extract (`extractive_summarizer`).
        budget_usd: A cap in USD on what the summarizer's calls cost, by their usage, over
            every replay of this what-if (None: no cap). A replay whose summaries' estimate
            passes it is refused (`OverBudget`) before any call; once it is reached no call is
            sent and each later compaction fails as unsummarized (`ModelSummaries`).
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
        unrecorded_tokens: UnrecordedTokens = None,
        summarizer: Model | ModelSummaries | None = None,
        budget_usd: float | None = None,
    ) -> None:
        named = whatif_configs(configs)
        self.transcript = whatif_transcript(transcript)
        self._calibration: Calibration | None = None
        self.context_window = context_window_of(context_window)
        self.model = recorded_model(transcript.meta)
        """The recording's model: its costs are priced as it bills, its tokens counted with its
        own tokenizer where one is public (unless ``price``, ``counter`` are given)."""
        # A `TokenCache` may be shared by several what-ifs of one session (other windows).
        self.cache = (
            counter
            if isinstance(counter, TokenCache)
            else TokenCache(counter or counter_for(self.model))
        )
        checked_price(price)
        self.clock = recording_clock(transcript)
        """The recording's trusted times, which the cache expires on (`RecordingClock`)."""
        given = checked_rules(rules)
        self.rules, self.lifetime = clocked_rules(
            transcript, given or cache_rules_for(self.model, price), self.clock, fixed=given
        )
        """The cache rules, set to the recording's TTL and lifetime unless ``rules`` was
        passed; and the lifetime its usage shows (`LifetimeInference`)."""
        self._ttl = self.lifetime.ttl if given is None else None
        self.price = price or price_for(self.model, recorded_on(transcript.meta))
        self.summarizer = whatif_summaries(summarizer, budget_usd)
        """The user's model writing the summaries, metered (None: ctxlab's offline extract)."""
        self.summary_calls = summary_calls or self.summarizer is not None
        self.runs: dict[str, ConfigRun] = {n: ConfigRun(n, c) for n, c in named.items()}
        self.kept = KeptRuns()
        """Runs replayed, by config: a move back takes one as it was (`kept_run`)."""
        self._priced: tuple[References, References] | None = None
        self._billed: Bill | None = None
        self.unrecorded: UnrecordedPart | None = unrecorded_part(
            transcript, unrecorded_tokens, calibration=self.calibration
        )
        """What each request held that the recording does not, by its size (None when nothing
        is missing or nothing sizes it: `unrecorded_note`)."""

    async def run(self, *names: str) -> None:
        """Replay the named configs (all when none is named) and price them; with a
        ``summarizer`` model, refused (`OverBudget`) before any call when their summaries'
        estimate passes ``budget_usd``."""
        chosen = [self._run(name) for name in names or tuple(self.runs)]
        await self._estimate(chosen)
        for run in chosen:
            await self._replay(run)
            self.kept.keep(run)

    @property
    def spent(self) -> float:
        """USD the summarizer model's calls cost so far, by their usage ($0 offline)."""
        return 0.0 if self.summarizer is None else self.summarizer.budget.spent

    async def _estimate(self, runs: list[ConfigRun]) -> None:
        await refuse_over_budget(
            self.summarizer, runs, lambda run: self._replay(run, None, offline=True)
        )

    async def set_config(self, name: str, config: ContextConfig) -> ConfigRun:
        """Put ``config`` under ``name`` (new or replacing) and replay it: from the first
        request whose decision may differ from the replaced config's (`ctxlab.analysis._resume`:
        the same requests as a replay from the start), graded and priced when asked. With
        offline summaries, a config replayed before under ``name`` (or computed `ahead`) is
        taken as it was, figures included (`ctxlab.analysis._whatif_kept`)."""
        config = named_config(config_name(name), config)
        kept = self.kept_run(name, config)
        if kept is not None:
            self.kept.taken += 1
            self.runs[name] = kept
            return kept
        earlier = self.runs.get(name)
        run = ConfigRun(name, config)
        await self._estimate([run])
        self.runs[name] = run
        await self._replay(run, earlier)
        self.kept.keep(run)
        return run

    def kept_run(self, name: str, config: ContextConfig) -> ConfigRun | None:
        """The run of ``config`` under ``name`` replayed before (or `ahead`), kept; None with a
        summarizer model (its answers, and what its cap left, vary between replays)."""
        return self.kept.get(name, config) if self.summarizer is None else None

    async def ahead(self, name: str, config: ContextConfig) -> ConfigRun | None:
        """Replay ``config`` under ``name`` without showing it, giving the event loop back
        after each request (cancel it there), and keep it for `set_config` to take at once.
        None with a summarizer model (only what is asked for is paid for), or when ``config``
        is invalid."""
        if self.summarizer is not None or not isinstance(config, ContextConfig):
            return None
        try:
            config = named_config(config_name(name), config)
        except UsageError:
            return None
        earlier = self.runs.get(name)
        return await self.kept.ahead(
            ConfigRun(name, config), lambda run, pace: self._replay(run, earlier, pace=pace)
        )

    async def _replay(
        self,
        run: ConfigRun,
        earlier: ConfigRun | None = None,
        *,
        offline: bool = False,
        pace: Pace | None = None,
    ) -> None:
        await replay_run(
            run,
            self.transcript,
            context_window=self.context_window,
            cache=self.cache,
            price=self.price,
            rules=self.rules,
            priced_calls=self.summary_calls,
            unrecorded=self.unrecorded,
            earlier=earlier,
            times=self.clock.times,
            write_ttl=self._ttl,
            summarize=None if offline else self.summarizer,
            pace=pace,
            summaries=self.kept.summaries,
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
            limit = reference_limit(self.runs.values(), self.context_window)
            self._priced = priced_references(
                self.transcript,
                self.cache,
                self.unrecorded,
                limit,
                times=self.clock.times,
                write_ttl=self._ttl,
                bill=self._bill(),
                price=self.price,
                rules=self.rules,
            )
        return self._priced

    def references(self) -> pd.DataFrame:
        """The two references, one row each: requests, ``over_limit`` (for the baseline: requests
        whose latest turn had to be cut to fit; for no compaction: requests over the input
        limit, which a provider would reject), input cost, output cost and all-in cost (USD);
        ``attrs["pricing"]`` as `table`'s."""
        return references_frame(self._references(), self.price, self.pricing)

    def table(self) -> pd.DataFrame:
        """One row per config: requests, input tokens sent, cost (USD all-in, its input and
        output parts, and relative to the feasible baseline and to never compacting),
        compactions and how many paid back their break (``compactions_paid_back``, "2 of 3":
        `compactions`), retention (mean and worst compaction, and the control: the kept tail
        alone), next-use retention (``next_use_retention``: the share of what the recorded
        agent's next replies used that each compaction's request holds, and its floor, the
        latest message alone: `next_use`), peak request, failed preparations, ``failed_at`` (the request a replay could
        not prepare; its tokens and costs are then NaN: a part is not priced as the whole),
        requests over the limit by the bill (``over_limit_billed``; None without usage), replay
        time. ``attrs``: ``pricing`` (the price and cache rules, or unpriced: every cost NaN),
        ``unrecorded`` (what the recording does not hold of each request), ``verdict``."""
        return comparison_frame(self)

    def compactions(self, name: str | None = None) -> pd.DataFrame:
        """One row per compaction of config ``name`` (all when None): whether and where it paid
        back its break (`BREAK_EVEN_COLUMNS`; docs/concepts/cost.md); ``attrs`` as `table`'s."""
        runs = self.runs.values() if name is None else [self._run(name)]
        frame = break_even_frame((r.name, e) for r in runs for e in run_break_evens(r))
        frame.attrs["pricing"] = self.pricing
        return frame

    def headline(self) -> pd.DataFrame:
        """The figures of `table` that need neither the grader nor the pricer, one row per
        config — requests, compactions, peak, errors, ``failed_at``, ``over_limit_billed`` —
        equal to `table`'s: what a slider's move shows at once (`HEADLINE_COLUMNS`)."""
        return headline_frame(self.runs.values(), self.over_limit_billed)

    def over_limit_billed(self, name: str) -> int | None:
        """How many of config ``name``'s requests pass the input limit by the bill's measure
        (`ctxlab.analysis._billed`: a request holding what a recorded one held that was
        billed past the limit, or whose calibrated size passes it) — a config that "fits" by
        ctxlab's count may not fit as the provider counts. None when the recording has no
        usage."""
        bill = self._bill()
        if not bill:
            return None
        return bill.over_count(self._run(name).prepared)

    def _bill(self) -> Bill:
        if self._billed is None:
            self._billed = bill_of(self.transcript, self.calibration)
        return self._billed

    def verdict(self) -> str:
        """A plain sentence: whether any config that ran to the end costs less than the
        feasible baseline at this window, and by how much the cheapest does (or does not)."""
        priceless = priceless_verdict(self.context_window, self.price, self.pricing)
        if priceless is not None:
            return priceless
        feasible = sum(c.cost for c in self.baseline)
        costs = {
            name: run.cost if run.error is None else math.nan for name, run in self.runs.items()
        }
        return baseline_verdict(self.context_window, costs, feasible)

    @property
    def pricing(self) -> str:
        """What the costs are priced as: the price (model, list price, source) and the cache
        rules, or ``unpriced (model X has no known price)`` (`pricing_note`)."""
        return pricing_note(self.model, self.price, self.rules)

    @property
    def cache_clock(self) -> str:
        """The clock the prompt cache expires on and the lifetime it is given, in words: the
        recording's times (or none: every cached prefix alive), and the lifetime its usage
        shows (`LifetimeInference.sentence`)."""
        return clock_sentence(self.clock, self.rules, self.lifetime)

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
        summary, the pinned task or the kept tail), in the summary's own text, in the pinned
        task, and the control — in the kept tail alone — each as a share."""
        return retention_frame(self.runs.values())

    def next_use(self) -> pd.DataFrame:
        """Retention graded by what the recorded agent used next, a row per (config,
        compaction): items used, held, share, floor and lost (docs/concepts/compaction.md)."""
        return next_use_frame(self.runs.values(), self.transcript)

    def steps(self, *, grade: bool = True) -> pd.DataFrame:
        """One row per (config, reasoning request): the step table's columns plus cache and
        cost (the summary call a compaction made is in that step's cost). ``grade`` False
        never waits for the retention grader: a config not yet graded has its retention
        columns empty."""
        return steps_frame(self.runs.values(), grade=grade)

    def diff(self, a: str, b: str, step: int) -> pd.DataFrame:
        """At request ``step``: the items ``a`` sent that ``b`` did not (``side="only in a"``)
        and the reverse — what one config kept that the other dropped — each readable: its
        kind, its source (a material's source, else the message's role), ``what`` it is (the
        tool call or result and a preview of its text, as the Manifest panel names it), its
        tokens, placement and id."""
        first, second = self._run(a), self._run(b)
        return diff_frame(first, second, step_of(step, first, second))

    def _run(self, name: object) -> ConfigRun:
        return run_named(self.runs, name)
