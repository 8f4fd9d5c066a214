"""Both provider adapters against their local servers, behind one face, so that one test runs
on `AnthropicModel` (Messages API) and `OpenAIModel` (Chat Completions) alike. The waits of
their retries are recorded by a fake clock instead of slept."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ctxlab.messages import UserMessage
from ctxlab.messages._request import ModelRequest
from ctxlab.models import AnthropicModel, Model, OpenAIModel
from tests.models import chat_api, messages_api
from tests.models._local_server import LocalServer

__all__ = ["PROVIDERS", "FakeClock", "Provider", "ask"]


@dataclass
class FakeClock:
    """``sleep`` records each wait and returns at once; ``now`` is a fixed wall clock."""

    waits: list[float] = field(default_factory=list)
    time: float = 1_700_000_000.0

    async def sleep(self, seconds: float) -> None:
        self.waits.append(seconds)
        self.time += seconds

    def now(self) -> float:
        return self.time


@dataclass(frozen=True)
class Provider:
    """One adapter with its server: ``reply(text, **usage)`` is a body the server answers,
    ``error(status)`` one of its errors, ``model(api, **kw)`` the adapter pointed at it."""

    name: str
    server: Callable[..., LocalServer]
    reply: Callable[..., dict[str, Any]]
    error: Callable[[int], tuple[int, dict[str, Any]]]
    make: Callable[..., Model]

    def model(
        self, api: Any, clock: FakeClock | None = None, *, jitter: float = 0.0, **kwargs: Any
    ) -> Any:
        """The adapter for ``api``; its waits go to ``clock`` (jitter fixed at ``jitter``)."""
        model: Any = self.make(api, **kwargs)
        if clock is not None:
            model.retry_policy = dataclasses.replace(
                model.retry_policy, sleep=clock.sleep, now=clock.now, jitter=lambda: jitter
            )
        return model


def _anthropic(api: Any, **kwargs: Any) -> AnthropicModel:
    kwargs.setdefault("api_key", "test-key")
    return AnthropicModel("claude-sonnet-4-6", base_url=api.url, **kwargs)


def _openai(api: Any, **kwargs: Any) -> OpenAIModel:
    return OpenAIModel("local-model", base_url=api.url, **kwargs)


def _anthropic_error(status: int) -> tuple[int, dict[str, Any]]:
    kind = {429: "rate_limit_error", 529: "overloaded_error", 400: "invalid_request_error"}
    return messages_api.error(status, kind.get(status, "api_error"), f"status {status}")


def _openai_error(status: int) -> tuple[int, dict[str, Any]]:
    return chat_api.error(status, "rate_limit_exceeded" if status == 429 else "x", f"{status}")


def _openai_reply(text: str, **usage: int) -> dict[str, Any]:
    return chat_api.completion(text, **usage)


PROVIDERS = [
    Provider(
        "anthropic",
        lambda script=(): messages_api.MessagesAPI(list(script)),
        messages_api.message,
        _anthropic_error,
        _anthropic,
    ),
    Provider(
        "openai",
        lambda script=(): chat_api.ChatAPI(list(script)),
        _openai_reply,
        _openai_error,
        _openai,
    ),
]
"""The two adapters, for ``pytest.mark.parametrize("provider", PROVIDERS, ids=...)``."""


def ask(text: str = "What is 2 + 3?", system: str = "Be brief.") -> ModelRequest:
    """A one-message request."""
    return ModelRequest(system=system, messages=(UserMessage(content=text),), tools=())
