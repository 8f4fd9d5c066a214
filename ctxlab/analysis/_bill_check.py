"""The cache model checked against the bill: for a recording with cache usage, each billed
request's modelled cache reads and writes beside the recorded ones (`cache_check`), and one
agreement figure (`CacheAgreement`): "cache model: reads within 2 % of the bill on 97 % of
requests (845 of 871)".

The modelled split is the cost model's own (`request_costs`, on the recording's clock and
TTLs, each model's requests through their own cache: a provider caches per model) over the
recorded requests sized in the provider's tokens from their bills' totals
(`ctxlab.analysis._bill_shapes`) — the split itself is never read from the bill, so the
figure says how far the model's reads and writes, not the bill's, explain the bill.

*Within 2 %*: a modelled read is within 2 % of a recorded read ``r`` when they differ by at
most 2 % of ``r``; of a recorded read of 0 (nothing read), when the model read at most 2 % of
the request's billed input. Requests whose usage does not add up are *not trusted*: flagged,
left out of the figure and counted apart.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from ctxlab.analysis._bill_shapes import ShapedRequest, billed_shapes
from ctxlab.analysis._cache_clock import clocked_rules, recording_clock
from ctxlab.analysis._cache_rules import CacheRules, cache_rules_for
from ctxlab.analysis._calibration import Calibration, calibrate
from ctxlab.analysis._cost import RequestCost, request_costs
from ctxlab.analysis._prices import price_for, recorded_model
from ctxlab.analysis._recorded import RecordedRequest, recorded_requests
from ctxlab.analysis._unrecorded import unrecorded_part
from ctxlab.analysis._usage_cost import usage_cost
from ctxlab.exceptions import UsageError
from ctxlab.io._arguments import checked_transcript
from ctxlab.io._transcript import Transcript
from ctxlab.tokens import TokenCache, TokenCounter, counter_for
from ctxlab.tokens._cache import checked_counter
from ctxlab.util._checks import shown

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "CAUSES",
    "CHECK_COLUMNS",
    "TOLERANCE",
    "CacheAgreement",
    "Cause",
    "cache_agreement",
    "cache_check",
]

TOLERANCE = 0.02
"""How far a modelled read may be from the recorded one and still agree (see the module)."""

Cause = Literal[
    "warm elsewhere",
    "compaction",
    "long gap",
    "prefix changed",
    "no clock",
    "not trusted",
    "no rules",
]
CAUSES: dict[Cause, str] = {
    "warm elsewhere": "the provider read a prefix the model could not have cached: cached before "
    "the recording starts, or kept warm by another session (the harness's System prompt and "
    "tools are the same in every session; a subagent's compaction call reads its parent's)",
    "compaction": "the first request after one of the session's own compactions: what the agent "
    "re-sent of the earlier prefix is not in the file",
    "long gap": "the provider read a prefix after a gap longer than its lifetime (kept warm "
    "elsewhere)",
    "prefix changed": "the provider read less than the unchanged prefix the file shows: what was "
    "sent changed without the file saying so (Claude Code's task notifications, for one)",
    "no clock": "the recording has no times: the model keeps every prefix warm",
    "not trusted": "usage whose cache fields do not add up: left out of the figure",
    "no rules": "a model whose provider's cache rules are not known: left out of the figure",
}
"""Why a request's modelled read and its recorded one differ (the frame's ``cause``), each in
words; ``why`` says it of the request itself."""

CHECK_COLUMNS = (
    "request",
    "reply",
    "model",
    "at",
    "gap",
    "recorded_uncached",
    "recorded_read",
    "recorded_write",
    "recorded_write_5m",
    "recorded_write_1h",
    "modelled_uncached",
    "modelled_read",
    "modelled_write",
    "modelled_write_1h",
    "modelled_expired",
    "trusted",
    "agrees",
    "cause",
    "why",
    "note",
    "billed_cost",
    "modelled_cost",
)
"""The columns of `cache_check`'s frame."""


