"""smolagents memory steps: ``agent.memory.get_full_steps()`` saved as JSON (or
``get_succinct_steps()``, the same without each step's model input).

Read from smolagents' own code (huggingface/smolagents at 2026-07: ``src/smolagents/memory.py``
— ``TaskStep``, ``ActionStep``, ``PlanningStep``, their ``dict()`` and ``to_messages()`` —,
``models.py`` — ``ChatMessage``, ``MessageRole`` —, ``monitoring.py`` — ``TokenUsage``), 1.x.
The steps are what the agent remembers, and ``to_messages`` is how it turns them into its next
request; that is the conversation read here:

- a task step (``task``) is the user's turn ("New task: …");
- an action step is one model call — its ``model_output`` the reply's text and its
  ``tool_calls`` the calls (a CodeAgent's code is a ``python_interpreter`` call), its
  ``observations`` the result (the observations of parallel calls come as one text: they are the
  first call's result, and the others say so), an ``error`` an error result; its
  ``token_usage`` (older versions: ``input_token_count``/``output_token_count``) is the usage of
  that call;
- a planning step is one model call too: its ``plan`` the reply, then the user's "Now proceed
  and carry out this plan.", its usage on the plan.

The System prompt is not a step: it is read from the first action step's
``model_input_messages`` when the file has them. A planning call is sent with its own planning
prompt, not the conversation: it is replayed as a reply of the conversation (its usage as
recorded). What ``agent.write_memory_to_messages()`` returns (messages with the roles
``tool-call`` and ``tool-response``) loads too, as the text it is. The census counts a step (or
a message) a record, its kind the step's class; images are parts left out.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._build import ConversationBuilder, as_mapping, text_parts, tool_result
from ctxlab.io.formats._chat import arguments_of
from ctxlab.messages import ProviderUsage

__all__ = ["from_smolagents", "is_smolagents_steps"]

_PROCEED = "Now proceed and carry out this plan."
_ROLES = {"user", "assistant", "system", "tool-call", "tool-response"}


def is_smolagents_steps(value: Any) -> bool:
    """A list of smolagents memory steps (task, action, planning) or of its memory messages."""
    if not isinstance(value, list) or not value:
        return False
    head = [v for v in value[:20] if isinstance(v, Mapping)]
    if len(head) != len(value[:20]):
        return False
    steps = all("task" in v or "step_number" in v or "plan" in v for v in head)
    roles = {v.get("role") for v in head}
    messages = roles <= _ROLES and bool(roles & {"tool-call", "tool-response"})
    return (steps and any("step_number" in v for v in head)) or messages


def from_smolagents(
    steps: Sequence[Any], where: str
) -> tuple[ConversationBuilder, str, dict[str, Any]]:
    """The conversation, System text and notes of memory steps (or memory messages)."""
    if any(isinstance(s, Mapping) and "role" in s for s in steps):
        builder = ConversationBuilder(where, unit="message")
        return builder, _messages(steps, builder), {}
    builder = ConversationBuilder(where, unit="step")
    system = ""
    calls = 0
    for number, step in enumerate(steps):
        if not isinstance(step, Mapping):
            msg = f"{where} step {number}: not an object (a smolagents memory step)"
            raise MessageFormatError(msg)
        builder.record(_KINDS[next((k for k in _KINDS if k in step), "")], raw=step)
        # A step's input is the request as sent: the replies before it, said again.
        builder.set_aside(step.get("model_input_messages"), "a request's input messages")
        if "step_number" in step and not system:
            # An action step's input opens with the agent's System prompt (a planning step's
            # with the planning prompt, which is not).
            system = _system(step.get("model_input_messages"))
        if "step_number" in step:
            calls = _action(builder, step, calls)
        elif "plan" in step:
            if builder.text("assistant", str(step.get("plan") or ""), _usage(step)):
                builder.reply_time(_started(step), "s", replace=True)
            else:
                builder.leave_out("empty plan")
            builder.text("user", _PROCEED)
        elif "task" in step:
            builder.text("user", f"New task:\n{step.get('task') or ''}")
            builder.leave_out("task image", len(step.get("task_images") or ()))
        elif "output" in step:
            builder.skip("final answer step (its call holds the answer)")
        else:
            builder.skip("unknown step")
        builder.settle("step with nothing kept")
    return builder, system, {}


_KINDS = {
    "step_number": "ActionStep",
    "plan": "PlanningStep",
    "task": "TaskStep",
    "output": "FinalAnswerStep",
    "": "unknown step",
}
"""A step's class (smolagents' ``memory.py``), by the field that only it has."""


def _action(builder: ConversationBuilder, step: Mapping[str, Any], calls: int) -> int:
    blocks: list[dict[str, Any]] = []
    output = step.get("model_output")
    if isinstance(output, list):
        output = json.dumps(output, ensure_ascii=False)
    if isinstance(output, str) and output.strip():
        blocks.append({"type": "text", "text": output.strip()})
    uses = []
    for call in step.get("tool_calls") or ():
        function = as_mapping(as_mapping(call).get("function"))
        calls += 1
        uses.append(
            {
                "type": "tool_use",
                "id": str(as_mapping(call).get("id") or f"smolagents_call_{calls}"),
                "name": str(function.get("name") or "tool"),
                "input": _inputs(function),
            }
        )
    blocks += uses
    usage = _usage(step)
    if not blocks:
        builder.skip("step without a model output")
        if usage is not None:
            builder.lose_usage("on a step without a model output")
        return calls
    if builder.add("assistant", blocks, usage):
        builder.reply_time(_started(step), "s", replace=True)  # one step, one model call
    builder.leave_out("observation image", len(step.get("observations_images") or ()))
    error = as_mapping(step.get("error"))
    observations = step.get("observations")
    text = str(observations) if observations is not None else ""
    if error:
        text = f"Error:\n{error.get('message') or error}"
    if not uses:
        if text.strip():
            builder.text("user", text)
        return calls
    results = [
        tool_result(
            str(use["id"]),
            text if n == 0 else "(reported with the first call's result)",
            is_error=bool(error),
        )
        for n, use in enumerate(uses)
    ]
    builder.add("user", results)
    return calls


def _inputs(function: Mapping[str, Any]) -> dict[str, Any]:
    arguments = function.get("arguments")
    if isinstance(arguments, Mapping):
        return dict(arguments)
    if isinstance(arguments, str) and arguments.lstrip().startswith("{"):
        return arguments_of(arguments)
    # A CodeAgent's call holds its code as a string.
    key = "code" if function.get("name") == "python_interpreter" else "arguments"
    return {key: arguments}


def _started(step: Mapping[str, Any]) -> Any:
    # When the step (its model call) began: ``timing.start_time`` (``time.time()``, epoch
    # seconds), or the step's own ``start_time`` in versions before ``Timing``.
    timing = as_mapping(step.get("timing"))
    return timing.get("start_time", step.get("start_time"))


def _usage(step: Mapping[str, Any]) -> ProviderUsage | None:
    usage = step.get("token_usage")
    if isinstance(usage, Mapping):
        return ProviderUsage(usage.get("input_tokens") or 0, usage.get("output_tokens") or 0)
    if "input_token_count" in step or "output_token_count" in step:  # before smolagents 1.15
        return ProviderUsage(
            step.get("input_token_count") or 0, step.get("output_token_count") or 0
        )
    return None


def _system(messages: Any) -> str:
    for message in messages if isinstance(messages, list) else ():
        if isinstance(message, Mapping) and message.get("role") == "system":
            return text_parts(message.get("content")) or ""
    return ""


def _messages(messages: Sequence[Any], builder: ConversationBuilder) -> str:
    """The System text; the conversation goes to ``builder``. These are
    ``write_memory_to_messages()``'s: tool calls and responses are text, as smolagents sends
    them."""
    system: list[str] = []
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping) or message.get("role") not in _ROLES:
            msg = f"{builder.where} message {index}: expected a role of {', '.join(sorted(_ROLES))}"
            raise MessageFormatError(msg)
        text = text_parts(message.get("content")) or ""
        role = message["role"]
        builder.record(f"{role} message")
        if role == "system":
            system.append(text)
            builder.use()
        elif not builder.text("assistant" if role in ("assistant", "tool-call") else "user", text):
            builder.skip("empty message")
    return "\n\n".join(system)
