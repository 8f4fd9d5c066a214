"""What-if: one recorded session replayed under several configs, side by side — tokens sent,
cost with prompt caching, compactions, retention, peak, failures — against the same session sent
whole at every step (no compaction).

Token counts are shared by every config (one `TokenCache`): the first replay tokenizes, the
others look counts up, so moving a slider re-replays one config in a fraction of the first load.
"""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ctxlab._config import ContextConfig
from ctxlab._cost import (
    CacheRules,
    Price,
    RequestCost,
    RequestShape,
    price_for,
    request_costs,
    shape_of,
)
from ctxlab._replay import ReplayStep, Transcript, replay
from ctxlab.exceptions import PreparationError
from ctxlab.manifest import ContextManifest, step_row
from ctxlab.messages import AssistantMessage
from ctxlab.retention import retention_columns
from ctxlab.tokens import TiktokenCounter, TokenCache, TokenCounter

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["COMPARISON_COLUMNS", "ConfigRun", "WhatIf"]

COMPARISON_COLUMNS = (
    "requests",
    "tokens_sent",
    "cost",
    "cost_vs_no_compaction",
    "compactions",
    "retention",
    "retention_min",
    "retention_control",
    "peak",
    "errors",
)
"""The figures `WhatIf.table` gives per config (besides ``replay_ms``), in order."""

SUMMARY_PROMPT_TOKENS = 300
"""Tokens assumed for the instruction of a summary call (ctxlab's prompt is about 250)."""


