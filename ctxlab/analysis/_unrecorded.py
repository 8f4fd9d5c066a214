"""The part of each recorded request its file does not hold — a harness's own System prompt,
tool schemas and reminders — modelled, so that replays, what-ifs, windows and costs answer on
what was sent, not on what the file holds.

Its size comes, in this order of preference, from:

- **what the user states**: ``unrecorded_tokens=N`` (tokens a request), or a harness profile
  (``unrecorded_tokens="claude_code"``, `UNRECORDED_PROFILES`: a size from the harness's
  public figures, with its source and version);
- **the bill**, where the recording has usage: what the provider billed beyond ctxlab's count
  of what the file shows. `ctxlab.calibrate` fits ``billed ≈ fixed + ratio × counted`` per model
  — robust (medians) to odd requests, measured again after each of the session's own
  compactions (the agent re-attaches what the file does not show) and per model (a ``/model``
  switch changes the tokenizer and the cache) — and ``fixed`` is this part, in the provider's
  tokens;
- **nothing**: without usage or a statement, the figures exclude it and `unrecorded_note` says
  so.

A request of the recording *as recorded* carries the size of its model and segment; a replayed
or what-if request the size of its model's first segment (ctxlab's pipeline does not restart
where the recorded agent compacted).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, TypeAlias

from ctxlab.analysis._recorded import unrecorded_parts
from ctxlab.exceptions import UsageError
from ctxlab.io._arguments import checked_transcript
from ctxlab.materials import Unrecorded
from ctxlab.messages import MAX_TOKENS, AssistantMessage
from ctxlab.util._checks import shown, whole_number

if TYPE_CHECKING:
    from ctxlab.analysis._calibration import Calibration
    from ctxlab.io._transcript import Transcript

__all__ = [
    "UNRECORDED_PROFILES",
    "UnrecordedPart",
    "UnrecordedProfile",
    "UnrecordedTokens",
    "checked_unrecorded_tokens",
    "reply_models",
    "unrecorded_note",
    "unrecorded_part",
]


@dataclass(frozen=True)
class UnrecordedProfile:
    """A harness's unrecorded part from its public figures."""

    tokens: int
    """Tokens a request (the provider's)."""
    parts: str
    """What it stands for."""
    source: str
    """Where the figure comes from, and for which version."""


UNRECORDED_PROFILES: dict[str, UnrecordedProfile] = {
    "claude_code": UnrecordedProfile(
        18_800,
        "System prompt, tool schemas",
        "Claude Code 2.1 with Opus 4.6, its own /context report: System prompt 3.3k + System "
        "tools 15.5k tokens (A. Wadhara, 'Inside Claude Code's /context command', 2026); "
        "without CLAUDE.md, MCP tools and skills, which vary from user to user",
    ),
}
"""Known harnesses' unrecorded parts (``unrecorded_tokens="claude_code"``). A recording with
usage needs none: its own bill sizes the part (and a user's CLAUDE.md and MCP tools with it)."""

Method = Literal["billed", "stated", "profile"]


@dataclass(frozen=True)
class UnrecordedPart:
    """The unrecorded part of a recording's requests: its size per model and segment, what it
    stands for and how its size is known (see the module's documentation)."""

    parts: str
    """What it stands for (``System prompt, tool schemas``)."""
    method: Method
    """``billed`` (inferred from the recording's usage), ``stated`` or ``profile``."""
    detail: str
    """How, in words: the fit and its spread, the figure stated, the profile's source."""
    sizes: Mapping[tuple[str | None, int], int] = field(default_factory=dict)
    """Tokens a request by (model, segment); ``(None, 0)`` when one size holds for all."""
    models: Mapping[int, str] = field(default_factory=dict, repr=False)
    """The model of each reply (by message index), where the recording says."""

    @property
    def tokens(self) -> int:
        """The size of the first segment's requests (of the session's first model)."""
        return next(iter(self.sizes.values()), 0)

    def size(self, reply: int | None = None, segment: int = 0) -> int:
        """Tokens of the request that produced reply ``reply`` (a message index), in recorded
        ``segment``: its model's size there, else in the nearest earlier segment, else the
        first model's."""
        return self._entry(reply, segment)[1]

    def at(self, reply: int | None = None, segment: int = 0) -> Unrecorded:
        """The part as the request of ``reply`` in ``segment`` carries it (`size`)."""
        (model, found), tokens = self._entry(reply, segment)
        key = f"{model or 'all'}/{found}" if self.method == "billed" else self.method
        return Unrecorded(tokens, self.parts, self._how(model, found), key)

    def _entry(self, reply: int | None, segment: int) -> tuple[tuple[str | None, int], int]:
        segment = whole_number(segment, "segment", high=MAX_TOKENS)
        if reply is not None:
            reply = whole_number(reply, "reply", high=MAX_TOKENS)
        model = self.models.get(reply) if reply is not None else None
        for wanted in (model, self._first_model):
            known = [s for (m, s) in self.sizes if m == wanted and s <= segment]
            if known:
                key = (wanted, max(known))
                return key, self.sizes[key]
        key = next(iter(self.sizes), (None, 0))
        return key, self.sizes.get(key, 0)

    @property
    def _first_model(self) -> str | None:
        return next(iter(self.sizes), (None, 0))[0]

    def _how(self, model: str | None, segment: int) -> str:
        if self.method != "billed":
            return self.detail
        where = f"{model}, " if model else ""
        after = f"after recorded compaction {segment}" if segment else "first requests"
        return f"inferred from the bill ({where}{after})"

    def describe(self) -> str:
        """One line: its size, what it stands for and how its size is known."""
        sizes = sorted(set(self.sizes.values()))
        size = f"{sizes[0]:,}" if len(sizes) == 1 else f"{sizes[0]:,}–{sizes[-1]:,}"
        return f"not recorded ({self.parts}): {size} tokens a request — {self.detail}"

    def __repr__(self) -> str:
        return f"UnrecordedPart({self.describe()!r})"


