"""`ReplaySession`: a recorded transcript as a source of steps, replayed through the pipeline.

It speaks the part of the agent's interface a Lab observes — ``subscribe``, ``manifests``,
``context_config`` (a new config replays again), ``next_thresholds`` — and emits the same typed
events: a ``context_build`` per replayed request and a ``model_response`` carrying the usage the
provider reported for that step, when the transcript recorded it.
"""

from __future__ import annotations

from ctxlab._config import ContextConfig
from ctxlab._replay import Transcript, replay
from ctxlab._step_source import ModelInfo, StepSource
from ctxlab.agent._events import CompactionEvent, ContextBuildEvent, ModelResponseEvent
from ctxlab.manifest import ContextManifest
from ctxlab.tokens import TokenCounter

__all__ = ["ReplaySession"]


class ReplaySession(StepSource):
    """A transcript replayed under a config, step by step, without calling a model.

    Args:
        transcript: What to replay (see `ctxlab.load`).
        context_window: The window of the model the session is replayed for.
        config: The config to replay under (the defaults when omitted; setting
            ``context_config`` takes effect at the next `run`).
        counter: How to count tokens (tiktoken cl100k_base when omitted).
    """

    def __init__(
        self,
        transcript: Transcript,
        *,
        context_window: int,
        config: ContextConfig | None = None,
        counter: TokenCounter | None = None,
    ) -> None:
        model = ModelInfo(f"replay of {transcript.name}", context_window)
        super().__init__(transcript.name, model, config, counter)
        self.transcript = transcript

    async def run(self) -> list[ContextManifest]:
        """Replay the transcript from the start under the config in force; returns the
        manifests (also emitted as events)."""
        self.running = True
        self.manifests = []
        try:
            async for step in replay(
                self.transcript.messages,
                context_window=self.model.context_window,
                counter=self.token_cache,
                config=self._config,
                system=self.transcript.system,
                tools=self.transcript.tools,
            ):
                self.manifests.append(step.manifest)
                self._subscribers.emit(ContextBuildEvent(step.manifest, "replay", step.request))
                if step.compaction is not None:
                    self._subscribers.emit(CompactionEvent("automatic", step.compaction, "replay"))
                usage = self.transcript.usage.get(step.index)
                if usage is not None:
                    message = self.transcript.messages[step.index]
                    self._subscribers.emit(
                        ModelResponseEvent(
                            message,  # type: ignore[arg-type]
                            "recorded",
                            usage,
                            step.manifest.request_id,
                            "replay",
                        )
                    )
        finally:
            self.running = False
        return self.manifests
