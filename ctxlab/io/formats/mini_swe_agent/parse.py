"""mini-SWE-agent trajectories, 1.x (actions in the text) and 2.x (tool calls).

Read from mini-SWE-agent's own code (SWE-agent/mini-swe-agent, ``agents/default.py``: the saved
``{"info", "messages", "trajectory_format"}``; ``models/utils/actions_text.py`` and
``actions_toolcall.py``: how actions are parsed and observations written; 2025–2026):

- every message is an OpenAI-style dict with an ``extra`` of mini's own: the assistant's parsed
  ``actions`` (``{"command", "tool_call_id"?}``), the provider ``response`` (with its usage and
  ``created``) and, from 2.x, the ``timestamp`` that dates the reply;
- **text-based** models (1.x, and 2.x's ``*_textbased`` models) write the action in the reply —
  ```` ```mswea_bash_command ```` (earlier ```` ```bash ````) or ``<mswea_bash_command>`` — and
  the observation comes back as a ``user`` message, one per action;
- **tool-calling** models (2.x) reply with ``tool_calls`` and get ``role: "tool"`` observations
  with their ``tool_call_id``; commands a human typed are ``user`` messages;
- the run ends with a ``role: "exit"`` message (its exit status and submission).

A trajectory loads from the saved object or from its bare message list.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._build import ConversationBuilder, as_mapping, text_parts
from ctxlab.io.formats._chat import arguments_of, openai_usage

__all__ = ["from_mini_swe_agent", "is_mini_swe_agent_list"]

_FENCE = re.compile(r"```(?:mswea_bash_command|bash)[ \t]*+\n")
_TAG, _END_TAG = "<mswea_bash_command>", "</mswea_bash_command>"


def actions_in(text: str) -> list[tuple[int, int, str]]:
    """(start, end, command) of each action written in a reply, as mini's pattern finds them
    (```` ```mswea_bash_command ```` or ```` ```bash ```` fences, ``<mswea_bash_command>`` tags;
    ``(.*?)`` up to the first closing after each opening), in time linear in the reply's length:
    an opening never closed ends the search for its kind instead of scanning to the end again
    from every later one (a 160 kB reply of unclosed tags took 15 s)."""
    spans: list[tuple[int, int, str]] = []
    fence = _FENCE.search(text)
    tag = text.find(_TAG)
    position = 0
    while fence is not None or tag >= 0:
        if fence is not None and (tag < 0 or fence.start() < tag):
            body = fence.end()
            close = text.find("```", body)
            if close < 0:
                fence = None  # no fence after this one closes either
                continue
            # The body stops before a line break that precedes the closing fence.
            stop = close - 1 if close > body and text[close - 1] == "\n" else close
            spans.append((fence.start(), close + 3, text[body:stop]))
            position = close + 3
        else:
            close = text.find(_END_TAG, tag + len(_TAG))
            if close < 0:
                tag = -1  # no tag after this one closes either
                continue
            spans.append((tag, close + len(_END_TAG), text[tag + len(_TAG) : close]))
            position = close + len(_END_TAG)
        # Each kind's next opening, searched for again only when the last one was used up.
        if fence is not None and fence.start() < position:
            fence = _FENCE.search(text, position)
        if tag >= 0 and tag < position:
            tag = text.find(_TAG, position)
    return spans


def is_mini_swe_agent_list(messages: Sequence[Any]) -> bool:
    """A bare list of mini-SWE-agent messages: mini's ``extra`` (parsed actions), an ``exit``
    message, or its action fences."""
    dicts = [m for m in messages if isinstance(m, Mapping)]
    if not dicts or len(dicts) != len(messages) or not all("role" in m for m in dicts):
        return False
    for message in dicts:
        extra = message.get("extra")
        if message.get("role") == "exit" or (isinstance(extra, Mapping) and "actions" in extra):
            return True
        content = message.get("content")
        if (
            message.get("role") == "assistant"
            and isinstance(content, str)
            and "mswea_bash_command" in content
        ):
            return True
    return False


def from_mini_swe_agent(data: Any, where: str) -> tuple[ConversationBuilder, str, dict[str, Any]]:
    """The conversation, System text and notes of a trajectory (the saved object or its list)."""
    messages = data.get("messages") if isinstance(data, Mapping) else data
    if not isinstance(messages, list):
        msg = f"{where}: a mini-SWE-agent trajectory needs a 'messages' list"
        raise MessageFormatError(msg)
    builder = ConversationBuilder(where, unit="message")
    system: list[str] = []
    notes = _notes(data) if isinstance(data, Mapping) else {}
    pending: list[str] = []  # text-based calls waiting for their observation, in order
    calls = 0
    for index, message in enumerate(messages):
        if not isinstance(message, Mapping):
            msg = f"{where} message {index}: not an object"
            raise MessageFormatError(msg)
        role = message.get("role")
        builder.record(f"{role} message")
        text = _text(message.get("content"))
        extra = as_mapping(message.get("extra"))
        if role == "system":
            system.append(text)
            builder.use()
        elif role == "exit":
            builder.skip("exit message")
            notes.setdefault("exit_status", extra.get("exit_status") or text)
        elif role == "assistant":
            response = extra.get("response")
            usage = openai_usage(response.get("usage")) if isinstance(response, Mapping) else None
            blocks, new = _assistant(message, text, extra, calls)
            blocks = _reasoning(response) + blocks
            calls += len(new)
            pending = [] if message.get("tool_calls") else new
            if not builder.add("assistant", blocks, usage):
                builder.skip("empty reply")
            else:
                builder.reply_time(_stamp(extra, response), "s", replace=True)
        elif role == "tool":
            call_id = str(message.get("tool_call_id") or "")
            builder.add("user", [{"type": "tool_result", "tool_use_id": call_id, "content": text}])
        elif role == "user":
            if pending:
                builder.add(
                    "user",
                    [{"type": "tool_result", "tool_use_id": pending.pop(0), "content": text}],
                )
            elif not builder.text("user", text):
                builder.skip("message with nothing kept")
        else:
            builder.skip(f"{role} message")
    return builder, "\n\n".join(system), notes


def _assistant(
    message: Mapping[str, Any], text: str, extra: Mapping[str, Any], calls: int
) -> tuple[list[dict[str, Any]], list[str]]:
    """The reply's blocks and the ids of the text-based calls it made."""
    tool_calls = message.get("tool_calls")
    if isinstance(tool_calls, list) and tool_calls:
        blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text.strip() else []
        for call in tool_calls:
            function = call.get("function") if isinstance(call, Mapping) else None
            if not isinstance(function, Mapping):
                continue
            inputs = arguments_of(function.get("arguments"))
            call_id = str(call.get("id") or f"mini_{calls + len(blocks) + 1:04d}")
            blocks.append(
                {
                    "type": "tool_use",
                    "id": call_id,
                    "name": str(function.get("name") or "bash"),
                    "input": inputs,
                }
            )
        return blocks, []
    # Text-based: the parsed actions when mini saved them, else its own patterns — where it
    # finds exactly one (more, or none, is a format error: nothing ran, the next user message
    # says so).
    actions = extra.get("actions")
    spans = actions_in(text)
    if isinstance(actions, list):
        commands = [str(a.get("command", "")) for a in actions if isinstance(a, Mapping)]
    else:
        found = [command.strip() for _, _, command in spans]
        commands = found if len(found) == 1 else []
    thought = _without(text, spans).strip() if commands else text
    blocks = [{"type": "text", "text": thought}] if thought.strip() else []
    ids = [f"mini_{calls + n + 1:04d}" for n in range(len(commands))]
    blocks += [
        {"type": "tool_use", "id": call_id, "name": "bash", "input": {"command": command}}
        for call_id, command in zip(ids, commands, strict=True)
    ]
    return blocks, ids


