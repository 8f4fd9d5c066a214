"""`StepLoop`: one agent call as reasoning steps — prepare, send, record the answer, run the tool
calls, repeat until the model replies without tool calls."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from ctxlab.agent._builtins import COMPRESS_TOOL, MODE_TOOL, PROPOSE_TOOL, TODO_TOOL
from ctxlab.agent._runner import BuiltinHandler
from ctxlab.events import (
    Event,
    ModelResponseEvent,
    ReplyEvent,
    TextDeltaEvent,
    TurnCommittedEvent,
)
from ctxlab.exceptions import (
    CallStopped,
    ContextOverflowError,
    InvalidConversation,
    MaxStepsExceeded,
    PreparationError,
    UsageError,
)
from ctxlab.messages import (
    AssistantMessage,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    parse_messages,
)
from ctxlab.messages._state import WorkingState
from ctxlab.models import ModelResponse
from ctxlab.pipeline import Preparation

if TYPE_CHECKING:
    from ctxlab.agent._agent import Agent

__all__ = ["PAUSED", "ResultsTurn", "StepLoop", "stream_call"]

PAUSED = ("compaction", "pause_turn")
"""Stop reasons of a response that is not the model's reply: Anthropic's server compaction with
``pause_after_compaction`` ("compaction": the response holds the compaction block alone) and a
paused server-tool turn ("pause_turn"); the agent sends the conversation again to go on."""


@runtime_checkable
class ResultsTurn(Protocol):
    """A model that says what the user turn after its calls holds besides their results.

    A recording replaying itself (`ctxlab.fork.RecordedModel`) has one: where its harness wrote
    text beside a call's results (a system reminder, an interruption note, the user's own
    words), the branch's turn holds that text too, in its recorded place."""

    def results_turn(self, results: tuple[ToolResultBlock, ...]) -> UserMessage | None:
        """The turn holding ``results`` (None: the results alone)."""
        ...


def _user_message(message: Any) -> UserMessage:
    if isinstance(message, UserMessage):
        return message
    if isinstance(message, str):
        if not message.strip():
            msg = "the message is empty; pass the text the agent should act on"
            raise UsageError(msg)
        return UserMessage(content=message)
    if isinstance(message, Mapping):
        parsed = parse_messages([message])[0]
        if isinstance(parsed, UserMessage):
            return parsed
    msg = (
        f"an agent call takes a str, a UserMessage or a user message dict, got "
        f"{type(message).__name__}"
    )
    raise UsageError(msg)


