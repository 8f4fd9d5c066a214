"""OpenHands V1 (the software agent SDK): conversation folders.

Read from the SDK's own code (OpenHands/software-agent-sdk, 2026):

- a **conversation folder** (``<persistence_dir>/<conversation id>/``) holds ``base_state.json``
  (``ConversationState``: the agent's ``llm`` — its model —, and ``stats.usage_to_metrics``:
  each LLM's ``token_usages``, one ``TokenUsage`` per completion with its ``response_id``,
  ``prompt_tokens`` — cached ones included —, ``completion_tokens``, ``cache_read_tokens``,
  ``cache_write_tokens``) and ``events/event-<index>-<id>.json``, one event a file
  (``conversation/persistence_const.py``, ``event_store.py``). An event's ``kind`` says what it
  is (``openhands/sdk/event``): ``SystemPromptEvent`` (System prompt and tools),
  ``MessageEvent`` (``llm_message``: role and content), ``ActionEvent`` (one tool call of a
  response, ``llm_response_id`` grouping a response's parallel calls, its ``thought``),
  ``ObservationEvent`` / ``UserRejectObservation`` / ``AgentErrorEvent`` (a call's result),
  ``Condensation`` (history forgotten, with a summary: a recorded compaction); the others
  (state updates, pauses, tokens, hooks) are not the conversation and are counted. Each reply's
  usage is the token usage of its ``llm_response_id``; its reasoning (the first call's
  ``thinking_blocks``, which the SDK sends back, else ``reasoning_content``, and a
  ``responses_reasoning_item``'s summary and content) is kept as thinking.

A folder the CLI wrote without ``base_state.json`` is its events alone: no usage, no model, and
``meta["usage_missing"]`` says so.

Completion logs, V1's and V0's, are read by `ctxlab.io.formats.openhands.logs`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._build import ConversationBuilder, as_mapping, image_block
from ctxlab.io.formats._chat import arguments_of, reasoning_blocks
from ctxlab.messages import ProviderUsage

__all__ = [
    "EVENT_FILE",
    "from_v1_events",
    "is_v1_event",
    "v1_folder_events",
]

EVENT_FILE = re.compile(r"^event-(?P<index>\d{5,})-(?P<id>[0-9a-fA-F\-]{8,})\.json$")
"""The name of an event's file in a V1 conversation's ``events`` folder."""

_KINDS = frozenset(
    {
        "MessageEvent",
        "ActionEvent",
        "ObservationEvent",
        "UserRejectObservation",
        "AgentErrorEvent",
        "SystemPromptEvent",
        "Condensation",
        "CondensationRequest",
        "CondensationSummaryEvent",
        "ConversationStateUpdateEvent",
        "PauseEvent",
        "InterruptEvent",
        "TokenEvent",
        "HookExecutionEvent",
        "LLMCompletionLogEvent",
        "StreamingDeltaEvent",
        "ACPToolCallEvent",
    }
)


def is_v1_event(value: Any) -> bool:
    """One event of a V1 conversation (an ``event-*.json`` file's content)."""
    return (
        isinstance(value, Mapping)
        and value.get("kind") in _KINDS
        and "source" in value
        and "id" in value
    )


def v1_folder_events(folder: Path) -> tuple[list[Any], Mapping[str, Any] | None] | None:
    """The events of a V1 conversation folder (in order) and its base state — None for the
    state when the folder has its events alone (no ``base_state.json``) —; None when ``folder``
    is not one (no ``events`` folder, or one with neither a base state beside it nor an event
    file in it)."""
    events_dir = folder / "events"
    if not events_dir.is_dir():
        return None
    named = sorted(
        (int(m.group("index")), p)
        for p in events_dir.iterdir()
        if (m := EVENT_FILE.match(p.name)) is not None
    )
    has_state = (folder / "base_state.json").is_file()
    if not has_state and not named:
        return None
    events = [_json(p) for _, p in named]
    if not has_state:
        return events, None
    state = _json(folder / "base_state.json")
    return events, state if isinstance(state, Mapping) else {}


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        msg = f"{path}: not a readable OpenHands event file ({type(exc).__name__}: {exc})"
        raise MessageFormatError(msg) from exc


def _usages(state: Mapping[str, Any]) -> tuple[dict[str, ProviderUsage], list[str]]:
    """Usage by response id, from every LLM's token usages; the models."""
    by_response: dict[str, ProviderUsage] = {}
    models: list[str] = []
    metrics = as_mapping(as_mapping(state.get("stats")).get("usage_to_metrics"))
    for entry in metrics.values():
        for usage in as_mapping(entry).get("token_usages") or ():
            usage = as_mapping(usage)
            response = usage.get("response_id")
            if isinstance(response, str) and response:
                # The prompt count holds the cache's reads and writes (LiteLLM's, as OpenAI's).
                by_response[response] = ProviderUsage.with_cache_inside(
                    usage.get("prompt_tokens"),
                    usage.get("completion_tokens"),
                    usage.get("cache_read_tokens"),
                    usage.get("cache_write_tokens"),
                )
            model = usage.get("model")
            if isinstance(model, str) and model and model not in models:
                models.append(model)
    return by_response, models


def _content(items: Any) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for item in items if isinstance(items, list) else ():
        item = as_mapping(item)
        if item.get("type") == "text" and isinstance(item.get("text"), str):
            if item["text"].strip():
                blocks.append({"type": "text", "text": item["text"]})
        elif item.get("type") == "image":
            blocks.extend(image_block(str(u)) for u in item.get("image_urls") or ())
        elif item:
            blocks.append({"type": "provider", "data": dict(item)})
    return blocks


class _Conversation:
    """Reads V1 events in order into a builder (see the module)."""

    def __init__(self, builder: ConversationBuilder, usage: dict[str, ProviderUsage]) -> None:
        self.builder = builder
        self.usage = usage
        self.system: list[str] = []
        self.tools: list[Any] = []
        self.response: str | None = None  # the response whose calls are being read
        self.turn = -1  # and the turn of its reply
        self.billed: set[str] = set()
        self.compactions: list[dict[str, Any]] = []
        self.reasoned: dict[str, set[str]] = {}  # the reasoning kept, by response id

    def event(self, event: Mapping[str, Any]) -> None:
        kind = str(event.get("kind"))
        builder = self.builder
        builder.record(kind)
        if kind == "SystemPromptEvent":
            prompt = as_mapping(event.get("system_prompt")).get("text")
            self.system.append(str(prompt or ""))
            dynamic = as_mapping(event.get("dynamic_context")).get("text")
            if isinstance(dynamic, str) and dynamic:
                self.system.append(dynamic)
            self.tools = [t for t in event.get("tools") or () if isinstance(t, Mapping)]
            builder.use()
        elif kind == "MessageEvent":
            self.message(event)
        elif kind == "ActionEvent":
            self.action(event)
        elif kind in ("ObservationEvent", "UserRejectObservation", "AgentErrorEvent"):
            self.result(kind, event)
        elif kind == "Condensation" and isinstance(event.get("summary"), str):
            replies = sum(t["role"] == "assistant" for t in builder.turns)
            summary = event["summary"]
            self.compactions.append(
                {"kind": "compact", "trigger": "auto", "replies_before": replies}
                | {"summary_head": summary[:200]}
            )
            if not builder.text("user", summary):
                builder.skip("empty condensation summary")
        else:
            builder.skip(kind)

    def _bill(self, response: Any) -> ProviderUsage | None:
        if not isinstance(response, str) or response in self.billed:
            return None
        self.billed.add(response)
        return self.usage.get(response)

    def _reasoning(self, holder: Mapping[str, Any], response: Any) -> list[dict[str, Any]]:
        """A response's reasoning, kept on its reply as thinking: Anthropic's thinking blocks
        (the SDK sends them back with the conversation), else ``reasoning_content``, and a
        Responses reasoning item's summary and content; encrypted content counted. Reasoning a
        response's other call repeats is counted, not kept twice."""
        blocks = reasoning_blocks(holder)
        thinking = holder.get("thinking_blocks")
        if isinstance(thinking, list) and len(thinking) > len(blocks):
            self.builder.leave_out("thinking block without its text", len(thinking) - len(blocks))
        text = holder.get("reasoning_content")
        shown = "".join(str(b.get("thinking", "")) for b in blocks)
        if isinstance(text, str) and text.strip() and blocks and text != shown:
            self.builder.leave_out("reasoning content beside its thinking blocks")
        item = as_mapping(holder.get("responses_reasoning_item"))
        for key in ("summary", "content"):
            parts = item.get(key)
            for part in parts if isinstance(parts, list) else ():
                if isinstance(part, str) and part.strip():
                    blocks.append({"type": "thinking", "thinking": part})
        if item.get("encrypted_content"):
            self.builder.leave_out("encrypted reasoning of a Responses reasoning item")
        # (a reply of no response id is a response of its own)
        seen = self.reasoned.setdefault(response, set()) if isinstance(response, str) else set()
        kept = [b for b in blocks if _key(b) not in seen]
        self.builder.leave_out(
            "the same reasoning on another call of its response", len(blocks) - len(kept)
        )
        seen.update(_key(b) for b in kept)
        return kept

    def message(self, event: Mapping[str, Any]) -> None:
        message = as_mapping(event.get("llm_message"))
        role = "assistant" if message.get("role") == "assistant" else "user"
        reasoning = (
            self._reasoning(message, event.get("llm_response_id")) if role == "assistant" else []
        )
        blocks = (
            reasoning + _content(message.get("content")) + _content(event.get("extended_content"))
        )
        usage = self._bill(event.get("llm_response_id")) if role == "assistant" else None
        self.response = None
        if not self.builder.add(role, blocks, usage):
            self.builder.skip("message with nothing kept")
        elif role == "assistant":
            self._date(event, usage)

    def action(self, event: Mapping[str, Any]) -> None:
        call = as_mapping(event.get("tool_call"))
        response = event.get("llm_response_id")
        blocks = self._reasoning(event, response) + _content(event.get("thought"))
        blocks.append(
            {
                "type": "tool_use",
                "id": str(call.get("id") or event.get("tool_call_id") or event.get("id")),
                "name": str(call.get("name") or event.get("tool_name") or "tool"),
                "input": arguments_of(call.get("arguments")),
            }
        )
        turns = self.builder.turns
        if response is not None and response == self.response and self.turn >= len(turns) - 2:
            # Another call of the same response (parallel calls, maybe after the first's
            # result): the same reply.
            self.builder.add_to(self.turn, blocks)
            return
        self.response = response if isinstance(response, str) else None
        usage = self._bill(response)
        if self.builder.add("assistant", blocks, usage):
            self._date(event, usage)
        self.turn = len(turns) - 1

    def _date(self, event: Mapping[str, Any], usage: ProviderUsage | None) -> None:
        # The event's ``timestamp`` (``datetime.now().isoformat()``: no zone); a new response
        # (its usage) dates the turn it joins.
        self.builder.reply_time(event.get("timestamp"), replace=usage is not None)

    def result(self, kind: str, event: Mapping[str, Any]) -> None:
        if kind == "ObservationEvent":
            observation = as_mapping(event.get("observation"))
            raw = observation.get("content")
            # Parts as a list, or (some tools' observations) the output as one string.
            content: Any = (raw if raw.strip() else "") if isinstance(raw, str) else _content(raw)
            content = content or ""
            error = bool(observation.get("is_error"))
        elif kind == "UserRejectObservation":
            content, error = f"Action rejected: {event.get('rejection_reason') or ''}", True
        else:
            content, error = str(event.get("error") or "error"), True
        result = {
            "type": "tool_result",
            "tool_use_id": str(event.get("tool_call_id") or ""),
            "content": content,
            "is_error": error or None,
        }
        if not self.builder.add("user", [result]):
            self.builder.skip("result without a call id")


def _key(block: Mapping[str, Any]) -> str:
    return str(block.get("thinking", block.get("data", "")))


def from_v1_events(
    events: Sequence[Any], state: Mapping[str, Any] | None, where: str
) -> tuple[ConversationBuilder, str, list[Any], dict[str, Any]]:
    """The conversation, System text, tool definitions and notes of a V1 conversation's events
    (in order) and its base state (None when there is none: the notes say what that leaves
    unknown)."""
    usage, models = _usages(state or {})
    builder = ConversationBuilder(where, unit="event")
    reader = _Conversation(builder, usage)
    for number, event in enumerate(events):
        if not is_v1_event(event):
            builder.record("file of another kind")
            builder.skip(f"not an OpenHands event (event {number})")
            continue
        reader.event(event)
    for _ in usage.keys() - reader.billed:
        # A completion whose reply is not among the events (a condenser's own call, ...).
        builder.lose_usage("a completion with no reply among the events")
    notes: dict[str, Any] = {"models": models, "compactions": reader.compactions}
    if state is None:
        # The SDK keeps each completion's usage and the agent's model in base_state.json.
        notes["usage_missing"] = (
            "no base_state.json with the events: the replies' usage and the agent's model "
            "are not recorded"
        )
        state = {}
    llm = as_mapping(as_mapping(state.get("agent")).get("llm"))
    if isinstance(llm.get("model"), str) and llm["model"] not in models:
        models.insert(0, llm["model"])
    if isinstance(state.get("id"), str):
        notes["conversation_id"] = state["id"]
    return builder, "\n\n".join(s for s in reader.system if s), reader.tools, notes