def _reasoning(response: Any) -> list[dict[str, Any]]:
    """The reply's reasoning, as its provider returned it through LiteLLM (``reasoning`` or
    ``reasoning_content`` on the response's message): a thinking block before its text."""
    choices = as_mapping(response).get("choices")
    first = choices[0] if isinstance(choices, list) and choices else None
    message = as_mapping(as_mapping(first).get("message"))
    for key in ("reasoning_content", "reasoning"):
        text = message.get(key)
        if isinstance(text, str) and text.strip():
            return [{"type": "thinking", "thinking": text}]
    return []


def _without(text: str, spans: list[tuple[int, int, str]]) -> str:
    kept, last = [], 0
    for start, end, _ in spans:
        kept.append(text[last:start])
        last = end
    return "".join(kept) + text[last:]


def _stamp(extra: Mapping[str, Any], response: Any) -> Any:
    """When a reply was recorded, epoch seconds: 2.x's ``extra.timestamp`` (``time.time()``
    once the call returned), else — 1.x writes none — the provider response's ``created``
    (when the provider made it: whole seconds)."""
    if extra.get("timestamp") is not None:
        return extra["timestamp"]
    return response.get("created") if isinstance(response, Mapping) else None


def _notes(data: Mapping[str, Any]) -> dict[str, Any]:
    notes: dict[str, Any] = {k: data[k] for k in ("instance_id", "trajectory_format") if k in data}
    info = as_mapping(data.get("info"))
    for key in ("exit_status", "mini_version"):
        if info.get(key):
            notes[key] = info[key]
    stats = as_mapping(info.get("model_stats"))
    if "api_calls" in stats:
        notes["api_calls"] = stats["api_calls"]
    model = as_mapping(as_mapping(info.get("config")).get("model"))
    if isinstance(model.get("model_name"), str):
        notes["models"] = [model["model_name"]]
    return notes


def _text(content: Any) -> str:
    text = text_parts(content)
    if text is not None:
        return text
    return "" if content is None else str(content)
