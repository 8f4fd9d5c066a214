"""ctxlab's pipeline as a pydantic-ai history processor.

```python
from pydantic_ai import Agent
from ctxlab import ObservedSession
from ctxlab.integrations.pydantic_ai import ContextProcessor

session = ObservedSession(context_window=200_000)
processor = ContextProcessor(session)
agent = Agent(model, history_processors=[processor])                # pydantic-ai 1.x
agent = Agent(model, capabilities=[ProcessHistory(processor)])      # pydantic-ai 2.x
lab = Lab(session)                                                  # watch it live
```

Every request the agent is about to send passes through the session: ctxlab prepares it (budget,
tool-result truncation and offload, compaction by summary) and, in ``"manage"`` mode, the agent
sends ctxlab's messages. A compaction never separates a tool call from its result — unlike a
processor that slices the history (pydantic-ai#2050). Messages ctxlab left unchanged go back as
pydantic-ai's own objects, each in its own place; a request ctxlab rebuilt keeps the agent's
system prompt (first), its images and the tool each result answers, and the request being sent
keeps its instructions.
"""

from __future__ import annotations

import base64
import dataclasses
from collections.abc import Sequence
from typing import Any

from pydantic_ai.messages import (
    BinaryContent,
    ImageUrl,
    ModelMessage,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from ctxlab.integrations._common import MessageGroups, originals_for
from ctxlab.io import load
from ctxlab.messages import (
    AssistantMessage,
    Base64ImageSource,
    HintBlock,
    ImageBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    tool_names,
)
from ctxlab.messages._request import ToolSchema
from ctxlab.sources._observed import ObservedSession
from ctxlab.util._checks import instance_of, sequence_of

__all__ = ["ContextProcessor"]


class ContextProcessor:
    """A pydantic-ai history processor that prepares every request with ctxlab's pipeline.

    Args:
        session: The `ObservedSession` that holds the working state and feeds a Lab.
        tools: The agent's tool schemas, counted in every request (a history processor does not
            see them; without them the budget is short by their tokens).
    """

    def __init__(self, session: ObservedSession, *, tools: Sequence[ToolSchema] = ()) -> None:
        instance_of(session, ObservedSession, "session", "an ObservedSession")
        self.session = session
        self.tools = sequence_of(tools, ToolSchema, "tools", "a list of ToolSchema")
        self._material: list[ModelRequest] = []

    async def __call__(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        """The messages to send (pydantic-ai calls this before every model request).

        Observing, nothing that fails inside ctxlab reaches the agent: it is recorded
        (`ObservedSession.record_failure`) and the agent's own messages go."""
        # Material ctxlab added to the last request (notices, references) is not history.
        messages = [m for m in messages if not any(m is x for x in self._material)]
        if not messages:
            return messages
        try:
            return await self._process(messages)
        except Exception as exc:
            self.session.record_failure(exc)  # raised again when managing
            self._material = []
            return messages

    async def _process(self, messages: list[ModelMessage]) -> list[ModelMessage]:
        transcript = load(messages, format="pydantic_ai", name=self.session.name)
        sent = await self.session.prepare(
            transcript.messages,
            system=transcript.system,
            tools=self.tools,
            usage=transcript.usage,
        )
        if self.session.mode == "observe":
            return messages
        material = self.session.material_messages
        conversation = sent[: len(sent) - material]
        originals = originals_for(_groups(messages), transcript, conversation)
        out = _to_pydantic_ai(conversation, messages, originals)
        names = tool_names(sent)
        instructions = getattr(messages[-1], "instructions", None)
        # The model reads the run's instructions from the last request: the material's, if any.
        self._material = [
            ModelRequest(parts=_request_parts(m, names), instructions=instructions)
            for m in sent[len(sent) - material :]
            if isinstance(m, UserMessage)  # (material is always a user turn)
        ]
        return [*out, *self._material]


def _groups(messages: Sequence[ModelMessage]) -> MessageGroups:
    # What `load` makes one message of: consecutive requests (or responses); a request holding
    # only system prompts becomes no message of its own but travels with the next one.
    groups: MessageGroups = []
    pending: list[Any] = []
    last_kind = ""
    for message in messages:
        kind = message.kind
        if kind == "request" and all(isinstance(p, SystemPromptPart) for p in message.parts):
            pending.append(message)
            continue
        if groups and kind == last_kind:
            groups[-1].append(message)
        else:
            groups.append([*pending, message])
            pending = []
        last_kind = kind
    return groups


def _to_pydantic_ai(
    sent: Sequence[UserMessage | AssistantMessage],
    original: Sequence[ModelMessage],
    originals: Sequence[list[Any] | None],
) -> list[ModelMessage]:
    names = tool_names(sent)
    out: list[ModelMessage] = []
    for message, kept in zip(sent, originals, strict=True):
        if kept is not None:
            out.extend(kept)
        elif isinstance(message, AssistantMessage):
            out.append(ModelResponse(parts=_response_parts(message)))
        else:
            out.append(ModelRequest(parts=_request_parts(message, names)))
    system = [p for m in original if isinstance(m, ModelRequest) for p in m.parts]
    system = [p for p in system if isinstance(p, SystemPromptPart)]
    first = out[0] if out else None
    if (
        system
        and isinstance(first, ModelRequest)
        and not any(isinstance(p, SystemPromptPart) for p in first.parts)
    ):
        out[0] = dataclasses.replace(first, parts=[*system, *first.parts])
    last_original = original[-1]
    last = out[-1] if out else None
    if (
        isinstance(last, ModelRequest)
        and isinstance(last_original, ModelRequest)
        and last is not last_original
    ):
        # The request being sent carries the run's instructions; a rebuilt one keeps them.
        out[-1] = dataclasses.replace(last, instructions=last_original.instructions)
    return out


def _response_parts(message: AssistantMessage) -> list[Any]:
    parts: list[Any] = []
    for block in message.content:
        if isinstance(block, TextBlock):
            parts.append(TextPart(content=block.text))
        elif isinstance(block, HintBlock):
            parts.append(TextPart(content=block.rendered))
        elif isinstance(block, ToolUseBlock):
            parts.append(ToolCallPart(block.name, dict(block.input), tool_call_id=block.id))
    return parts


def _request_parts(message: UserMessage, names: dict[str, str]) -> list[Any]:
    parts: list[Any] = []
    for block in message.content:
        if isinstance(block, ToolResultBlock):
            name = names.get(block.tool_use_id, "tool")
            parts.append(ToolReturnPart(name, block.text, tool_call_id=block.tool_use_id))
        elif isinstance(block, TextBlock):
            parts.append(UserPromptPart(content=block.text))
        elif isinstance(block, HintBlock):
            parts.append(UserPromptPart(content=block.rendered))
        elif isinstance(block, ImageBlock):
            # An image ctxlab kept (and counted) in a request it rebuilt goes as the image.
            parts.append(UserPromptPart(content=[_image(block)]))
        else:  # a block pydantic-ai has no part for (a document): said, not silently lost
            parts.append(UserPromptPart(content=f"[{block.type}]"))
    return parts


def _image(block: ImageBlock) -> BinaryContent | ImageUrl:
    source = block.source
    if isinstance(source, Base64ImageSource):
        return BinaryContent(base64.b64decode(source.data), media_type=source.media_type)
    return ImageUrl(url=source.url)
