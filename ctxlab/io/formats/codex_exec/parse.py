"""Codex CLI ``codex exec --json`` event streams (stdout saved as JSON Lines).

Read from Codex's own code (openai/codex, ``codex-rs/exec/src/exec_events.rs`` — ``ThreadEvent``,
``ThreadItem``, ``Usage`` —, ``event_processor_with_jsonl_output.rs`` and the earlier
``event_processor_with_json_output.rs``, read in 2026). Three generations:

- **0.44 on** (October 2025): ``thread.started`` (``thread_id``), ``turn.started``,
  ``item.started`` / ``item.updated`` / ``item.completed`` (``item``: ``id``, ``type`` —
  ``agent_message``, ``reasoning``, ``command_execution``, ``file_change``, ``mcp_tool_call``,
  ``collab_tool_call``, ``web_search``, ``todo_list``, ``plan``, ``error``), ``turn.completed``
  (``usage``: ``input_tokens`` — cached ones included —, ``cached_input_tokens``,
  ``output_tokens``: the thread's running total at the end of the turn), ``turn.failed``,
  ``error``.
- **September 2025** (the experimental stream): ``session.created`` and ``item.completed`` with
  ``assistant_message`` items; the rest as above.
- **Before** (0.1x–0.4x): a first line with the run's settings and its ``prompt``, then Codex's
  protocol events ``{"id", "msg": {"type", ...}}``: ``agent_message``, ``agent_reasoning``,
  ``exec_command_begin``/``end``, ``patch_apply_begin``/``end``, ``mcp_tool_call_begin``/``end``,
  ``token_count`` (the usage of one model call), ``task_started``/``task_complete``, ...

What becomes what: an agent message is the reply's text; a command, a file change, an MCP or
collab call is a tool call with its result (a failed or declined one an error); a web search is
kept as a provider block. The stream holds no System prompt, and from 0.44 no prompt either:
each turn's prompt is a stand-in user message saying so (``meta["unrecorded_prompts"]``). A
turn's usage is a total over all of its requests (a running total of the thread), so it is kept
in ``meta["turn_usage"]``, never spread over requests; the older per-call ``token_count`` is the
usage of the replies in order when there are as many counts as replies, else counted lost.
The census counts a line a record (kinds: the event's ``type`` and its item's, or the older
stream's ``msg`` type); reasoning, to-do lists, deltas, ``item.started`` (its
``item.completed`` holds the item whole) and lifecycle events are counted skipped.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._build import ConversationBuilder, as_mapping, tool_result
from ctxlab.io.formats._chat import arguments_of
from ctxlab.io.formats._totals import checked_totals
from ctxlab.messages import ProviderUsage

__all__ = ["STAND_IN_PROMPT", "from_codex_exec", "is_codex_exec_line"]

STAND_IN_PROMPT = "[the prompt of this codex exec turn: not in its --json output]"
_THREAD_EVENTS = {
    "thread.started",
    "turn.started",
    "turn.completed",
    "turn.failed",
    "item.started",
    "item.updated",
    "item.completed",
    "item.plan.delta",
    "request_user_input",
    "session.created",
}
_TOOL_ITEMS = {"command_execution", "file_change", "mcp_tool_call", "collab_tool_call"}


def is_codex_exec_line(value: Any) -> bool:
    """A line of ``codex exec --json``: a thread event, an older protocol event
    (``{"id", "msg": {"type"}}``) or the older stream's first line (settings and ``prompt``)."""
    if not isinstance(value, Mapping):
        return False
    if value.get("type") in _THREAD_EVENTS:
        return True
    if isinstance(value.get("msg"), Mapping) and "type" in value["msg"] and "id" in value:
        return True
    return isinstance(value.get("prompt"), str) and "model" in value and "sandbox" in value


def from_codex_exec(
    records: Iterable[tuple[int, Any]], where: str
) -> tuple[ConversationBuilder, dict[str, Any]]:
    """The conversation and notes of an exec stream's (line number, line) pairs."""
    reader = _Reader(ConversationBuilder(where, unit="line"))
    for number, line in records:
        if not isinstance(line, Mapping):
            msg = f"{where} line {number}: not a codex exec --json event (an object with 'type')"
            raise MessageFormatError(msg)
        if isinstance(line.get("msg"), Mapping) and "type" in line["msg"]:
            reader.builder.record(f"msg {line['msg']['type']}", raw=line)
            reader.protocol(line["msg"])
        elif isinstance(line.get("prompt"), str) and "type" not in line:
            reader.builder.record("settings and prompt", raw=line)
            reader.settings(line)
        elif isinstance(line.get("type"), str):
            item = line.get("item")
            detail = f" {item.get('type')}" if isinstance(item, Mapping) else ""
            reader.builder.record(f"{line['type']}{detail}", raw=line)
            reader.thread(line, f"{where} line {number}")
        else:
            msg = f"{where} line {number}: not a codex exec --json event (an object with 'type')"
            raise MessageFormatError(msg)
        reader.builder.settle("event with nothing kept")
    return reader.builder, reader.finish()


