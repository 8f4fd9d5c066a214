"""ctxlab's pipeline as a LangChain (v1) agent middleware.

```python
from langchain.agents import create_agent
from ctxlab import ObservedSession
from ctxlab.integrations.langchain import ContextMiddleware

session = ObservedSession(context_window=200_000)
agent = create_agent(model, tools, middleware=[ContextMiddleware(session)])
lab = Lab(session)                                                  # watch it live
```

Every model call of the agent passes through ``wrap_model_call``: ctxlab prepares the request
from the agent's messages, system message and tools, and, in ``"manage"`` mode, the model gets
ctxlab's messages — for that call only: the agent's state keeps its full history, ctxlab keeps the
compacted working state. A compaction never leaves a tool message without its call (LangChain's
``SummarizationMiddleware`` has, langchain#38352). The reply's usage goes on its step at once.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from langchain.agents.middleware import AgentMiddleware, ModelRequest, ModelResponse
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

from ctxlab.analysis._sync import run_sync
from ctxlab.integrations._common import MessageGroups, originals_for
from ctxlab.io import load
from ctxlab.io._transcript import Transcript
from ctxlab.io.formats._chat import tool_schemas
from ctxlab.io.formats._frameworks import langchain_usage
from ctxlab.messages import (
    AssistantMessage,
    Base64ImageSource,
    HintBlock,
    ImageBlock,
    ProviderBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ctxlab.sources._observed import ObservedSession
from ctxlab.util._checks import instance_of

__all__ = ["ContextMiddleware"]

Handler = Callable[[ModelRequest], ModelResponse]
AsyncHandler = Callable[[ModelRequest], Awaitable[ModelResponse]]


class ContextMiddleware(AgentMiddleware):
    """A LangChain agent middleware that prepares every model call with ctxlab's pipeline.

    Args:
        session: The `ObservedSession` that holds the working state and feeds a Lab.
    """

    def __init__(self, session: ObservedSession) -> None:
        super().__init__()
        instance_of(session, ObservedSession, "session", "an ObservedSession")
        self.session = session

    def wrap_model_call(self, request: ModelRequest, handler: Handler) -> ModelResponse:
        """Prepare the call with ctxlab, call the model, record the reply's usage."""
        try:
            transcript, tools = self._read(request)
            sent = run_sync(
                self.session.prepare(transcript.messages, system=transcript.system, tools=tools)
            )
            outgoing = self._request(request, transcript, sent)
        except Exception as exc:
            self.session.record_failure(exc)  # raised again when managing
            outgoing = request
        response = handler(outgoing)
        self._record(response)
        return response

    async def awrap_model_call(self, request: ModelRequest, handler: AsyncHandler) -> ModelResponse:
        """The async form of `wrap_model_call`."""
        try:
            transcript, tools = self._read(request)
            sent = await self.session.prepare(
                transcript.messages, system=transcript.system, tools=tools
            )
            outgoing = self._request(request, transcript, sent)
        except Exception as exc:
            self.session.record_failure(exc)  # raised again when managing
            outgoing = request
        response = await handler(outgoing)
        self._record(response)
        return response

    def _read(self, request: ModelRequest) -> tuple[Transcript, Any]:
        history: list[BaseMessage] = list(request.messages)
        if request.system_message is not None:
            history.insert(0, request.system_message)
        transcript = load(history, format="langchain", name=self.session.name)
        schemas = [convert_to_openai_tool(t) for t in request.tools or ()]
        return transcript, tool_schemas(schemas, "the agent's tools")

    def _request(
        self,
        request: ModelRequest,
        transcript: Transcript,
        sent: Sequence[UserMessage | AssistantMessage],
    ) -> ModelRequest:
        if self.session.mode == "observe":
            return request
        originals = originals_for(_groups(request.messages), transcript, sent)
        messages: list[Any] = []
        for message, kept in zip(sent, originals, strict=True):
            messages.extend(kept if kept is not None else _to_langchain(message))
        return request.override(messages=messages)

    def _record(self, response: Any) -> None:
        result = getattr(response, "result", None) or [response]
        reply = next((m for m in reversed(result) if isinstance(m, AIMessage)), None)
        if reply is None:
            return
        try:
            transcript = load([reply], format="langchain")
        except Exception as exc:
            if not _is_empty(reply):
                self.session.record_failure(exc)  # raised again when managing
                return
            # An empty reply (AIMessage("")) is a reply: its usage still belongs to the step.
            usage = langchain_usage(reply.usage_metadata)
            self.session.record_response(AssistantMessage(content=""), usage)
            return
        message = transcript.messages[0]
        if isinstance(message, AssistantMessage):
            self.session.record_response(message, transcript.usage.get(0))


def _is_empty(reply: AIMessage) -> bool:
    return not reply.tool_calls and not str(reply.text).strip()


def _groups(messages: Sequence[BaseMessage]) -> MessageGroups:
    # What `load` makes one message of: consecutive human and tool messages are one user turn.
    groups: MessageGroups = []
    last = ""
    for message in messages:
        role = "assistant" if isinstance(message, AIMessage) else "user"
        if groups and role == last:
            groups[-1].append(message)
        else:
            groups.append([message])
        last = role
    return groups


def _to_langchain(message: UserMessage | AssistantMessage) -> list[BaseMessage]:
    if isinstance(message, AssistantMessage):
        text = "\n".join(
            b.text if isinstance(b, TextBlock) else b.rendered
            for b in message.content
            if isinstance(b, TextBlock | HintBlock)
        )
        calls = [
            {"id": b.id, "name": b.name, "args": dict(b.input), "type": "tool_call"}
            for b in message.content
            if isinstance(b, ToolUseBlock)
        ]
        return [AIMessage(content=text, tool_calls=calls)]
    out: list[BaseMessage] = []
    for block in message.content:
        if isinstance(block, ToolResultBlock):
            status = "error" if block.is_error else "success"
            content: Any = block.text
            if block.images:  # shown beside its text, as the tool returned it
                content = [{"type": "text", "text": block.text}, *map(_image, block.images)]
            out.append(ToolMessage(content, tool_call_id=block.tool_use_id, status=status))
        elif isinstance(block, TextBlock):
            out.append(HumanMessage(block.text))
        elif isinstance(block, HintBlock):
            out.append(HumanMessage(block.rendered))
        elif isinstance(block, ImageBlock):
            out.append(HumanMessage([_image(block)]))
        elif isinstance(block, ProviderBlock):  # as it was read
            out.append(HumanMessage([dict(block.data)]))
        else:  # a document: Anthropic's block, which LangChain passes to Claude as it is
            out.append(HumanMessage([block.model_dump(mode="json", exclude_none=True)]))
    return out


def _image(block: ImageBlock) -> dict[str, Any]:
    # LangChain's standard image block: each chat model integration converts it to its wire.
    source = block.source
    if isinstance(source, Base64ImageSource):
        return {"type": "image", "base64": source.data, "mime_type": source.media_type}
    return {"type": "image", "url": source.url}
