"""OpenHands completion logs: one LLM call a file — the messages it sent, the reply it got and
that reply's usage. A run writes one file per call (an evaluation keeps them under
``llm_completions/<instance>/``); the last holds the whole conversation.

Read from OpenHands' own code, the specification of both versions:

- **V0** (All-Hands-AI/OpenHands, now OpenHands/OpenHands, ``openhands/llm/llm.py``, the
  ``log_completions`` branch of ``LLM.__init__``'s wrapper, 2024–2026): ``messages``,
  ``response``, ``args``, ``kwargs``, ``timestamp``, ``cost`` (and ``critic_results`` in some
  versions). When the model's function calling is prompted rather than native,
  ``messages``/``response`` are the text the model read and wrote (``fn_call_converter.py``
  turned the calls into ``<function=...>`` text and back) and ``fncall_messages``/
  ``fncall_response`` the same conversation with its tool calls — what the agent sent and
  parsed; the tool schemas were taken out of ``kwargs`` (they are in the System text).
- **V1** (OpenHands/software-agent-sdk, ``openhands/sdk/llm/llm.py``
  ``_finalize_completion_params`` / ``_finalize_responses_params`` and
  ``llm/utils/telemetry.py`` ``log_llm_call``): the request's context — ``context_window``,
  ``messages``, ``tools``, ``kwargs``, or on the Responses path ``llm_path``,
  ``instructions``, ``input`` — then ``response``, ``cost``, ``timestamp``, ``latency_sec``
  and ``usage_summary``. With prompted function calling ``messages`` is the text and
  ``raw_messages`` the messages with their tool calls; ``response`` is the reply with its calls
  parsed and ``raw_response`` the text the model wrote.

The versions never write each other's keys — V0 always ``args`` and never ``latency_sec`` or
``context_window``; V1 always ``context_window`` and ``latency_sec`` and never ``args`` or
``fncall_*`` — so `is_v0_log` and `is_v1_log` never both hold. Either way the conversation is
read from the messages with their tool calls; the text rendering of the same turns is counted
in the census, skipped as what it is.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ctxlab.io._build import ConversationBuilder, as_mapping, text_parts
from ctxlab.io.formats._chat import from_openai
from ctxlab.io.formats._openai_responses import from_openai_responses
from ctxlab.messages import ProviderUsage

__all__ = ["from_completion_log", "is_v0_log", "is_v1_log"]

V0_KEYS = ("fncall_messages", "fncall_response", "args")
"""Keys only a V0 completion log has."""
V1_KEYS = ("latency_sec", "context_window", "raw_messages", "raw_response", "usage_summary")
"""Keys only a V1 completion log has (``llm_path`` too, with ``input``)."""


def is_v0_log(value: Any) -> bool:
    """A V0 completion log: ``fncall_messages``, or the messages, the response and the call's
    positional ``args`` (which V1 never writes)."""
    if not isinstance(value, Mapping):
        return False
    if isinstance(value.get("fncall_messages"), list):
        return True
    return (
        "args" in value
        and isinstance(value.get("messages"), list)
        and isinstance(value.get("response"), Mapping)
    )


def is_v1_log(value: Any) -> bool:
    """A V1 completion log: the request (``messages`` or ``input``) beside its ``response`` and
    what the call took (``latency_sec``, ``context_window``, ``cost``) — and no key of V0's."""
    return (
        isinstance(value, Mapping)
        and not any(k in value for k in V0_KEYS)
        and isinstance(value.get("response"), Mapping)
        and (isinstance(value.get("messages"), list) or isinstance(value.get("input"), list))
        and (any(k in value for k in V1_KEYS) or "cost" in value)
    )


def from_completion_log(
    log: Mapping[str, Any], where: str
) -> tuple[ConversationBuilder, str, list[Any], dict[str, Any]]:
    """The conversation (the messages sent, then the reply with its usage), System text, tool
    definitions and notes of one completion log of either version."""
    version = 1 if is_v1_log(log) else 0
    if version == 1 and not isinstance(log.get("messages"), list):
        read = _responses_log(log, where)
        _date(read[0], log, as_mapping(log.get("response")).get("output"))
        return read
    # The messages with their tool calls and the reply with its calls parsed; with prompted
    # calling, the log's other pair is the same turns as text.
    text: tuple[str, str] | None = None
    sent, response = log.get("messages"), log.get("response")
    if version == 0 and isinstance(log.get("fncall_messages"), list):
        sent, text = log["fncall_messages"], ("messages", "response")
        if isinstance(log.get("fncall_response"), Mapping):
            response = log["fncall_response"]
        else:  # (the text reply is then the one read: not counted again)
            text = ("messages", "")
    elif version == 1 and isinstance(log.get("raw_messages"), list):
        sent, text = log["raw_messages"], ("messages", "raw_response")
    # (a list: either check holds only where the messages it reads are one)
    sent = list(sent) if isinstance(sent, list) else []
    notes = _notes(log, as_mapping(response), version)
    replied = as_mapping(response).get("choices")
    if text is None:
        builder, system = _chat_call(sent, as_mapping(response), where)
        _date(builder, log, replied)
        return builder, system, _tools(log), {**notes, "function_calling": "native"}
    builder, system, described = _prompted_call(log, sent, as_mapping(response), text, where)
    _date(builder, log, replied)
    # The tools were described to the model in the System text it read, not sent as schemas:
    # their schemas are the transcript's only when that text is not in the log.
    tools = [] if described else _tools(log)
    return builder, system, tools, {**notes, "function_calling": "prompted"}


