"""Builders shared by the tests: conversations, and one preparation of them."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

from ctxlab import (
    ApproximateCounter,
    AssistantMessage,
    ContextConfig,
    Preparation,
    ToolResultBlock,
    ToolUseBlock,
    Transcript,
    UserMessage,
    WorkingState,
    prepare,
    replay,
)

Conversation = list[UserMessage | AssistantMessage]


def tool_turn(call_id: str, output: str, *, name: str = "bash", arg: str = "ls") -> Conversation:
    """An assistant tool call and the user message carrying its result."""
    return [
        AssistantMessage(content=(ToolUseBlock(id=call_id, name=name, input={"cmd": arg}),)),
        UserMessage(content=(ToolResultBlock(tool_use_id=call_id, content=output),)),
    ]


def session(turns: int, output_chars: int = 400, task: str = "Fix src/app.py") -> Conversation:
    """A user request followed by ``turns`` tool exchanges."""
    messages: Conversation = [UserMessage(content=task)]
    for i in range(turns):
        messages += tool_turn(f"call_{i}", f"line {i}\n" + "x" * output_chars, arg=f"cat f{i}.py")
    return messages


async def prepared(
    messages: Sequence[UserMessage | AssistantMessage],
    *,
    context_window: int,
    config: ContextConfig | None = None,
    **options: Any,
) -> Preparation:
    """``messages`` prepared once from an empty working state, counted approximately (the
    pipeline tests' usual call; ``options`` go to `prepare`)."""
    return await prepare(
        WorkingState(conversation=tuple(messages)),
        context_window=context_window,
        counter=ApproximateCounter(),
        config=config,
        **options,
    )


class CountingCounter(ApproximateCounter):
    """The approximation, remembering every text it counted (in ``calls``)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def count_text(self, text: str) -> int:
        self.calls.append(text)
        return super().count_text(text)


@cache
def corpus_texts() -> tuple[str, ...]:
    """Every text ctxlab counts in the corpus (empty without it): each block's texts — text,
    tool output, a call's input — System prompts and tool schemas."""
    from ctxlab.io._transcript import load_transcript
    from ctxlab.tokens._cache import block_parts
    from tests.conftest import corpus_files

    texts: list[str] = []
    for path in corpus_files():
        transcript = load_transcript(path)
        texts.extend(t for t in (transcript.system, *(s.rendered for s in transcript.tools)) if t)
        for message in transcript.messages:
            for block in message.content:
                texts.extend(block_parts(block)[1])
    return tuple(texts)


async def validations(transcript: Transcript, window: int) -> list[str]:
    """The validation of every request of ``transcript`` replayed at ``window`` (what an
    importer hands over must be a conversation the pipeline can send)."""
    return [
        step.manifest.validation
        async for step in replay(
            transcript.messages,
            context_window=window,
            counter=ApproximateCounter(),
            system=transcript.system,
            tools=transcript.tools,
        )
    ]