class _Reader:
    def __init__(self, builder: ConversationBuilder) -> None:
        self.builder = builder
        self.meta: dict[str, Any] = {}
        self.turn_usage: list[dict[str, Any]] = []
        self.call_usage: list[ProviderUsage] = []
        self.stand_ins = 0
        self.begun: dict[str, Mapping[str, Any]] = {}  # older stream: calls begun, by call id
        self.open: dict[str, Mapping[str, Any]] = {}  # items started and not completed

    # --- 0.44 on (and the experimental stream) ---

    def thread(self, event: Mapping[str, Any], at: str) -> None:
        kind = event["type"]
        if kind in ("thread.started", "session.created"):
            thread = event.get("thread_id") or event.get("session_id")
            if isinstance(thread, str):
                self.meta.setdefault("thread_id", thread)
            self.builder.use()
            return
        if kind == "turn.started":
            self.stand_ins += 1
            self.builder.text("user", STAND_IN_PROMPT)
        elif kind == "turn.completed":
            usage = event.get("usage")
            if isinstance(usage, Mapping):
                self.turn_usage.append(checked_totals(usage, at, "the turn's usage"))
            self.builder.skip("turn usage (a total over the turn's requests)")
        elif kind == "item.completed" and isinstance(event.get("item"), Mapping):
            self.open.pop(str(event["item"].get("id")), None)
            self.item(event["item"])
        elif kind == "item.started" and isinstance(event.get("item"), Mapping):
            self.open[str(event["item"].get("id"))] = event["item"]
            self.builder.skip("item.started")
        else:
            self.builder.skip(f"event {kind}")

    def item(self, item: Mapping[str, Any]) -> None:
        kind = item.get("type")
        if kind in ("agent_message", "assistant_message", "plan"):
            if not self.builder.text("assistant", str(item.get("text") or "")):
                self.builder.skip("empty agent message")
        elif kind in _TOOL_ITEMS:
            # (its item.started line, skipped, held the same item unfinished)
            use, result = _tool(item)
            self.builder.add("assistant", [use])
            if result is not None:
                self.builder.add("user", [result])
        elif kind == "web_search":
            self.builder.add("assistant", [{"type": "provider", "data": dict(item)}])
        else:
            self.builder.skip(f"{kind or 'unknown'} item")  # reasoning, todo_list, error

    # --- before 0.44: the protocol's events ---

    def settings(self, line: Mapping[str, Any]) -> None:
        model = line.get("model")
        if isinstance(model, str):
            self.meta["models"] = [model]
        if not self.builder.text("user", str(line["prompt"])):
            self.builder.use()  # read for the model

    def protocol(self, msg: Mapping[str, Any]) -> None:
        kind = msg.get("type")
        if kind == "agent_message":
            if not self.builder.text("assistant", str(msg.get("message") or "")):
                self.builder.skip("empty agent message")
        elif kind in ("exec_command_begin", "patch_apply_begin", "mcp_tool_call_begin"):
            self.begun[str(msg.get("call_id"))] = msg
            self.builder.use()  # the call's input, kept with its end event's output
        elif kind in ("exec_command_end", "patch_apply_end", "mcp_tool_call_end"):
            use, result = _protocol_tool(self.begun.pop(str(msg.get("call_id")), {}), msg)
            self.builder.add("assistant", [use])
            self.builder.add("user", [result])
        elif kind == "token_count":
            usage = _token_count(msg)
            if usage is None:
                self.builder.skip("event token_count without usage")
            else:
                self.call_usage.append(usage)
                self.builder.use()  # read for its usage, placed at the end
        elif kind == "session_configured" and isinstance(msg.get("model"), str):
            self.meta.setdefault("models", [msg["model"]])
            self.builder.skip(f"event {kind}")
        else:
            self.builder.skip(f"event {kind or 'unknown'}")

    def finish(self) -> dict[str, Any]:
        # Calls begun and never finished (the run stopped): kept, left to the repair to answer.
        for begun in self.begun.values():
            use, _ = _protocol_tool(begun, {})
            self.builder.add("assistant", [use])
        for item in self.open.values():
            if item.get("type") in _TOOL_ITEMS:
                use, _ = _tool(item)
                self.builder.add("assistant", [use])
                self.builder.notes["unfinished_calls"] = (
                    self.builder.notes.get("unfinished_calls", 0) + 1
                )
        replies = [i for i, t in enumerate(self.builder.turns) if t["role"] == "assistant"]
        if self.call_usage and len(self.call_usage) == len(replies):
            for index, usage in zip(replies, self.call_usage, strict=True):
                self.builder.place_usage(index, usage)
        else:
            self.builder.lose_usage("token_count not matched to a reply", len(self.call_usage))
        if self.stand_ins:
            self.meta["unrecorded_prompts"] = self.stand_ins
        if self.turn_usage:
            self.meta["turn_usage"] = self.turn_usage
        return self.meta


