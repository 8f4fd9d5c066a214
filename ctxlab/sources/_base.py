"""What every source of steps a Lab observes has in common, besides the agent itself: a name,
the model it stands for, a config in force, the manifests so far and typed events."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ctxlab.agent._watched import Capabilities
from ctxlab.config._config import ContextConfig, require_config
from ctxlab.events import Event, Subscribers
from ctxlab.manifest import ContextManifest, Thresholds
from ctxlab.tokens import TokenCache, TokenCounter, default_counter
from ctxlab.util._checks import context_window

__all__ = ["ModelInfo", "StepSource"]


@dataclass(frozen=True)
class ModelInfo:
    """The model a source of steps stands for (what a Lab reads of ``agent.model``)."""

    name: str
    context_window: int
    max_output_tokens: int | None = None


class StepSource:
    """Base of `ReplaySession` and `ObservedSession`: the part of the agent's interface a Lab
    observes (``subscribe``, ``manifests``, ``context_config``, ``next_thresholds``: the
    `Watched` contract)."""

    capabilities = Capabilities(
        read_only=True,
        note="watching an agent of another framework: its own loop sends the requests; a "
        "config applied takes effect at its next request",
    )

    def __init__(
        self,
        name: str,
        model: ModelInfo,
        config: ContextConfig | None,
        counter: TokenCounter | None,
    ) -> None:
        context_window(model.context_window)  # a UsageError before any step is prepared
        self.name = name
        self.model = model
        self._config = require_config(config) if config is not None else ContextConfig()
        self.token_cache = TokenCache(counter or default_counter())
        self.sources: dict[str, Any] = {}
        self.manifests: list[ContextManifest] = []
        self.running = False
        self._subscribers = Subscribers()

    @property
    def context_config(self) -> ContextConfig:
        """The config in force."""
        return self._config

    @context_config.setter
    def context_config(self, config: ContextConfig) -> None:
        self._config = require_config(config)

    def next_thresholds(self) -> Thresholds:
        """The lines of the config in force."""
        return Thresholds.compute(
            self._config, self.model.context_window, max_output_tokens=self.model.max_output_tokens
        )

    def subscribe(self, callback: Callable[[Event], Any]) -> Callable[[], None]:
        """Call ``callback(event)`` for every step; returns the unsubscriber."""
        return self._subscribers.subscribe(callback)
