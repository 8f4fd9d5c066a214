"""A recording's requests *as recorded* in the provider's tokens, on the recording's clock:
the shapes the cache model prices when it is checked against the bill (`ctxlab.cache_check`).

ctxlab's token counts are not the provider's (Claude's count of the same text is 1.2–1.5 times
cl100k's): a cache model in ctxlab's tokens cannot agree with a bill to 2 %. So each request's
parts are sized in the provider's tokens, from the bill itself — its total, never its split:

- the parts a request shares with the previous request of its model (the same keys, in the
  same order: what the provider may have cached) keep the sizes they had there;
- its new parts share what its bill adds — billed input (input + cache reads + cache writes)
  less the shared parts — the fixed ones (the unrecorded part, already in the provider's
  tokens; System and tool schemas at the calibration's billed tokens per counted token,
  `ctxlab.calibrate`) at their size first, the rest in proportion to ctxlab's counts; so the
  tokens up to each request's end are exactly its billed input;
- a bill smaller than the prefix the request shares with the previous one says that prefix
  changed without the file showing how (content dropped that the file keeps): the request's
  parts after the fixed ones are then taken as new (``note`` says so);
- a request without a bill is sized from its counts (the calibration's ratio); one whose cache
  split does not add up keeps its total as its size (what is in doubt is the split, not the
  sum).

Each request is sent at its reply's recorded time (`Transcript.times`, those the cost model
trusts: `ctxlab.analysis._cache_clock.recording_clock`; none: no clock) and writes with the TTL
its usage shows (1-hour writes recorded: ``1h``; else ``5m`` when it
wrote; else the TTL of the model's previous request).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from ctxlab.analysis._calibration import Calibration
from ctxlab.analysis._cost import RequestShape, shape_of
from ctxlab.analysis._recorded import RecordedItems, RecordedRequest, recorded_manifest
from ctxlab.analysis._unrecorded import UnrecordedPart
from ctxlab.analysis._usage_cost import untrusted
from ctxlab.io._transcript import Transcript
from ctxlab.materials import SystemPart
from ctxlab.messages import MAX_TOKENS
from ctxlab.pipeline._stages import fixed_part
from ctxlab.tokens import TokenCache

__all__ = ["ShapedRequest", "billed_shapes", "split_flagged"]

TTL = Literal["5m", "1h"]

CHANGED = "billed less than the prefix it shares with the previous request: that prefix changed"
"""The note of a request whose bill is smaller than what it shares with the request before."""
GREW = "billed more than its parts: the rest taken as a part the file does not show"
"""The note of a request that adds no part of its own yet was billed more."""


@dataclass
class ShapedRequest:
    """One recorded request as the cache model is checked on it."""

    request: RecordedRequest
    model: str
    at: float | None
    """When it was sent (its reply's recorded time; None: no clock)."""
    write_ttl: TTL | None
    trust: str = ""
    """Why its usage is not taken as its bill ("" when it is, or when it has none)."""
    note: str = ""
    """What the sizing had to assume for it (`CHANGED`, `GREW`), or ""."""


@dataclass
class _Sizing:
    """The previous request of one model: its keys and each part's size in billed tokens."""

    keys: Sequence[str] = ()
    sizes: list[int] = field(default_factory=list)
    ttl: TTL | None = None
    alias: dict[str, str] = field(default_factory=dict)
    """The parts taken as changed (`CHANGED`), by their key: the key they go by from then on,
    so that the requests after read what the changed request wrote."""


def split_flagged(transcript: Transcript) -> set[int]:
    """The replies whose cache split the importer found not to add up
    (``meta["cache_split_flagged"]``: message indexes)."""
    flagged = transcript.meta.get("cache_split_flagged")
    if not isinstance(flagged, list | tuple | set):
        return set()
    return {i for i in flagged if isinstance(i, int) and not isinstance(i, bool)}


def trust_of(request: RecordedRequest, flagged: set[int]) -> str:
    """Why ``request``'s usage is not its bill to check against ("" when it is)."""
    usage = request.usage
    if usage is None:
        return ""
    if request.reply in flagged:
        return "its cache writes by TTL do not add up to its cache writes (as loaded)"
    if usage.total_input_tokens == 0:
        return "a bill of 0 input tokens"
    return untrusted(usage)


def billed_shapes(
    transcript: Transcript,
    requests: Sequence[RecordedRequest],
    calibration: Calibration | None,
    part: UnrecordedPart | None,
    cache: TokenCache,
    out: list[ShapedRequest],
    times: Mapping[int, float],
) -> Iterator[RequestShape]:
    """The shapes of ``requests`` (one model's, in order) in billed tokens (see the module),
    each sent at its reply's time in ``times`` (the recording's trusted times, by message
    index), yielded one at a time for `request_costs`; what was assumed of each is appended
    to ``out`` as its shape is yielded."""
    system = (SystemPart("system_prompt", transcript.system),) if transcript.system else ()
    fixed = fixed_part(system, transcript.tools, cache)
    itemized = RecordedItems((*fixed.system_items, *fixed.tool_items), cache)
    flagged = split_flagged(transcript)
    sizing = _Sizing()
    keys: dict[int, str] = {}
    for request in requests:
        model = request.model or ""
        manifest = recorded_manifest(
            request,
            cache,
            context_window=MAX_TOKENS,
            previous=None,
            itemized=itemized,
            unrecorded=part.at(request.reply, request.segment) if part is not None else None,
        )
        usage = request.usage
        shape = shape_of(manifest, usage.output_tokens if usage is not None else 0, keys)
        fit = calibration.fit(model or None) if calibration is not None else None
        ratio = fit.ratio if fit is not None else 1.0
        shaped = ShapedRequest(
            request, model, times.get(request.reply), None, trust_of(request, flagged)
        )
        # A split not to be trusted leaves its total a bill all the same (a bill of 0: none).
        billed = usage.total_input_tokens if usage is not None else None
        sized_keys, sizes, shaped.note = _sized(
            shape, billed or None, ratio, sizing, request.number
        )
        shaped.write_ttl = sizing.ttl = _ttl(request, sizing.ttl)
        sizing.keys, sizing.sizes = sized_keys, sizes
        out.append(shaped)
        blocks = shape.blocks
        if blocks is not None and len(sizes) > len(blocks):  # the part the file does not show
            blocks = (*blocks, 1)
        yield RequestShape(
            sized_keys,
            sizes,
            shape.breakpoints,
            shape.output_tokens,
            shape.purpose,
            shape.fixed,
            blocks,
            at=shaped.at,
            write_ttl=shaped.write_ttl,
        )


def _ttl(request: RecordedRequest, previous: TTL | None) -> TTL | None:
    usage = request.usage
    if usage is None or not usage.cache_creation_input_tokens:
        return previous
    return "1h" if usage.cache_creation_1h_input_tokens else "5m"


def _seeds(shape: RequestShape, ratio: float) -> list[float]:
    """Each part's size in billed tokens before the bill is read: the unrecorded part as it
    is (sized from the bill already), the rest ctxlab's count times ``ratio``."""
    return [
        float(tokens) if key.startswith("unrecorded/") else tokens * ratio
        for key, tokens in zip(shape.keys, shape.tokens, strict=True)
    ]


def _sized(
    shape: RequestShape, billed: int | None, ratio: float, sizing: _Sizing, number: int
) -> tuple[Sequence[str], list[int], str]:
    """The keys and sizes of ``shape`` (see the module) and the note on what was assumed."""
    keys: Sequence[str] = shape.keys
    if sizing.alias:
        keys = [sizing.alias.get(key, key) for key in keys]
    common = _common(keys, sizing.keys)
    shared = sum(sizing.sizes[:common])
    seeds = _seeds(shape, ratio)
    if billed is None:
        return keys, [*sizing.sizes[:common], *_whole(seeds[common:])], ""
    note = ""
    if billed < shared:
        # What the request shares with the one before is more than its whole bill: that
        # prefix changed without the file saying so. Kept: the fixed part, if it fits; the
        # rest goes by new keys, in this request and the ones after.
        note = CHANGED
        common = min(common, shape.fixed)
        shared = sum(sizing.sizes[:common])
        if billed < shared:
            common, shared = 0, 0
        for key in shape.keys[common:]:
            sizing.alias[key] = f"{key}@changed{number}"
        keys = [*keys[:common], *(sizing.alias[key] for key in shape.keys[common:])]
    if common == len(keys) and billed > shared:
        keys, seeds, note = [*keys, f"unseen@{number}"], [*seeds, 0.0], GREW
    new = _spread(billed - shared, seeds[common:], shape.fixed - common)
    return keys, [*sizing.sizes[:common], *new], note


def _spread(total: int, seeds: Sequence[float], fixed: int) -> list[int]:
    """``total`` tokens over parts of ``seeds``: the first ``fixed`` (fixed parts) at their
    seed while it fits, the rest in proportion to theirs (evenly when all are 0)."""
    fixed = max(fixed, 0)
    lead = sum(seeds[:fixed])
    if lead > total or fixed >= len(seeds):
        return _share(total, seeds)
    first = _share(min(round(lead), total), seeds[:fixed])
    return [*first, *_share(total - sum(first), seeds[fixed:])]


def _share(total: int, weights: Sequence[float]) -> list[int]:
    """``total`` in whole tokens in proportion to ``weights``, adding up exactly."""
    if not weights:
        return []
    weight = sum(weights)
    if weight <= 0:
        weights, weight = [1.0] * len(weights), float(len(weights))
    running = itertools.accumulate(weights)
    ends = [round(total * part / weight) for part in running]
    ends[-1] = total
    return [end - start for start, end in zip([0, *ends[:-1]], ends, strict=True)]


def _whole(values: Sequence[float]) -> list[int]:
    return [round(v) for v in values]


def _common(keys: Sequence[str], other: Sequence[str]) -> int:
    count = 0
    for mine, theirs in zip(keys, other, strict=False):
        if mine != theirs:
            break
        count += 1
    return count
