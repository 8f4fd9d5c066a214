"""`ProviderUsage`: what a provider billed for one model request — beside the messages it
describes (as pydantic-ai's ``usage.py``), so importers, models and the session log read it
without the manifest."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ProviderUsage"]


@dataclass(frozen=True, slots=True)
class ProviderUsage:
    """What the provider billed for the request (known only after the response)."""

    input_tokens: int
    output_tokens: int
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0

    @property
    def total_input_tokens(self) -> int:
        """Input plus cache reads and writes: comparable to the manifest's estimate."""
        return self.input_tokens + self.cache_read_input_tokens + self.cache_creation_input_tokens
