"""AgentScope 2.0.11's context path as a benchmark contender (shared by the preparation benches).

At every reasoning boundary the step's messages are appended to an AgentScope `Agent` whose model
is a stub, and its `compress_context()` runs: images limited, tokens estimated (bytes / 4), and —
past ``trigger_ratio × context_size`` — the context split, the compression request built and
counted, the stub's summary applied (`summary_template` rendered, the context replaced). The stub
answers `generate_structured_output` at once with a real `StructuredResponse` (no `usage`, as a
provider that reports none): AgentScope's own post-summary path reads ``res.usage`` and
``res.finished_reason``, so anything less crashes as soon as it compresses, and a contender that
never compresses is not timed where compaction happens.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from ctxlab import AssistantMessage, TextBlock, ToolUseBlock


class AgentScopePeer:
    """AgentScope's Agent with a stub model that answers summary requests instantly."""

    def __init__(self, window: int) -> None:
        from agentscope.agent import Agent
        from agentscope.agent import ContextConfig as AsConfig
        from agentscope.credential import CredentialBase
        from agentscope.model import ChatModelBase
        from agentscope.model._model_response import StructuredResponse
        from pydantic import BaseModel

        # AgentScope sets its logger ("as") to INFO on import: one line per compression.
        logging.getLogger("as").setLevel(logging.ERROR)

        class Params(BaseModel):
            pass

        fields = AsConfig().summary_schema["properties"]
        # Every field of AgentScope's summary schema, so its `summary_template.format` succeeds.
        answer = {name: f"{name} (stub)" for name in fields}
        calls = [0]

        class StubModel(ChatModelBase):
            async def _call_api(self, *args: Any, **kwargs: Any) -> Any:
                raise RuntimeError("the benchmark never calls the model")

            async def generate_structured_output(self, *args: Any, **kwargs: Any) -> Any:
                calls[0] += 1
                return StructuredResponse(content=dict(answer))

        self.Agent, self.AsConfig = Agent, AsConfig
        self.cpu = 0.0
        self.calls = calls
        self.model = StubModel(
            credential=CredentialBase(), model="stub", parameters=Params(), context_size=window
        )

    @property
    def summaries(self) -> int:
        """Summary requests the stub has answered so far (AgentScope's compressions)."""
        return self.calls[0]

    def convert(self, messages: tuple[Any, ...]) -> list[list[Any]]:
        """Per step, the AgentScope messages that arrive (tool results join the call's message)."""
        from agentscope.message import AssistantMsg, UserMsg
        from agentscope.message import TextBlock as AsText
        from agentscope.message._block import ToolCallBlock
        from agentscope.message._block import ToolResultBlock as AsResult

        names: dict[str, str] = {}
        steps: list[list[Any]] = []
        pending: list[Any] = []
        last_assistant: Any = None
        for message in messages:
            if isinstance(message, AssistantMessage):
                steps.append(pending)
                blocks: list[Any] = []
                for block in message.content:
                    if isinstance(block, ToolUseBlock):
                        names[block.id] = block.name
                        blocks.append(
                            ToolCallBlock(
                                id=block.id,
                                name=block.name,
                                input=block.input_json,
                                state="finished",
                            )
                        )
                    elif isinstance(block, TextBlock):
                        blocks.append(AsText(text=block.text))
                last_assistant = AssistantMsg(name="agent", content=blocks or "...")
                pending = [last_assistant]
                continue
            texts = [b.text for b in message.content if isinstance(b, TextBlock)]
            for result in message.tool_results:
                (last_assistant.content if last_assistant else pending).append(
                    AsResult(
                        id=result.tool_use_id,
                        name=names.get(result.tool_use_id, "tool"),
                        output=result.text,
                        state="success",
                    )
                )
            if texts:
                pending.append(UserMsg(name="user", content="\n".join(texts)))
        return steps

    async def run(self, messages: tuple[Any, ...], system: str) -> list[float]:
        """Seconds per step of a fresh agent fed ``messages`` (conversion is not timed); the
        process's CPU seconds over the same steps are left in ``cpu``."""
        steps = self.convert(messages)
        agent = self.Agent(
            name="bench",
            system_prompt=system or "You are an agent.",
            model=self.model,
            context_config=self.AsConfig(),
        )
        times: list[float] = []
        cpu = 0.0
        for arrived in steps:
            start, start_cpu = time.perf_counter(), time.process_time()
            for msg in arrived:
                if not any(m is msg for m in agent.state.context[-2:]):
                    agent.state.context.append(msg)
            await agent.compress_context()
            times.append(time.perf_counter() - start)
            cpu += time.process_time() - start_cpu
        self.cpu = cpu
        return times
