"""`ContextManifest`: what one prepared request contains, what was done to it, and whether it passed.

A manifest holds metadata, never prompt bodies. It is built at every preparation, failures
included, and compared with the previous one to show what appeared, went away or shrank.
Items and transforms are slotted dataclasses rather than pydantic models: a long session builds
hundreds of items per step, and this keeps preparation well under a millisecond.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal

from ctxlab.exceptions import MessageFormatError, UsageError
from ctxlab.manifest._html import manifest_html
from ctxlab.manifest._kinds import ItemKind, Purpose, TransformKind
from ctxlab.manifest._thresholds import Thresholds
from ctxlab.messages._usage import ProviderUsage
from ctxlab.util._checks import shown
from ctxlab.util._views import Prefix

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "PLACEMENTS",
    "ContextManifest",
    "ManifestDiff",
    "ManifestItem",
    "Placement",
    "ProviderUsage",
    "Transform",
    "Validation",
]

Placement = Literal[
    "unrecorded", "system", "tools", "summary", "conversation", "transient", "references"
]
"""Where an item sits in the request. ``unrecorded``: what a recorded agent sent that its
recording does not hold (a harness's own System prompt and tool schemas), sized from the bill or
stated — it leads the request, as the prefix it stands for does."""
PLACEMENTS: tuple[Placement, ...] = (
    "unrecorded",
    "system",
    "tools",
    "summary",
    "conversation",
    "transient",
    "references",
)
Validation = Literal[
    "passed",
    "budget_exceeded",
    "invalid_tool_pairs",
    "invalid_conversation",
    "state_conflict",
    "build_failed",
]
"""The outcome of a preparation."""


@dataclass(frozen=True, slots=True)
class ManifestItem:
    """One retained piece of the request: a message, a tool schema, a material block, ..."""

    id: str
    """Stable id: ``system/<name>``, ``tool/<name>``, ``message/<hash>``, ``source/<src>/<block>``,
    ``unrecorded/<what>``."""
    kind: ItemKind
    """``system``, ``tool_schema``, ``summary``, ``message``, ``task``, ``runtime``,
    ``reference``, ``memory``, ``knowledge``, ``notice``, ``unrecorded``."""
    placement: Placement
    """Where it is placed in the request."""
    tokens: int
    """Its estimated tokens."""
    content_hash: str
    """Hash of its content: compare across requests to see whether it changed."""
    source_id: str | None = None
    """The material's source (``source/<name>``, ``workspace/MEMORY.md``, ...); None for messages."""
    revision: str | None = None
    """The material's business revision, or its content hash when none was given."""
    role: str | None = None
    """For messages: ``user`` or ``assistant``."""
    blocks: int = 1
    """The content blocks it sends (a message's blocks; 1 for anything else): what Anthropic's
    prompt cache counts when it looks back from a breakpoint for an earlier cached prefix."""


class PlacedPrefix(Prefix[ManifestItem]):
    """The first ``end`` items of ``base`` with each placement's running token total
    (`placed_totals` of ``base``): the requests of a recording share one itemization, and a
    request's `ContextManifest.totals` is then a lookup, not a walk of its items (a walk of
    every request's items cost n² in all: 10 s at 5,000 requests)."""

    __slots__ = ("running",)

    def __init__(
        self, base: Sequence[ManifestItem], end: int, running: Mapping[str, Sequence[int]]
    ) -> None:
        super().__init__(base, end)
        self.running = running

    def totals(self) -> dict[str, int]:
        """Tokens per placement of the prefix (every placement present, zeros included)."""
        return {placement: self.running[placement][self.end] for placement in PLACEMENTS}


def placed_totals(items: Sequence[ManifestItem]) -> dict[str, list[int]]:
    """Each placement's running token total over ``items``: at ``n``, that of the first ``n``
    (so every list starts at 0)."""
    running: dict[str, list[int]] = {placement: [0] for placement in PLACEMENTS}
    last: dict[str, int] = dict.fromkeys(PLACEMENTS, 0)
    for item in items:
        last[item.placement] += item.tokens
        for placement, column in running.items():
            column.append(last[placement])
    return running


@dataclass(frozen=True, slots=True)
class Transform:
    """One action of the preparation. ``str(t)`` is its code, e.g. ``omitted_for_budget:<id>``."""

    kind: TransformKind
    """What was done; `TRANSFORM_KINDS` says what each kind means."""
    target: str = ""
    """What it applied to (an item id, a tool call id, a source)."""
    detail: str = ""
    """A short note: a path, a reason, a count."""
    tokens_before: int | None = None
    """Tokens of the target before the action."""
    tokens_after: int | None = None
    """Tokens of the target after it."""

    def __str__(self) -> str:
        parts: list[str] = [self.kind]
        if self.target:
            parts.append(self.target)
        if self.detail and self.kind == "source_unavailable":
            parts.append(self.detail)
        return ":".join(parts)


@dataclass(frozen=True, slots=True)
class ManifestDiff:
    """How a request differs from the previous one of the same agent."""

    added: tuple[str, ...] = ()
    """Item ids new in this request."""
    removed: tuple[str, ...] = ()
    """Item ids present before and gone now."""
    shrank: tuple[tuple[str, int, int], ...] = ()
    """(id, tokens before, tokens after) of items whose tokens went down."""
    grew: tuple[tuple[str, int, int], ...] = ()
    """(id, tokens before, tokens after) of items whose tokens went up."""

    @property
    def empty(self) -> bool:
        """True when nothing changed."""
        return not (self.added or self.removed or self.shrank or self.grew)


@dataclass(frozen=True)
class ContextManifest:
    """The build manifest of one model request preparation."""

    request_id: str
    """Id of this request's preparation (the reference's ``callId``; not the agent call, the
    session, the turn or a tool call)."""
    purpose: Purpose
    """``reasoning``, ``summary``, ``compaction`` or ``recovery``."""
    model: str
    """The model the request is for."""
    estimated_input_tokens: int
    """Estimated input tokens of the whole request; -1 when the build failed early."""
    input_limit: int
    """The effective input limit; -1 when unknown."""
    counting_method: str
    """How tokens were counted (``unavailable`` after an early failure)."""
    exact: bool
    """Whether the counts are the provider's own."""
    items: Sequence[ManifestItem]
    """The retained items, in request order (a tuple, or a tuple-like view of one shared by
    several manifests: a recording's requests within a segment)."""
    transforms: tuple[Transform, ...]
    """The actions of this preparation, in order."""
    validation: Validation
    """``passed`` or why not."""
    context_size: int = 0
    """The model's context window the ratios refer to."""
    thresholds: Thresholds | None = None
    """The token lines in force (None when the build failed before they were known)."""
    previous_items: Sequence[ManifestItem] | None = field(default=None, repr=False)
    """The items of the previous request, from which `diff` is computed on first access."""
    provider_usage: ProviderUsage | None = None
    """Provider-reported usage, attached after the response."""
    error: str | None = None
    """The failure's message when validation did not pass."""
    exact_input_tokens: int | None = None
    """The request's input tokens counted by the provider before sending (a model with exact
    counting switched on, e.g. ``AnthropicModel(exact_counts=True)``); None otherwise."""
    notes: tuple[str, ...] = ()
    """What the request held that its items cannot show (a recording's unrecorded System
    prompt and tool schemas, with the estimate of their size)."""
    provider_items: tuple[ManifestItem, ...] | None = field(default=None, repr=False)
    """The items as the provider's model read them, when the provider edited the request
    itself (Anthropic's server-side ``clear_tool_uses`` / ``clear_thinking``, by what it
    reported it cleared): what the request is billed on. None: the provider sent `items` as
    they are."""
    sent_at: float | None = None
    """When the agent sent the request: wall-clock POSIX seconds (UTC), set by the agent loop
    as it sends (a recording's request as recorded: its reply's time on the recording's
    clock); None for a replay (its requests take their times from the transcript) and for a
    request never sent. The cost model's clock (`ctxlab.analysis.costs_of_manifests`)."""

    @property
    def billed_items(self) -> Sequence[ManifestItem]:
        """The items the provider bills: `provider_items` when it edited the request, else
        `items`."""
        return self.items if self.provider_items is None else self.provider_items

    def __repr__(self) -> str:
        return (
            f"ContextManifest({self.request_id!r}, {self.purpose}, "
            f"{self.estimated_input_tokens}/{self.input_limit} tokens, {len(self.items)} items, "
            f"{len(self.transforms)} transforms, {self.validation})"
        )

    def _repr_html_(self) -> str:
        return manifest_html(self)

    @property
    def call_id(self) -> str:
        """Deprecated alias of `request_id` (kept for one release)."""
        return self.request_id

    @cached_property
    def diff(self) -> ManifestDiff | None:
        """Difference to the previous request (None for the first); computed when first read."""
        if self.previous_items is None:
            return None
        return _diff(self.previous_items, self.items)

    @property
    def totals(self) -> dict[str, int]:
        """Tokens per placement (every placement present, zeros included)."""
        if isinstance(self.items, PlacedPrefix):
            return self.items.totals()  # a lookup: its running totals are shared
        totals: dict[str, int] = dict.fromkeys(PLACEMENTS, 0)
        for item in self.items:
            totals[item.placement] += item.tokens
        return totals

    @property
    def transform_codes(self) -> list[str]:
        """The transforms as their codes, e.g. ``omitted_for_budget:source/x/y``."""
        return [str(t) for t in self.transforms]

    def with_usage(self, usage: ProviderUsage) -> ContextManifest:
        """A copy carrying the provider's usage."""
        return dataclasses.replace(self, provider_usage=usage)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (the form stored in session logs and sent over the wire)."""
        data = {
            f.name: getattr(self, f.name)
            for f in dataclasses.fields(self)
            if f.name
            not in (
                "items",
                "transforms",
                "previous_items",
                "provider_usage",
                "provider_items",
                "sent_at",
            )
        }
        if self.sent_at is not None:
            # Only when sent: a replay's manifests, and logs written before the clock, hold none.
            data["sent_at"] = self.sent_at
        data["items"] = [dataclasses.asdict(i) for i in self.items]
        if self.provider_items is not None:
            data["provider_items"] = [dataclasses.asdict(i) for i in self.provider_items]
        data["transforms"] = [dataclasses.asdict(t) for t in self.transforms]
        data["provider_usage"] = (
            dataclasses.asdict(self.provider_usage) if self.provider_usage else None
        )
        data["diff"] = dataclasses.asdict(self.diff) if self.diff is not None else None
        data["thresholds"] = self.thresholds.to_dict() if self.thresholds else None
        data["totals"] = self.totals
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ContextManifest:
        """A manifest back from `to_dict`'s form (a session log's ``context_build`` record;
        logs written before 0.2 say ``call_id``). A record that is not one — not a mapping, a
        field missing or of another kind — is a `MessageFormatError` saying which."""
        if not isinstance(data, Mapping):
            msg = f"a manifest record is a mapping (ContextManifest.to_dict()), got {shown(data)}"
            raise UsageError(msg)
        try:
            return cls._from_dict(data)
        except KeyError as exc:
            msg = f"a manifest record lacks its field {exc}: it cannot be read back"
            raise MessageFormatError(msg) from exc
        except (TypeError, ValueError) as exc:
            msg = f"a manifest record holds a field of another kind: {exc}"
            raise MessageFormatError(msg) from exc

    @classmethod
    def _from_dict(cls, data: Mapping[str, Any]) -> ContextManifest:
        lines = data.get("thresholds")
        usage = data.get("provider_usage")
        return cls(
            request_id=str(data.get("request_id") or data.get("call_id") or ""),
            purpose=data["purpose"],
            model=str(data.get("model", "")),
            estimated_input_tokens=int(data["estimated_input_tokens"]),
            input_limit=int(data["input_limit"]),
            counting_method=str(data.get("counting_method", "")),
            exact=bool(data.get("exact", False)),
            items=tuple(ManifestItem(**item) for item in data.get("items", ())),
            transforms=tuple(Transform(**t) for t in data.get("transforms", ())),
            validation=data["validation"],
            context_size=int(data.get("context_size", 0)),
            thresholds=Thresholds(**lines) if isinstance(lines, Mapping) else None,
            provider_usage=ProviderUsage(**usage) if isinstance(usage, Mapping) else None,
            error=data.get("error"),
            exact_input_tokens=data.get("exact_input_tokens"),
            notes=tuple(str(n) for n in data.get("notes") or ()),
            sent_at=_sent_at(data.get("sent_at")),
            provider_items=(
                tuple(ManifestItem(**item) for item in data["provider_items"])
                if data.get("provider_items") is not None
                else None
            ),
        )

    def items_frame(self) -> pd.DataFrame:
        """One row per item: id, kind, placement, tokens, source_id, revision, hash, role,
        content blocks."""
        import pandas as pd

        columns = [f.name for f in dataclasses.fields(ManifestItem)]
        rows = [[getattr(item, c) for c in columns] for item in self.items]
        return pd.DataFrame(rows, columns=columns)

    def transforms_frame(self) -> pd.DataFrame:
        """One row per transform: code, kind, target, detail, tokens before and after."""
        import pandas as pd

        columns = [f.name for f in dataclasses.fields(Transform)]
        rows = [[str(t), *(getattr(t, c) for c in columns)] for t in self.transforms]
        return pd.DataFrame(rows, columns=["code", *columns])


def _diff(
    before_items: Sequence[ManifestItem], after_items: Sequence[ManifestItem]
) -> ManifestDiff:
    before = {item.id: item.tokens for item in before_items}
    after = {item.id: item.tokens for item in after_items}
    shrank: list[tuple[str, int, int]] = []
    grew: list[tuple[str, int, int]] = []
    for item_id, tokens in after.items():
        old = before.get(item_id)
        if old is not None and old != tokens:
            (shrank if tokens < old else grew).append((item_id, old, tokens))
    return ManifestDiff(
        added=tuple(i for i in after if i not in before),
        removed=tuple(i for i in before if i not in after),
        shrank=tuple(shrank),
        grew=tuple(grew),
    )


def _sent_at(value: object) -> float | None:
    """A stored ``sent_at`` back: None, or a finite number of seconds (anything else a
    `ValueError`, which `ContextManifest.from_dict` reports as a malformed record)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value != value:
        msg = f"sent_at is POSIX seconds or null, got {shown(value)}"
        raise ValueError(msg)
    if value in (float("inf"), float("-inf")):
        msg = f"sent_at is a finite number of seconds, got {value}"
        raise ValueError(msg)
    return float(value)
