"""SWE-agent trajectories (``.traj``): ``history`` holds the model's view.

Two history formats: with function calling, assistant turns carry ``tool_calls`` (sometimes as
the string form of a Python list) answered by ``role: "tool"`` messages naming
``tool_call_ids``; without it (v0), an assistant turn's ``action`` is a shell-level command,
taken as a call of ``bash`` whose result is the next observation. A history that ends with an
action gets its result from the last trajectory step's observation.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._build import ConversationBuilder, as_mapping
from ctxlab.io.formats._chat import _text, tool_use_of
from ctxlab.util._json import parse_json

__all__ = ["from_swe_agent", "is_swe_agent"]


def is_swe_agent(value: Any) -> bool:
    """Whether a decoded document looks like a SWE-agent trajectory: a ``history`` beside its
    ``trajectory``, or (a demonstration, which may have no ``trajectory``) a history whose
    entries carry SWE-agent's ``agent`` / ``message_type`` fields."""
    if not isinstance(value, Mapping) or not isinstance(value.get("history"), list):
        return False
    if "trajectory" in value:
        return True
    head = [h for h in value["history"][:10] if isinstance(h, Mapping)]
    return (
        bool(head)
        and all("role" in h for h in head)
        and any("message_type" in h or "agent" in h for h in head)
    )


def _listed(value: Any) -> list[Any]:
    if isinstance(value, list):
        return value
    if isinstance(value, str) and value.strip().startswith("["):
        try:
            parsed = ast.literal_eval(value)  # SWE-agent sometimes writes Python reprs
        except (ValueError, SyntaxError, RecursionError, MemoryError):
            # (MemoryError: the parser's own stack overflowing on a deeply nested text)
            parsed = parse_json(value)
        return parsed if isinstance(parsed, list) else []
    return []


def _assistant(
    message: Mapping[str, Any], index: int, text: str
) -> tuple[list[dict[str, Any]], str | None]:
    """The blocks of an assistant turn, and the id of a v0 action awaiting its observation."""
    blocks: list[dict[str, Any]] = []
    thought = _text(message.get("thought")) if "thought" in message else text
    if thought.strip():
        blocks.append({"type": "text", "text": thought})
    calls = _listed(message.get("tool_calls"))
    for number, call in enumerate(calls):
        call = call if isinstance(call, Mapping) else {}
        blocks.append(tool_use_of(call, f"swe_{index:04d}_{number}"))
    action = message.get("action")
    if calls or not isinstance(action, str) or not action.strip():
        return blocks, None
    pending = f"swe_{index:04d}"
    blocks.append({"type": "tool_use", "id": pending, "name": "bash", "input": {"command": action}})
    return blocks, pending


def from_swe_agent(data: Mapping[str, Any], where: str) -> tuple[ConversationBuilder, str]:
    """The conversation and System text of a SWE-agent trajectory."""
    history = data.get("history")
    if not isinstance(history, list):
        msg = f"{where}: a SWE-agent trajectory needs a 'history' list"
        raise MessageFormatError(msg)
    builder = ConversationBuilder(where, unit="entry")
    system: list[str] = []
    pending: str | None = None
    for index, message in enumerate(history):
        if not isinstance(message, Mapping):
            msg = f"{where} history {index}: not an object"
            raise MessageFormatError(msg)
        role, text = message.get("role"), _text(message.get("content"))
        builder.record(f"history {role}")
        if role == "system":
            system.append(text)
            builder.use()
        elif role == "assistant":
            blocks, pending = _assistant(message, index, text)
            if not builder.add("assistant", blocks):
                builder.skip("empty reply")
        elif role == "tool":
            for call_id in _listed(message.get("tool_call_ids")) or [message.get("tool_call_id")]:
                builder.add(
                    "user", [{"type": "tool_result", "tool_use_id": str(call_id), "content": text}]
                )
        elif role == "user":
            if pending is not None:
                builder.add(
                    "user", [{"type": "tool_result", "tool_use_id": pending, "content": text}]
                )
                pending = None
            elif not builder.text("user", text):
                builder.skip("message with nothing kept")
        else:
            builder.skip(f"{role} entry")
    trajectory = data.get("trajectory")
    trajectory = trajectory if isinstance(trajectory, list) else []
    steps = len(trajectory)
    if pending is not None and steps:
        last = trajectory[-1]
        if isinstance(last, Mapping) and isinstance(last.get("observation"), str):
            # The history's last action: its result is only in the trajectory's last step.
            builder.record("trajectory step")
            builder.add(
                "user",
                [{"type": "tool_result", "tool_use_id": pending, "content": last["observation"]}],
            )
            steps -= 1
    builder.record("trajectory step", steps, raw=trajectory[:steps])
    builder.skip("trajectory step (the history holds the model's view of it)")
    # The run's totals (cost, tokens sent and received): the whole session's, no request's.
    builder.set_aside(as_mapping(data.get("info")).get("model_stats"), "the session's totals")
    return builder, "\n\n".join(system)