def cache_check(
    transcript: Transcript,
    *,
    calibration: Calibration | None = None,
    counter: TokenCounter | TokenCache | None = None,
) -> pd.DataFrame:
    """Each billed request of ``transcript`` *as recorded*: its recorded cache split beside
    the one ctxlab's cache model gives it (see the module), one row each (`CHECK_COLUMNS`):

    ``request`` (its number among the recording's requests), ``reply`` (the message index of
    its reply), ``model``, ``at`` (POSIX seconds it was sent; NaN: no clock), ``gap`` (seconds
    since the previous request of its model: the last time its cache was touched; NaN for the
    first, or without a clock), the recorded ``uncached`` / ``read`` / ``write`` (of it
    ``write_5m`` and ``write_1h``), the modelled ``uncached`` / ``read`` / ``write`` (of it
    ``write_1h``, and ``expired``: written again only because its lifetime had passed),
    ``trusted`` (False: usage that does not add up, `why` says how), ``agrees`` (reads within
    `TOLERANCE`; None when not trusted), ``cause`` (why they disagree, where it can be told:
    one of `CAUSES`) and ``why`` (the same of this request, in words),
    ``note`` (what sizing the request had to assume), ``billed_cost`` (USD of its recorded
    usage) and ``modelled_cost`` (of the modelled split).

    Each model's requests are priced with the rules the cost model prices the recording with
    (its provider's, at the TTL its usage records, with the lifetime its own gaps show where
    they contradict the documented one): ``frame.attrs["lifetimes"]`` says which, by model.
    Empty for a recording without cache usage (no request read or wrote a cache).
    ``calibration``: the recording's own (`ctxlab.calibrate`), fitted when omitted."""
    import pandas as pd

    lifetimes: dict[str, str] = {}
    rows = check_rows(transcript, calibration=calibration, counter=counter, lifetimes=lifetimes)
    frame = pd.DataFrame(rows, columns=list(CHECK_COLUMNS))
    frame.attrs["lifetimes"] = lifetimes
    return frame


def check_rows(
    transcript: Transcript,
    *,
    calibration: Calibration | None = None,
    counter: TokenCounter | TokenCache | None = None,
    lifetimes: dict[str, str] | None = None,
) -> list[dict[str, object]]:
    """The rows of `cache_check`, as dicts; ``lifetimes`` gets, by model, the cache lifetime
    its requests were modelled with, in words (`LifetimeInference.sentence`)."""
    lifetimes = {} if lifetimes is None else lifetimes
    checked_transcript(transcript, "cache_check")
    if calibration is not None and not isinstance(calibration, Calibration):
        msg = (
            "calibration must be the recording's Calibration (ctxlab.calibrate(transcript)) or "
            f"None, got {shown(calibration)}"
        )
        raise UsageError(msg)
    if counter is not None and not isinstance(counter, TokenCache):
        checked_counter(counter)
    if not _has_cache_usage(transcript):
        return []
    if counter is None:
        counter = counter_for(recorded_model(transcript.meta))
    cache = counter if isinstance(counter, TokenCache) else TokenCache(counter)
    calibration = calibration or calibrate(transcript, cache)
    part = unrecorded_part(transcript, calibration=calibration)
    groups: dict[str, list[RecordedRequest]] = {}
    for request in recorded_requests(transcript):
        groups.setdefault(request.model or "", []).append(request)
    rows: list[dict[str, object]] = []
    clock = recording_clock(transcript)
    for model, group in groups.items():
        # The rules the cost model prices this recording with: its TTL, and the lifetime its
        # own gaps show where they contradict the documented one.
        rules, inference = clocked_rules(transcript, cache_rules_for(model), clock)
        lifetimes[model] = inference.sentence
        shaped: list[ShapedRequest] = []
        shapes = billed_shapes(transcript, group, calibration, part, cache, shaped, clock.times)
        costs = request_costs(shapes, price_for(model), rules)
        rows.extend(_group_rows(shaped, costs, rules))
    rows.sort(key=lambda row: int(row["request"]))  # type: ignore[call-overload]
    return rows


