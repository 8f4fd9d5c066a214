"""`Thresholds`: the token lines of a request, computed once by the engine and carried on its
manifest. The Lab draws them; nothing outside this module repeats the arithmetic."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from ctxlab.exceptions import UsageError
from ctxlab.messages import MAX_TOKENS
from ctxlab.util._checks import context_window as context_window_of
from ctxlab.util._checks import shown, whole_number

if TYPE_CHECKING:
    from ctxlab.config._config import ContextConfig
    from ctxlab.config._sections import BudgetPolicy

__all__ = ["Thresholds", "input_limit"]


def _reservation(
    context_window: int, policy: BudgetPolicy, max_output_tokens: int | None = None
) -> tuple[int, int]:
    # 000: one eighth of the window at most 4,096 for the output; 2 % margin; each >= 1 token;
    # "a larger explicit output request reserves more space".
    reservation = policy.output_reservation or max(1, min(context_window // 8, 4096))
    reservation = max(reservation, max_output_tokens or 0)
    margin = policy.safety_margin or max(1, context_window * 2 // 100)
    return reservation, margin


def input_limit(
    context_window: int | None, policy: BudgetPolicy, max_output_tokens: int | None = None
) -> int:
    """``window − output reservation − safety margin``, capped by ``max_input_tokens``.

    Defaults: the reservation is one eighth of the window, at most 4,096, or the request's
    ``max_output_tokens`` when larger; the margin is 2 % of the window; each at least one token.
    An unknown window uses ``unknown_window_input_limit``.
    """
    if not context_window:
        limit = policy.unknown_window_input_limit
    else:
        reservation, margin = _reservation(context_window, policy, max_output_tokens)
        limit = context_window - reservation - margin
    if policy.max_input_tokens:
        limit = min(limit, policy.max_input_tokens)
    return max(limit, 0)


@dataclass(frozen=True, slots=True)
class Thresholds:
    """The token lines in force for a request.

    Build it with `Thresholds.compute` (the pipeline does, once per config and window); read it
    from ``manifest.thresholds`` or ``agent.next_thresholds()``.
    """

    context_size: int
    """The context window the ratios refer to (the unknown-window fallback when unknown)."""
    notice_tokens: int
    """Above this total the request carries the usage notice (and the CompressContext tool
    may compress): ``(trigger_ratio − context_buffer_ratio) × context_size``."""
    trigger_tokens: int
    """Above this total the conversation is compacted: ``trigger_ratio × context_size``,
    never above the input limit."""
    reserve_tokens: int
    """The size of the tail a compaction keeps: ``reserve_ratio × context_size``."""
    input_limit: int
    """The hard limit of the request's input tokens."""
    output_reservation: int = 0
    """Tokens kept free for the response (0 when the window is unknown)."""
    safety_margin: int = 0
    """Tokens kept free against counting error (0 when the window is unknown)."""

    @classmethod
    def compute(
        cls,
        config: ContextConfig,
        context_window: int | None,
        max_output_tokens: int | None = None,
    ) -> Thresholds:
        """The lines of ``config`` for a model with ``context_window`` tokens (None: unknown)
        asked for up to ``max_output_tokens`` per response."""
        context_window, max_output_tokens = _checked(config, context_window, max_output_tokens)
        context_size = context_window or config.budget.unknown_window_input_limit
        limit = input_limit(context_window, config.budget, max_output_tokens)
        trigger = round(config.trigger_ratio * context_size)
        if config.compaction.trigger_tokens is not None:  # an absolute trigger, when lower
            trigger = min(trigger, config.compaction.trigger_tokens)
        reservation, margin = (
            _reservation(context_window, config.budget, max_output_tokens)
            if context_window
            else (0, 0)
        )
        return cls(
            context_size=context_size,
            # Rounded, not truncated: (0.3 − 0.2) × 200,000 is 19,999.999… in floating point.
            notice_tokens=round(
                (config.trigger_ratio - config.context_buffer_ratio) * context_size
            ),
            trigger_tokens=min(trigger, limit),
            reserve_tokens=round(config.reserve_ratio * context_size),
            input_limit=limit,
            output_reservation=reservation,
            safety_margin=margin,
        )

    def to_dict(self) -> dict[str, int]:
        """The lines as a plain dict (the form stored in session logs)."""
        return asdict(self)

    # Until 0.2 thresholds were a ``dict[str, int]``; reading them by key still works.
    def __getitem__(self, key: str) -> int:
        if key not in self.__dataclass_fields__:
            raise KeyError(key)
        value: int = getattr(self, key)
        return value

    def get(self, key: str, default: int = 0) -> int:
        """Deprecated dict-style access (use the attributes)."""
        if not isinstance(key, str):
            msg = f"a threshold's name is text (e.g. 'input_limit'), got {shown(key)}"
            raise UsageError(msg)
        found = getattr(self, key, None) if key in self.__dataclass_fields__ else None
        return whole_number(default, "default", high=MAX_TOKENS) if found is None else found


def _checked(
    config: object, context_window: object, max_output_tokens: object
) -> tuple[int | None, int | None]:
    # What `Thresholds.compute` takes, checked: a config (of any class with a budget: the
    # config module sits above this one), a window, an output size.
    if not hasattr(config, "budget") or isinstance(config, type):
        msg = f"config must be a ContextConfig, got {shown(config)}"
        raise UsageError(msg)
    # 0 is an unknown window, as None (a model that does not say its size).
    unknown = context_window is None or (
        type(context_window) in (int, float) and context_window == 0
    )
    window = None if unknown else context_window_of(context_window)
    output = (
        None
        if max_output_tokens is None
        else whole_number(max_output_tokens, "max_output_tokens", low=1)
    )
    return window, output
