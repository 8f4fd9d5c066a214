"""What a Lab watches: the contract an `Agent` and every step source meet, and the
capabilities each declares (so the Lab asks what a source can do, never what class it is)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from ctxlab.config import ContextConfig
    from ctxlab.manifest import ContextManifest, Thresholds
    from ctxlab.tokens import TokenCache

__all__ = ["Capabilities", "Watched"]


@dataclass(frozen=True)
class Capabilities:
    """What a watched source can do from a Lab."""

    read_only: bool = False
    """Nothing to send or compact from the Lab (a recording, another framework's agent)."""
    replays: bool = False
    """Applying a config replays it from the start (a recording); else it takes effect at the
    next request."""
    note: str = ""
    """What the Lab's status line says of it when it opens."""


@runtime_checkable
class Watched(Protocol):
    """The part of an agent's interface a Lab observes; `Agent` and every `StepSource` have it."""

    name: str
    capabilities: Capabilities

    @property
    def model(self) -> Any: ...

    @property
    def manifests(self) -> list[ContextManifest]: ...

    @property
    def token_cache(self) -> TokenCache: ...

    @property
    def sources(self) -> dict[str, Any]: ...

    @property
    def context_config(self) -> ContextConfig: ...

    @context_config.setter
    def context_config(self, config: ContextConfig) -> None: ...

    def subscribe(self, callback: Callable[[Any], Any]) -> Callable[[], None]: ...

    def next_thresholds(self) -> Thresholds: ...
