"""OpenHands event histories: an evaluation's ``output.jsonl`` (one instance a line, its
``history``), a resolver's output and a trajectory export (the list of events).

Read from OpenHands' own serialization (All-Hands-AI/OpenHands, ``openhands/events/serialization``:
``event_to_dict``; ``openhands/events/tool.py``: ``ToolCallMetadata``; 2025–2026). Each event is
``{"id", "timestamp", "source": "user" | "agent" | "environment", "message", ...}`` (the
``timestamp``: ``datetime.now().isoformat()``, local time without a zone — read as UTC, so
gaps are right) and either an
action (``action``: ``message``, ``run``, ``read``, ``edit``, ``think``, ``finish``, ...;
``args``) or an observation (``observation``, ``content``, ``cause``: the id of its action).
An agent action made by a function call carries ``tool_call_metadata`` (``function_name``,
``tool_call_id``, ``model_response`` with the usage, ``total_calls_in_response``); its
observation carries the same metadata. User ``message`` actions are the user's turns; the
agent's ``message``/``finish`` actions and each action's ``thought`` are its text. System
events, state changes and observations of no call are counted in ``meta["skipped"]``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._build import ConversationBuilder, as_mapping, image_block
from ctxlab.io.formats._chat import openai_usage

__all__ = ["from_openhands_events", "is_openhands_events", "openhands_events_of"]


def _is_event(value: Any) -> bool:
    return (
        isinstance(value, Mapping)
        and value.get("source") in ("user", "agent", "environment")
        and ("action" in value or "observation" in value)
    )


def is_openhands_events(value: Any) -> bool:
    """An OpenHands history: a list of events, or an object holding one in ``history``."""
    if isinstance(value, Mapping):
        history = value.get("history")
        return isinstance(history, list) and bool(history) and _is_event(history[0])
    return isinstance(value, list) and bool(value) and all(_is_event(v) for v in value[:5])


def openhands_events_of(data: Any, where: str, episode: int) -> tuple[list[Any], dict[str, Any]]:
    """The events of instance ``episode`` (an output.jsonl's lines, one object, or a list of
    events) and the instance's notes."""
    if isinstance(data, list) and data and isinstance(data[0], Mapping) and "history" in data[0]:
        if not 0 <= episode < len(data):
            msg = f"{where}: no instance {episode} (the file holds {len(data)})"
            raise MessageFormatError(msg)
        data = data[episode]
    if isinstance(data, Mapping):
        notes = {k: data[k] for k in ("instance_id",) if k in data}
        llm = as_mapping(as_mapping(data.get("metadata")).get("llm_config"))
        if isinstance(llm.get("model"), str):
            notes["models"] = [llm["model"]]
        history = data.get("history")
        if not isinstance(history, list):
            msg = f"{where}: an OpenHands output needs a 'history' list of events"
            raise MessageFormatError(msg)
        return history, notes
    if isinstance(data, list):
        return data, {}
    msg = f"{where}: an OpenHands history is a list of events or an object with 'history'"
    raise MessageFormatError(msg)


def from_openhands_events(events: Sequence[Any], where: str) -> ConversationBuilder:
    """The conversation of OpenHands events, in order."""
    builder = ConversationBuilder(where, unit="event")
    calls: dict[Any, str] = {}  # action event id -> tool call id
    responses: set[str] = set()
    for index, event in enumerate(events):
        if not isinstance(event, Mapping):
            msg = f"{where} event {index}: not an object"
            raise MessageFormatError(msg)
        source = event.get("source")
        if "action" in event:
            action = event.get("action")
            builder.record(f"{source} {action} action", raw=event)
            # The run's cost and tokens so far, written on each event: no request's bill.
            builder.set_aside(event.get("llm_metrics"), "the run's running totals")
            args = as_mapping(event.get("args"))
            meta = event.get("tool_call_metadata")
            if source == "user" and action == "message":
                said = str(args.get("content") or event.get("message") or "")
                prompt = [{"type": "text", "text": said}] if said.strip() else []
                if not builder.add("user", prompt + _images(args.get("image_urls"))):
                    builder.skip("message with nothing kept")
            elif source == "agent" and isinstance(meta, Mapping):
                call_id = str(meta.get("tool_call_id") or f"openhands_{event.get('id')}")
                calls[event.get("id")] = call_id
                response = meta.get("model_response")
                response_id = str(response.get("id")) if isinstance(response, Mapping) else ""
                usage = None
                if isinstance(response, Mapping) and response_id not in responses:
                    responses.add(response_id)
                    usage = openai_usage(response.get("usage"))
                    _note_model(builder, response.get("model"))
                blocks: list[dict[str, Any]] = []
                thought = args.get("thought")
                if isinstance(thought, str) and thought.strip():
                    blocks.append({"type": "text", "text": thought})
                # The thought is the reply's text; every other argument (an edit's content, a
                # command) is the call's input.
                inputs = {k: v for k, v in args.items() if k != "thought"}
                name = str(meta.get("function_name") or action or "tool")
                blocks.append({"type": "tool_use", "id": call_id, "name": name, "input": inputs})
                if builder.add("assistant", blocks, usage):
                    # A new response (its usage) dates the turn its calls join.
                    builder.reply_time(event.get("timestamp"), replace=usage is not None)
            elif source == "agent" and action in ("message", "finish"):
                text = args.get("content") or args.get("final_thought") or event.get("message")
                if builder.text("assistant", str(text or "")):
                    builder.reply_time(event.get("timestamp"))
                else:
                    builder.skip("empty message")
            else:
                builder.skip(f"{source} {action} action")
        else:
            builder.record(f"{event.get('observation')} observation", raw=event)
            builder.set_aside(event.get("llm_metrics"), "the run's running totals")
            _observation(event, calls, builder)
    return builder


def _note_model(builder: ConversationBuilder, model: Any) -> None:
    # The models that answered, in order (each response names its own): what the session is
    # priced and counted as.
    if isinstance(model, str) and model:
        models = builder.notes.setdefault("models", [])
        if model not in models:
            models.append(model)


def _images(urls: Any) -> list[dict[str, Any]]:
    # A message's images (links or data URLs), kept with its text.
    return (
        [image_block(u) for u in urls or () if isinstance(u, str) and u]
        if isinstance(urls, list)
        else []
    )


def _observation(
    event: Mapping[str, Any], calls: dict[Any, str], builder: ConversationBuilder
) -> None:
    cause = event.get("cause")
    meta = event.get("tool_call_metadata")
    answered = calls.get(cause)
    if answered is None and isinstance(meta, Mapping) and meta.get("tool_call_id"):
        answered = str(meta["tool_call_id"])
    if answered is None:
        builder.skip(f"{event.get('observation')} observation")
        return
    content = event.get("content")
    text = content if isinstance(content, str) else str(content or "")
    extras = as_mapping(event.get("extras"))
    images = _images(extras.get("image_urls"))
    if extras.get("screenshot"):
        # A browser's screenshot is shown to the user, not part of the result text: counted.
        builder.leave_out("screenshot")
    builder.add(
        "user",
        [
            {
                "type": "tool_result",
                "tool_use_id": answered,
                "content": [{"type": "text", "text": text}, *images] if images else text,
                "is_error": event.get("observation") == "error",
            }
        ],
    )
