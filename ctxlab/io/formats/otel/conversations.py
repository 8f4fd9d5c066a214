"""How the model calls of a trace make conversations: grouped by conversation id, trace and
agent (two agents of one trace are two conversations), put in order (a call that holds another's
whole exchange comes after it, whatever the clocks say), and what each request adds to the
history before it. `ctxlab.io.formats.otel.parse` reads the spans into `Call`s."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ctxlab.io._build import ConversationBuilder
from ctxlab.io._clock import TimeUnit
from ctxlab.io.formats.otel.agents import AGENTS_KEY
from ctxlab.io.formats.otel.messages import Turn
from ctxlab.io.formats.otel.spans import Span
from ctxlab.messages import ProviderUsage
from ctxlab.messages._request import ToolSchema

__all__ = ["Call", "agents_of", "conversations", "history_of", "new_tail"]


@dataclass
class Call:
    """One LLM span, in ctxlab's terms."""

    start: int
    group: str
    system: str
    tools: tuple[ToolSchema, ...]
    inputs: list[Turn]
    outputs: list[Turn]
    usage: ProviderUsage | None
    agent: str = ""
    """The agent the call ran in (its span's or an ancestor's agent name), when a trace says."""
    span: str = ""
    records: int = 1
    """The records of the file the call was read from (a span; aider's request and reply)."""
    at: Any = None
    """When the call began, as the file writes it (a span's start: nanoseconds; aider's
    request header: ISO 8601), in ``at_unit``; None: no time. It dates the call's reply."""
    at_unit: TimeUnit = "ns"

    @property
    def keys(self) -> list[str]:
        return [_key(t) for t in self.inputs]

    @property
    def history(self) -> list[str]:
        """The conversation after this call: what it sent and what it got."""
        return [_key(t) for t in (*self.inputs, *self.outputs)]


def _key(turn: Turn) -> str:
    return json.dumps(turn, sort_keys=True, ensure_ascii=False)


def new_tail(history: list[str], inputs: list[Turn], keys: list[str]) -> tuple[list[Turn], bool]:
    """What a request adds to the history it was sent after, and whether it kept that history."""
    if keys[: len(history)] == history:
        return inputs[len(history) :], False
    # The history was rewritten: what follows the last turn both share is new.
    shared = set(history)
    last = max((i for i, k in enumerate(keys) if k in shared), default=-1)
    if last < 0:
        # Nothing kept verbatim (a summary replaced it all): the turns after the last reply are
        # new, the rest is the framework's rewrite of history the transcript already holds.
        replies = [i for i, (role, _) in enumerate(inputs) if role == "assistant"]
        last = replies[-1] if replies else len(inputs) - 2
    return inputs[last + 1 :], True


def history_of(
    builder: ConversationBuilder,
    calls: list[Call],
    kind: str = "model call span",
    twice: str = "span exported twice",
) -> tuple[list[int], tuple[ToolSchema, ...]]:
    """Build the durable history of one conversation's ``calls`` (each a census record of
    ``kind``, a repeat skipped as ``twice``): what each request adds to the history before it,
    and its reply with its usage. The requests that rewrote the history, and the tools offered."""
    history: list[str] = []
    seen: set[str] = set()
    rewritten: list[int] = []
    tools: dict[str, ToolSchema] = {}
    for number, call in enumerate(calls):
        builder.record(kind, call.records)
        keys = call.keys
        whole = json.dumps([keys, call.history, call.span, call.start])
        if whole in seen:
            builder.skip(twice)
            continue
        seen.add(whole)
        tail, was_rewritten = new_tail(history, call.inputs, keys)
        if was_rewritten:
            rewritten.append(number)
        for role, blocks in tail:
            builder.add(role, blocks)
        for index, (role, blocks) in enumerate(call.outputs):
            added = builder.add(role, blocks, call.usage if index == 0 else None)
            if added and index == 0 and role == "assistant":
                builder.reply_time(call.at, call.at_unit, replace=True)  # one call, one request
        if not call.outputs and call.usage is not None:
            builder.lose_usage("a call whose reply the span does not hold")
        builder.use()  # its request is the history the next call extends
        history = call.history
        tools.update({t.name: t for t in call.tools if t.name not in tools})
    return rewritten, tuple(tools.values())