def _has_cache_usage(transcript: Transcript) -> bool:
    return any(
        u.cache_read_input_tokens or u.cache_creation_input_tokens
        for u in transcript.usage.values()
    )


def _group_rows(
    shaped: Sequence[ShapedRequest], costs: Sequence[RequestCost], rules: CacheRules
) -> list[dict[str, object]]:
    """The rows of one model's requests (those with usage)."""
    rows: list[dict[str, object]] = []
    previous: ShapedRequest | None = None
    for here, cost in zip(shaped, costs, strict=True):
        gap = _gap(previous, here)
        first = previous is None
        previous = here
        usage = here.request.usage
        if usage is None:
            continue
        row = _row(here, cost, gap)
        if here.trust:
            row["trusted"], row["agrees"], row["cause"] = False, None, "not trusted"
            row["why"] = f"not trusted: {here.trust}"
        elif rules.kind == "none":
            row["agrees"], row["cause"] = None, "no rules"
            row["why"] = f"no known cache rules for model {here.model!r}"
        else:
            row["agrees"] = agrees(
                cost.cache_read, usage.cache_read_input_tokens, usage.total_input_tokens
            )
            if not row["agrees"]:
                row["cause"], row["why"] = disagreement(here, cost, gap, first, rules)
        rows.append(row)
    return rows


def _gap(previous: ShapedRequest | None, here: ShapedRequest) -> float:
    """Seconds since ``previous`` (NaN without either time); a clock that went backwards
    is a gap of 0, never a negative one."""
    if previous is None or previous.at is None or here.at is None:
        return math.nan
    return max(here.at - previous.at, 0.0)


def _row(here: ShapedRequest, cost: RequestCost, gap: float) -> dict[str, object]:
    usage = here.request.usage
    assert usage is not None
    price = price_for(here.model)
    return {
        "request": here.request.number,
        "reply": here.request.reply,
        "model": here.model,
        "at": here.at if here.at is not None else math.nan,
        "gap": gap,
        "recorded_uncached": usage.input_tokens,
        "recorded_read": usage.cache_read_input_tokens,
        "recorded_write": usage.cache_creation_input_tokens,
        "recorded_write_5m": max(
            usage.cache_creation_input_tokens - usage.cache_creation_1h_input_tokens, 0
        ),
        "recorded_write_1h": usage.cache_creation_1h_input_tokens,
        "modelled_uncached": cost.uncached,
        "modelled_read": cost.cache_read,
        "modelled_write": cost.cache_write,
        "modelled_write_1h": cost.cache_write_1h,
        "modelled_expired": cost.expired,
        "trusted": True,
        "agrees": True,
        "cause": "",
        "why": "",
        "note": here.note,
        "billed_cost": usage_cost(usage, price).cost if not here.trust else math.nan,
        "modelled_cost": cost.cost,
    }


def agrees(modelled: int, recorded: int, billed: int) -> bool:
    """Whether a modelled read is within `TOLERANCE` of the recorded one (see the module)."""
    if recorded == 0:
        return modelled <= TOLERANCE * billed
    return abs(modelled - recorded) <= TOLERANCE * recorded