UnrecordedTokens: TypeAlias = int | str | UnrecordedPart | None
"""What ``unrecorded_tokens=`` takes: tokens a request, a `UNRECORDED_PROFILES` name, an
`UnrecordedPart`, or None (sized from the bill where there is one)."""


def unrecorded_part(
    transcript: Transcript,
    unrecorded_tokens: UnrecordedTokens = None,
    *,
    calibration: Calibration | None = None,
) -> UnrecordedPart | None:
    """The unrecorded part of ``transcript``'s requests: as stated (``unrecorded_tokens``: a
    number of tokens a request, a `UNRECORDED_PROFILES` name, or an `UnrecordedPart`), else
    inferred from the bill (``calibration``: the recording's own, `ctxlab.calibrate`), else
    None — when the recording holds all of each request, or nothing says how large the rest
    was (the figures then exclude it: `unrecorded_note`). Raises `UsageError` for a value it
    cannot read."""
    checked_transcript(transcript, "unrecorded_part")
    # (Duck-typed: the calibration module is imported for type checking only.)
    if calibration is not None and not hasattr(calibration, "fits"):
        msg = (
            "calibration must be the recording's Calibration (ctxlab.calibrate(transcript)) or "
            f"None, got {shown(calibration)}"
        )
        raise UsageError(msg)
    if isinstance(unrecorded_tokens, UnrecordedPart):
        return unrecorded_tokens
    checked_unrecorded_tokens(unrecorded_tokens)
    parts = ", ".join(unrecorded_parts(transcript)) or "what the recording does not hold"
    if isinstance(unrecorded_tokens, str):
        profile = UNRECORDED_PROFILES[unrecorded_tokens]
        detail = f"profile {unrecorded_tokens!r}: {profile.source}"
        return UnrecordedPart(profile.parts, "profile", detail, {(None, 0): profile.tokens})
    if isinstance(unrecorded_tokens, int):
        detail = f"stated: {unrecorded_tokens:,} tokens a request (unrecorded_tokens=)"
        return UnrecordedPart(parts, "stated", detail, {(None, 0): unrecorded_tokens})
    if not unrecorded_parts(transcript) or calibration is None or not calibration.fits:
        return None
    return _from_bill(transcript, parts, calibration)


def checked_unrecorded_tokens(value: object) -> None:
    """`UsageError` unless ``value`` is what ``unrecorded_tokens=`` takes (`UnrecordedTokens`)."""
    if value is None or isinstance(value, UnrecordedPart):
        return
    if isinstance(value, str):
        if value not in UNRECORDED_PROFILES:
            msg = (
                f"unrecorded_tokens={shown(value)} is no known harness profile; pass a number of "
                f"tokens a request, or one of {', '.join(sorted(UNRECORDED_PROFILES))}"
            )
            raise UsageError(msg)
        return
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_TOKENS:
        msg = (
            f"unrecorded_tokens must be a whole number of tokens a request (0 to {MAX_TOKENS:,}), "
            f"a profile name ({', '.join(sorted(UNRECORDED_PROFILES))}) or None, got {shown(value)}"
        )
        raise UsageError(msg)


def _from_bill(transcript: Transcript, parts: str, calibration: Calibration) -> UnrecordedPart:
    sizes: dict[tuple[str | None, int], int] = {}
    lines = []
    first = calibration.fit()
    for fit in sorted(calibration.fits, key=lambda f: f is not first):
        for segment, fixed in sorted(fit.fixed.items()):
            sizes[(fit.model, segment)] = max(round(fixed), 0)
        low, high = fit.fixed_spread[min(fit.fixed)]
        lines.append(
            f"{fit.model or 'the model'}: ratio {fit.ratio:.3f}, IQR {low:,.0f}–{high:,.0f}"
        )
    detail = (
        "inferred from the bill: billed − ratio × ctxlab's count of what the file shows, median "
        "over each model's first requests and again after each recorded compaction ("
        + "; ".join(lines)
        + ")"
    )
    return UnrecordedPart(parts, "billed", detail, sizes, reply_models(transcript))


def reply_models(transcript: Transcript) -> dict[int, str]:
    """The model of each reply, by its message index, where the recording says."""
    models = transcript.meta.get("reply_models")
    by_rank = models if isinstance(models, Mapping) else {}
    only = transcript.models
    single = only[0] if len(only) == 1 else None
    replies = [i for i, m in enumerate(transcript.messages) if isinstance(m, AssistantMessage)]
    out: dict[int, str] = {}
    for rank, index in enumerate(replies):
        model = by_rank.get(str(rank)) or single
        if model:
            out[index] = str(model)
    return out


def unrecorded_note(transcript: Transcript, part: UnrecordedPart | None) -> str | None:
    """What the figures say of the unrecorded part, in one line: its size and how it is known
    (`UnrecordedPart.describe`), or — when the recording omits part of each request and nothing
    sizes it — that the figures exclude it and how to state it; None when nothing is
    missing."""
    if part is not None:
        return part.describe()
    missing = unrecorded_parts(transcript)
    if not missing:
        return None
    return (
        f"not recorded: {', '.join(missing)} — no usage in the file to size them from, so every "
        "figure here excludes them; state their size with unrecorded_tokens=N (tokens a "
        f"request) or a harness profile ({', '.join(sorted(UNRECORDED_PROFILES))})"
    )