@dataclass
class ConfigRun:
    """One config's replay of the session."""

    name: str
    config: ContextConfig
    steps: list[ReplayStep] = field(default_factory=list)
    costs: list[RequestCost] = field(default_factory=list)
    """Reasoning requests and summary calls, in the order they would be sent."""
    error: str | None = None
    """Why the replay stopped early, if it did."""
    seconds: float = 0.0
    """How long the replay took."""

    @property
    def manifests(self) -> list[ContextManifest]:
        """The prepared requests' manifests."""
        return [s.manifest for s in self.steps]

    @property
    def cost(self) -> float:
        """USD over the session, summary calls included."""
        return sum(c.cost for c in self.costs)


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
            raise ValueError(msg)
        self.transcript = transcript
        self.context_window = context_window
        # A `TokenCache` may be shared by several what-ifs of one session (other windows).
        self.cache = (
            counter if isinstance(counter, TokenCache) else TokenCache(counter or TiktokenCounter())
        )
        models = transcript.meta.get("models") or [""]
        self.price = price or price_for(str(models[0]))
        self.rules = rules or CacheRules.anthropic()
        self.summary_calls = summary_calls
        self.runs: dict[str, ConfigRun] = {n: ConfigRun(n, c) for n, c in configs.items()}
        self._baseline: list[RequestCost] | None = None

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
        started = time.perf_counter()
        run.steps, run.error = [], None
        try:
            async for step in replay(
                self.transcript.messages,
                context_window=self.context_window,
                counter=self.cache,
                config=run.config,
                system=self.transcript.system,
                tools=self.transcript.tools,
            ):
                run.steps.append(step)
        except PreparationError as exc:
            run.error = str(exc)
        run.costs = request_costs(self._shapes(run), self.price, self.rules)
        run.seconds = time.perf_counter() - started

    def _output(self, step: ReplayStep) -> int:
        return self.cache.message(self.transcript.messages[step.index])

    def _shapes(self, run: ConfigRun) -> list[RequestShape]:
        shapes: list[RequestShape] = []
        previous: RequestShape | None = None
        for step in run.steps:
            record = step.compaction
            if record is not None and self.summary_calls:
                shapes.append(self._summary_call(step, record.tokens_before, previous))
            previous = shape_of(step.manifest, self._output(step))
            shapes.append(previous)
        return shapes

    def _summary_call(
        self, step: ReplayStep, before: int, previous: RequestShape | None
    ) -> RequestShape:
        # As ctxlab's model adapters send it: the last request's messages up to its material
        # (cached), what arrived since and the instruction (new), a breakpoint on the end.
        summary = step.state.summary
        output = self.cache.text(summary.text) if summary is not None else 0
        if previous is None or not previous.breakpoints:
            fixed = shape_of(step.manifest)
            keys = (*fixed.keys[: fixed.fixed], "summary-input")
            tokens = (*fixed.tokens[: fixed.fixed], before + SUMMARY_PROMPT_TOKENS)
            return RequestShape(keys, tokens, (len(tokens) - 1,), output, "summary")
        end = previous.breakpoints[-1] + 1
        sent = sum(previous.tokens[previous.fixed : end])
        new = max(before - sent, 0) + SUMMARY_PROMPT_TOKENS
        keys = (*previous.keys[:end], f"summary-new/{step.manifest.request_id}")
        tokens = (*previous.tokens[:end], new)
        return RequestShape(keys, tokens, (*previous.breakpoints, len(keys) - 1), output, "summary")

    @property
    def baseline(self) -> list[RequestCost]:
        """The session sent whole at every step (no compaction, no truncation), same cache."""
        if self._baseline is None:
            self._baseline = request_costs(self._baseline_shapes(), self.price, self.rules)
        return self._baseline

    def _baseline_shapes(self) -> list[RequestShape]:
        run = next((r for r in self.runs.values() if r.steps), None)
        fixed_keys: tuple[str, ...] = ()
        fixed_tokens: tuple[int, ...] = ()
        if run is not None:
            first = shape_of(run.steps[0].manifest)
            fixed_keys, fixed_tokens = first.keys[: first.fixed], first.tokens[: first.fixed]
        keys, tokens = list(fixed_keys), list(fixed_tokens)
        shapes: list[RequestShape] = []
        for message in self.transcript.messages:
            if isinstance(message, AssistantMessage) and len(keys) > len(fixed_keys):
                output = self.cache.message(message)
                points = (len(fixed_keys) - 1, len(keys) - 1)
                shapes.append(RequestShape(tuple(keys), tuple(tokens), points, output))
            keys.append(message.content_hash)
            tokens.append(self.cache.message(message))
        return shapes

    def table(self) -> pd.DataFrame:
        """One row per config: requests, input tokens sent, cost (USD and relative to no
        compaction), compactions, retention of paths/commands/numbers (mean and worst), peak
        request, failed preparations, replay time."""
        import pandas as pd

        base = sum(c.cost for c in self.baseline) or 1.0
        rows = [_row(run, base) for run in self.runs.values()]
        return pd.DataFrame(rows).set_index("config")

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
                record = step.compaction
                step_cost = cost.cost + extra.get(index, 0.0)
                cumulative += step_cost
                rows.append(
                    {
                        "config": run.name,
                        **step_row(
                            step.manifest,
                            step=index,
                            compaction=record.method if record else None,
                            compacted_messages=record.messages_compacted if record else 0,
                            retention=retention_columns(record)["retention"],
                            retention_control=retention_columns(record)["retention_control"],
                        ),
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


def _row(run: ConfigRun, base: float) -> dict[str, Any]:
    records = [s.compaction for s in run.steps if s.compaction is not None]
    kept = [r.retention.core for r in records if r.retention and r.retention.core is not None]
    control = [c for r in records if r.retention and (c := r.retention.control_share()) is not None]
    manifests = run.manifests
    return {
        "config": run.name,
        "requests": len(manifests),
        "tokens_sent": sum(c.input_tokens for c in run.costs),
        "cost": run.cost,
        "cost_vs_no_compaction": run.cost / base,
        "compactions": len(records),
        "summary_calls": sum(1 for c in run.costs if c.purpose == "summary"),
        "retention": sum(kept) / len(kept) if kept else None,
        "retention_min": min(kept) if kept else None,
        "retention_control": sum(control) / len(control) if control else None,
        "peak": max((m.estimated_input_tokens for m in manifests), default=0),
        "errors": sum(1 for m in manifests if m.validation != "passed") + (1 if run.error else 0),
        "replay_ms": run.seconds * 1000,
    }