def disagreement(
    here: ShapedRequest, cost: RequestCost, gap: float, first: bool, rules: CacheRules
) -> tuple[Cause, str]:
    """Why the modelled read of ``here`` disagrees with the recorded one, where it can be
    told: its `Cause` and the reason in words."""
    usage = here.request.usage
    assert usage is not None
    read = usage.cache_read_input_tokens
    lifetime = rules.lifetime_of(here.write_ttl)
    if here.request.compaction is not None:
        return "compaction", (
            "after a compaction: the provider read what the agent re-sent of the prefix "
            "before it, which the file does not show"
            if read > cost.cache_read
            else "after a compaction"
        )
    if read > cost.cache_read:
        if first:
            return "warm elsewhere", (
                "the first request of its model here: its prefix was cached before (kept warm "
                "by another session, or by the parent of a subagent)"
            )
        if not math.isnan(gap) and lifetime is not None and gap > lifetime:
            return "long gap", (
                f"a long gap ({gap / 60:.0f} min, past the {lifetime / 60:.0f}-minute lifetime): "
                "the provider still read the prefix (kept warm by another session)"
            )
        return "warm elsewhere", (
            "the provider read more than the model could have cached: kept warm elsewhere"
        )
    if here.note:
        return "prefix changed", here.note
    if here.at is None:
        return "no clock", (
            "the recording has no clock: the model keeps every prefix warm, and the provider "
            "had let this one expire, or it changed"
        )
    after = f" (after a {gap / 60:.0f}-minute gap)" if not math.isnan(gap) and gap >= 60 else ""
    return "prefix changed", (
        f"the provider read {read:,} tokens of a prefix the model holds {cost.cache_read:,} "
        f"of: what was sent changed without the file saying so{after}"
    )


@dataclass(frozen=True)
class CacheAgreement:
    """How far the cache model's reads agree with a recording's bill (`cache_agreement`)."""

    agreeing: int
    """Requests whose modelled read is within `TOLERANCE` of the recorded one."""
    compared: int
    """Trusted billed requests with cache rules: those the figure is over."""
    not_trusted: int
    """Requests left out: usage that does not add up."""
    disagreeing: tuple[tuple[int, str], ...]
    """The requests that disagree, with why: ``(request, why)``."""
    unmodelled: int = 0
    """Requests left out: their model's cache rules are not known (`CAUSES` ``no rules``)."""

    @property
    def share(self) -> float:
        """``agreeing / compared`` (NaN when nothing was compared)."""
        return self.agreeing / self.compared if self.compared else math.nan

    @property
    def line(self) -> str:
        """The figure in one line ("cache model: reads within 2 % of the bill on 97 % of
        requests (845 of 871)")."""
        if not self.compared:
            if self.unmodelled:
                return (
                    "cache model: not checked — no known cache rules for this recording's model "
                    f"({self.unmodelled:,} billed request{'s' if self.unmodelled != 1 else ''})"
                )
            return "cache model: no billed request with cache usage to check"
        text = (
            f"cache model: reads within {TOLERANCE * 100:.0f} % of the bill on "
            f"{math.floor(self.share * 100):.0f} % of requests ({self.agreeing:,} of "
            f"{self.compared:,})"
        )
        if self.not_trusted:
            text += f"; {self.not_trusted:,} not trusted (usage that does not add up)"
        return text


def cache_agreement(frame: pd.DataFrame) -> CacheAgreement:
    """The agreement of a `cache_check` frame (`UsageError` for anything else)."""
    import pandas as pd

    if not isinstance(frame, pd.DataFrame) or not {"request", "agrees", "why", "trusted"} <= set(
        frame.columns
    ):
        msg = (
            "cache_agreement takes the frame ctxlab.cache_check(transcript) returns, got "
            f"{shown(frame)}"
        )
        raise UsageError(msg)
    if not len(frame):
        return CacheAgreement(0, 0, 0, ())
    compared = frame[frame["agrees"].notna()]
    disagreeing = tuple(
        (int(request), str(why))
        for request, agrees, why in zip(
            compared["request"], compared["agrees"], compared["why"], strict=True
        )
        if not agrees
    )
    not_trusted = int((frame["trusted"] == False).sum())  # noqa: E712 (a column of bools)
    unmodelled = int((frame["cause"] == "no rules").sum()) if "cause" in frame.columns else 0
    return CacheAgreement(
        len(compared) - len(disagreeing), len(compared), not_trusted, disagreeing, unmodelled
    )