def _date(builder: ConversationBuilder, log: Mapping[str, Any], replied: Any) -> None:
    # The log's ``timestamp`` (``time.time()`` once the call returned: epoch seconds) dates
    # the call's own reply, the last; the replies of the history it sent have no time here.
    if replied and builder.turns and builder.turns[-1]["role"] == "assistant":
        builder.reply_time(log.get("timestamp"), "s")


def _chat_call(
    messages: Sequence[Any], response: Mapping[str, Any], where: str
) -> tuple[ConversationBuilder, str]:
    # The messages sent, then the reply (the first choice) carrying the response's usage.
    messages = list(messages)
    choices = response.get("choices")
    first = choices[0] if isinstance(choices, list) and choices else {}
    reply = as_mapping(as_mapping(first).get("message"))
    if reply:
        messages.append({**reply, "role": "assistant", "usage": response.get("usage")})
    return from_openai(messages, where)


def _prompted_call(
    log: Mapping[str, Any],
    sent: list[Any],
    response: Mapping[str, Any],
    text: tuple[str, str],
    where: str,
) -> tuple[ConversationBuilder, str, bool]:
    """Prompted function calling: the turns are the messages with their tool calls, the System
    text the one the model read (with the tools' descriptions the converter added); the rest of
    the text rendering is the same turns again — read, counted, not kept twice. Also whether
    the System text is the one the model read."""
    calls_system = [m for m in sent if _is_system(m)]
    builder, _ = _chat_call([m for m in sent if not _is_system(m)], response, where)
    rendered = log.get(text[0])
    rendered = rendered if isinstance(rendered, list) else []
    read_system = [m for m in rendered if _is_system(m)]
    shown = read_system or calls_system
    system = "\n\n".join(t for m in shown if (t := text_parts(m.get("content"))))
    builder.record("system message without the tools' descriptions", len(calls_system))
    if read_system:
        builder.skip("the System text the model read is the text rendering's")
    builder.use()
    builder.record("system message as the model read it", len(read_system))
    builder.use()
    builder.record(
        "message as the model read it",
        len(rendered) - len(read_system),
        raw=[m for m in rendered if not _is_system(m)],
    )
    builder.skip("the same turn as the model read it (prompted function calling)")
    if isinstance(log.get(text[1]), Mapping):
        builder.record("response as the model wrote it", raw=log.get(text[1]))
        builder.skip("the same reply as the model wrote it (prompted function calling)")
    return builder, system, bool(read_system)


def _is_system(message: Any) -> bool:
    return isinstance(message, Mapping) and message.get("role") in ("system", "developer")


def _notes(log: Mapping[str, Any], response: Mapping[str, Any], version: int) -> dict[str, Any]:
    notes: dict[str, Any] = {"version": version, "cost": log.get("cost")}
    if "latency_sec" in log:
        notes["latency_sec"] = log["latency_sec"]
    if isinstance(response.get("model"), str):
        notes["models"] = [response["model"]]
    return notes


def _tools(log: Mapping[str, Any]) -> list[Any]:
    tools = log.get("tools") or as_mapping(log.get("kwargs")).get("tools") or []
    return tools if isinstance(tools, list) else []


def _responses_log(
    log: Mapping[str, Any], where: str
) -> tuple[ConversationBuilder, str, list[Any], dict[str, Any]]:
    # V1's Responses path: instructions, input items, and the response's output items.
    response = as_mapping(log.get("response"))
    output = response.get("output")
    items = [*log["input"], *(output if isinstance(output, list) else ())]
    builder, system = from_openai_responses(items, where)
    usage = as_mapping(response.get("usage"))
    if usage:
        details = as_mapping(usage.get("input_tokens_details"))
        builder.usage_of_last_reply(
            ProviderUsage.with_cache_inside(
                usage.get("input_tokens"), usage.get("output_tokens"), details.get("cached_tokens")
            )
        )
    instructions = log.get("instructions")
    system = "\n\n".join(s for s in (instructions, system) if isinstance(s, str) and s)
    return builder, system, _tools(log), _notes(log, response, 1)