_AGENT_KEYS = ("gen_ai.agent.name", "gen_ai.agent.id", "agent_name", "agent.name")
"""Attributes that name the agent a span runs in (GenAI conventions, pydantic-ai, others)."""


def agents_of(spans: list[Span]) -> dict[str, str]:
    """Each span's agent: its own agent attribute, else its nearest ancestor's."""
    own: dict[str, str] = {}
    parents: dict[str, str] = {}
    for span in spans:
        if not span.id:
            continue
        parents[span.id] = span.parent
        data = span.attributes.get(AGENTS_KEY)
        name = next((span.attributes[k] for k in _AGENT_KEYS if span.attributes.get(k)), None)
        if name is None and isinstance(data, Mapping) and data.get("type") == "agent":
            name = data.get("name")
        if name:
            own[span.id] = str(name)
    found: dict[str, str] = {}
    for span_id in parents:
        seen: set[str] = set()
        node = span_id
        while node and node not in own and node not in seen:
            seen.add(node)
            node = parents.get(node, "")
        if node in own:
            found[span_id] = own[node]
    return found


def _in_order(calls: list[Call]) -> list[Call]:
    """Calls by start time — except that a call whose input holds another's whole exchange
    comes after it, whatever the clocks said (a clock that steps back must not reorder a
    conversation)."""
    ordered = sorted(calls, key=lambda c: c.start)
    histories = [c.history for c in ordered]
    index = 0
    while index < len(ordered):
        keys = ordered[index].keys
        later = next(
            (
                j
                for j in range(index + 1, len(ordered))
                if histories[j]
                and len(keys) > len(histories[j])
                and keys[: len(histories[j])] == histories[j]
            ),
            None,
        )
        if later is None:
            index += 1
            continue
        ordered.insert(index, ordered.pop(later))
        histories.insert(index, histories.pop(later))
    return ordered


def conversations(calls: list[Call]) -> list[list[Call]]:
    """Calls grouped into conversations, in order of their first request.

    An explicit conversation id (``gen_ai.conversation.id``, OpenInference ``session.id``) groups
    its calls. Calls without one are grouped by trace and agent — two agents of one trace (a
    supervisor and its worker) are two conversations: by the agent their spans ran in, else by
    their System text when a call does not continue the other's history. A trace whose first
    request extends the history of an earlier conversation (separate invocations of one chat
    model, each its own trace) continues it. A request that extends several conversations' (an
    agent's that began with the same exchange, say) continues the one whose history it holds
    most of — the longest; of equal ones, its own trace's, else the latest begun.
    """
    groups: dict[str, list[Call]] = {}
    alias: dict[str, str] = {}
    for call in _in_order(calls):
        if not call.group.startswith("trace:"):
            groups.setdefault(call.group, []).append(call)
            continue
        keys = call.keys
        name = alias.get(call.group, call.group)
        extends = [
            g
            for g, earlier in groups.items()
            if earlier[-1].history and keys[: len(earlier[-1].history)] == earlier[-1].history
        ]
        same_trace = [g for g in groups if g == name or g.startswith(f"{name}|")]
        if call.agent:
            group = f"{name}|agent:{call.agent}"
        elif extends:
            # The longest history it extends: a request that holds a whole conversation
            # continues that one, not another that shares only its start.
            longest = max(len(groups[g][-1].history) for g in extends)
            best = [g for g in extends if len(groups[g][-1].history) == longest]
            group = next((g for g in reversed(best) if g in same_trace), best[-1])
            alias.setdefault(call.group, group)  # the rest of this trace continues it too
        else:
            group = next(
                (g for g in same_trace if groups[g][-1].system == call.system),
                f"{name}|{len(same_trace)}" if same_trace else name,
            )
        groups.setdefault(group, []).append(call)
    return list(groups.values())