class StepLoop:
    """Runs the calls of one agent."""

    def __init__(self, agent: Agent) -> None:
        self._agent = agent
        self.stop_requested = False

    async def run(self, message: Any) -> AssistantMessage:
        """One call: ``message`` (text, a `UserMessage` or its dict; None to continue) joins
        the conversation, then steps until a reply."""
        agent = self._agent
        user = _user_message(message) if message is not None else None
        self.stop_requested = False
        problems = agent._conversation.problems()
        if problems:
            detail = "; ".join(str(p) for p in problems[:3])
            msg = (
                f"the stored working state of this session has broken tool exchanges ({detail}), "
                "probably written by an older ctxlab. Call agent.repair_context() to fix it (the "
                "session log keeps the original messages), then call the agent again."
            )
            raise InvalidConversation(msg, problems=tuple(problems))
        await agent.model.load_limits()
        # 000: workspace material is loaded once per agent call.
        await agent._materials.begin_call()
        self._close_interrupted_calls()
        if user is not None:
            agent._conversation.append(user)
        elif not agent.context.conversation:
            msg = "the agent has no conversation yet; pass a message"
            raise UsageError(msg)
        await self._commit_turn()
        for _ in range(agent.max_steps):
            if self.stop_requested:
                msg = (
                    "the call was stopped; the conversation is kept and the next call continues it"
                )
                raise CallStopped(msg)
            await agent._compactor.at_boundary()
            reply = await self._step()
            await self._commit_turn()
            if reply is not None:
                return reply
        msg = (
            f"the agent made {agent.max_steps} reasoning requests without replying; raise "
            "max_steps or check that the tools give the model what it needs"
        )
        raise MaxStepsExceeded(msg)

    async def _commit_turn(self) -> None:
        agent = self._agent
        messages = agent._conversation.take_unlogged()
        turn = await agent._recorder.commit_turn(messages, agent.context, agent.tasks.state)
        if turn is not None:
            agent._emit(TurnCommittedEvent(turn, len(messages), agent._call))

    async def _step(self) -> AssistantMessage | None:
        agent = self._agent
        prep = await agent._preparer.request("reasoning")
        response, answered = await self._send(prep)
        # The usage is billed whether or not the reply is valid: it goes to the answered request.
        billed = None
        if response.usage is not None or response.provider_transforms or response.applied_edits:
            billed = agent._preparer.attach_usage(
                answered.manifest.request_id,
                response.usage,
                response.provider_transforms,
                request=answered.request,
                applied=response.applied_edits,
            )
        agent._conversation.append(response.message)
        agent._emit(
            ModelResponseEvent(
                response.message,
                response.stop_reason,
                response.usage,
                answered.manifest.request_id,
                agent._call,
                manifest=billed,
                from_cache=response.from_cache,
                retries=response.retries,
            )
        )
        uses = response.message.tool_uses
        if not uses and response.stop_reason in PAUSED:
            # Not a reply: the provider paused (after its compaction, or a long server-tool
            # turn) and continues when the conversation is sent back as it is.
            return None
        if not uses:
            agent._emit(ReplyEvent(response.message, agent._call))
            return response.message
        results = await agent._runner.run(
            uses, self._builtins(), agent._call, last=frozenset({COMPRESS_TOOL})
        )
        agent._conversation.append(_results_turn(agent.model, tuple(results)))
        if any(u.name == TODO_TOOL for u in uses):
            shortened = agent._tasks.shorten_old_receipts(agent.context.conversation)
            if shortened is not None:
                state = agent.context
                agent._conversation.commit(
                    WorkingState(
                        conversation=shortened, summary=state.summary, revision=state.revision + 1
                    )
                )
        return None

    async def _send(self, prep: Preparation) -> tuple[ModelResponse, Preparation]:
        """The response, and the preparation of the request it answers."""
        agent = self._agent

        def on_text(text: str) -> None:
            agent._emit(TextDeltaEvent(text, agent._call))

        agent._preparer.sending(prep.request)
        try:
            response = await agent.model.request(prep.request, purpose="reasoning", on_text=on_text)
            return response, prep
        except ContextOverflowError as overflow:
            # 000: a recognized overflow forces a smaller conversation and retries once.
            if not agent.context_config.compaction.enabled:
                raise
            try:
                recovery = await agent._preparer.request("recovery", force=True)
            except PreparationError as exc:
                raise overflow from exc
            if recovery.compaction is None:
                raise
            agent._preparer.sending(recovery.request)
            response = await agent.model.request(
                recovery.request, purpose="recovery", on_text=on_text
            )
            return response, recovery

    def _builtins(self) -> dict[str, BuiltinHandler]:
        agent = self._agent
        handlers: dict[str, BuiltinHandler] = {}
        config = agent.context_config
        if config.compression_tool_enabled:

            async def compress(use: ToolUseBlock) -> ToolResultBlock:
                return await agent._compactor.tool(use, config, agent.next_thresholds())

            handlers[COMPRESS_TOOL] = compress
        if agent._tasks.todo_enabled:

            async def todo(use: ToolUseBlock) -> ToolResultBlock:
                return agent._tasks.todo_write(use)

            handlers[TODO_TOOL] = todo
        if agent._tasks.mode_tool_enabled:

            async def switch(use: ToolUseBlock) -> ToolResultBlock:
                return agent._tasks.mode_tool(use)

            handlers[MODE_TOOL] = switch
        if agent._tasks.options.allow_requirement_proposals:

            async def propose(use: ToolUseBlock) -> ToolResultBlock:
                return agent._tasks.propose_tool(use)

            handlers[PROPOSE_TOOL] = propose
        return handlers

    def _close_interrupted_calls(self) -> None:
        # A stopped or crashed call can leave tool calls without results; the provider would
        # reject the next request, so each gets an error result saying what happened.
        agent = self._agent
        conversation = agent.context.conversation
        if not conversation or not isinstance(conversation[-1], AssistantMessage):
            return
        uses = conversation[-1].tool_uses
        if uses:
            agent._conversation.append(
                UserMessage(
                    content=tuple(
                        ToolResultBlock(
                            tool_use_id=u.id,
                            content="The call was interrupted before this tool ran.",
                            is_error=True,
                        )
                        for u in uses
                    )
                )
            )


async def stream_call(agent: Agent, message: Any) -> AsyncIterator[Event]:
    """Run one call of ``agent`` and yield its events as they happen; re-raise its error."""
    queue: asyncio.Queue[Event] = asyncio.Queue()
    unsubscribe = agent.subscribe(queue.put_nowait)
    task = asyncio.ensure_future(agent.call(message))
    try:
        while True:
            getter = asyncio.ensure_future(queue.get())
            done, _ = await asyncio.wait({getter, task}, return_when=asyncio.FIRST_COMPLETED)
            if getter in done:
                yield getter.result()
                continue
            getter.cancel()
            while not queue.empty():
                yield queue.get_nowait()
            task.result()
            return
    finally:
        unsubscribe()
        if not task.done():
            task.cancel()


def _results_turn(model: object, results: tuple[ToolResultBlock, ...]) -> UserMessage:
    """The user turn after a step's calls: their results, and what ``model`` adds beside them
    (`ResultsTurn`); a turn whose results are not the calls' own is refused."""
    made = model.results_turn(results) if isinstance(model, ResultsTurn) else None
    if made is None:
        return UserMessage(content=results)
    given = sorted(results, key=lambda r: r.tool_use_id)
    if sorted(made.tool_results, key=lambda r: r.tool_use_id) != given:
        msg = (
            f"{type(model).__name__}.results_turn must return a turn holding the results it "
            "was given, each once"
        )
        raise UsageError(msg)
    return made