def _tool(item: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any] | None]:
    """The call and result of a 0.44-on tool item (no result while it is in progress)."""
    kind = item.get("type")
    call_id = str(item.get("id") or "")
    status = item.get("status")
    error = status in ("failed", "declined")
    if kind == "command_execution":
        use = {"name": "shell", "input": {"command": item.get("command")}}
        output = str(item.get("aggregated_output") or "")
        code = item.get("exit_code")
        error = error or (isinstance(code, int) and code != 0)
        text = output if output.strip() else f"(exit code {code}, no output)"
    elif kind == "file_change":
        use = {"name": "apply_patch", "input": {"changes": item.get("changes")}}
        text = f"patch {status}"
    elif kind == "mcp_tool_call":
        name = f"{item.get('server')}.{item.get('tool')}"
        use = {"name": name, "input": _arguments(item.get("arguments"))}
        failure = as_mapping(item.get("error")).get("message")
        result = as_mapping(item.get("result"))
        text = str(failure) if failure else _mcp_text(result.get("content"))
        error = error or bool(failure)
    else:  # collab_tool_call
        use = {"name": str(item.get("tool") or "collab"), "input": {"prompt": item.get("prompt")}}
        text = json.dumps(item.get("agents_states"), ensure_ascii=False)
    call = {"type": "tool_use", "id": call_id, **use}
    if status == "in_progress":
        return call, None
    return call, tool_result(call_id, text, is_error=error)


def _protocol_tool(
    begin: Mapping[str, Any], end: Mapping[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The call and result of an older stream's ``*_begin``/``*_end`` pair."""
    kind = str(end.get("type") or begin.get("type") or "")
    call_id = str(end.get("call_id") or begin.get("call_id") or "")
    if kind.startswith("exec_command"):
        command = begin.get("command", end.get("command"))
        use = {"name": "shell", "input": {"command": command}}
        text = str(end.get("aggregated_output") or end.get("stdout") or "") + str(
            end.get("stderr") or ""
        )
        code = end.get("exit_code")
        error = isinstance(code, int) and code != 0
    elif kind.startswith("patch_apply"):
        use = {"name": "apply_patch", "input": {"changes": begin.get("changes")}}
        text = str(end.get("stdout") or "") + str(end.get("stderr") or "")
        error = end.get("success") is False
    else:
        invocation = as_mapping(begin.get("invocation") or end.get("invocation"))
        name = f"{invocation.get('server')}.{invocation.get('tool')}"
        use = {"name": name, "input": _arguments(invocation.get("arguments"))}
        outcome = as_mapping(end.get("result"))
        error = "Err" in outcome
        text = (
            str(outcome["Err"])
            if error
            else _mcp_text(as_mapping(outcome.get("Ok")).get("content"))
        )
    call = {"type": "tool_use", "id": call_id, **use}
    return call, tool_result(call_id, text, is_error=error)


def _arguments(value: Any) -> dict[str, Any]:
    if isinstance(value, Mapping):
        return dict(value)
    return arguments_of(value) if isinstance(value, str) else {"arguments": value}


def _mcp_text(content: Any) -> str:
    parts = content if isinstance(content, list) else []
    texts = [str(p.get("text")) for p in parts if isinstance(p, Mapping) and "text" in p]
    return "\n".join(texts) if texts else json.dumps(content, ensure_ascii=False)


def _token_count(msg: Mapping[str, Any]) -> ProviderUsage | None:
    # Early streams put the counts on the event; later ones under info.last_token_usage.
    info = msg.get("info")
    usage = as_mapping(info).get("last_token_usage") if isinstance(info, Mapping) else msg
    if not isinstance(usage, Mapping) or "input_tokens" not in usage:
        return None
    # Cache writes (GPT-5.6 and later) are part of the input, as the cached tokens are.
    return ProviderUsage.with_cache_inside(
        usage.get("input_tokens"),
        usage.get("output_tokens"),
        usage.get("cached_input_tokens"),
        usage.get("cache_write_input_tokens"),
    )
