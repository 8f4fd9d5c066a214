"""A config's compaction on demand taken to the Anthropic SDK: ``config.export("anthropic_loop")``
is the Python source of an agent loop that asks the Messages API for the summary by the
config's `OnDemandCompaction` rules and sends the returned block in place of what it
summarizes. The request is the SDK's (anthropic 2.17.0, ``types/beta/message_create_params.py``,
``compaction``: "the request is a compaction request: the conversation in ``messages`` is
summarized and the response holds only the resulting ``compaction`` block, ``stop_reason``
``"compaction"``, which later requests send first in ``messages`` in place of the messages it
summarizes"; it "cannot be combined with ``context_management``"). The beta flag sent with it is
``compact-2026-09-04``: the SDK names it for this request in its own compaction loop
(``lib/tools/_beta_runner.py``, ``compact_before_next_turn``, which sends
``{"type": "summarize"}``: "Requires the `compact-2026-09-04` beta"), and lists it among its
betas (``types/anthropic_beta_param.py``). It is not the threshold compaction's flag:
``compact-2026-01-12`` goes with the ``compact_20260112`` edit of ``context_management``
(Anthropic's compaction page: "Include the beta header `compact-2026-01-12`"; ctxlab's model
sends it, `ctxlab.models._anthropic_edits.COMPACTION_BETA`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxlab.config._export import Exported
from ctxlab.exceptions import UsageError

if TYPE_CHECKING:
    from ctxlab.config._config import ContextConfig

__all__ = ["LOOP_BETA", "on_demand_loop"]

LOOP_BETA = "compact-2026-09-04"
"""The beta flag the exported loop sends: the one anthropic 2.17.0 names for a compaction
request (see the module's docstring)."""

_LOOP = '''"""Compaction on demand with the Anthropic SDK (exported by ctxlab from {source}).

run(client, model, prompts, execute=...) answers each prompt in turn, calling tools through
``execute(name, input) -> str``; before a request, when a rule below holds, it sends the
conversation so far as a compaction request and continues from the returned block.
"""

import time

RULES = {rules!r}
INSTRUCTIONS = {instructions!r}
BETAS = [{beta!r}]


def asks(new_task, since, last_input, pause, armed=True):
    """The rule that asks for a summary before the next request, or None."""
    if last_input is None or last_input < RULES["min_tokens"]:
        return None
    if RULES["at_task"] and new_task:
        return "task"
    if RULES["every_requests"] is not None and since >= RULES["every_requests"]:
        return "requests"
    # The mark asks again only once a request fell below it after a compaction.
    if RULES["at_tokens"] is not None and armed and last_input >= RULES["at_tokens"]:
        return "tokens"
    if RULES["idle_seconds"] is not None and pause is not None and pause > RULES["idle_seconds"]:
        return "idle"
    return None


def compact(client, model, messages, max_tokens):
    """Summarize everything before the latest turn; return the block and that turn."""
    # The latest turn is the new prompt, or the last tool call with its results: a result is
    # never sent without its call.
    keep = 1 if messages[-1]["role"] == "user" and _spoken(messages[-1]) else 2
    head, tail = messages[:-keep], messages[-keep:]
    if not head:
        return messages, None
    request = {{"type": "summarize"}}
    if INSTRUCTIONS:
        request["instructions"] = INSTRUCTIONS
    response = client.beta.messages.create(
        model=model, max_tokens=max_tokens, messages=head, compaction=request, betas=BETAS
    )
    block = next(b for b in response.content if b.type == "compaction")
    opening = {{"role": "user", "content": [block.model_dump(exclude_none=True)]}}
    if tail[0]["role"] == "user":
        # The block and the new prompt open the conversation in one user message.
        return [{{"role": "user", "content": opening["content"] + _blocks(tail[0])}}], response
    return [opening, *tail], response


def _spoken(message):
    return not any(isinstance(b, dict) and b.get("type") == "tool_result"
                   for b in _blocks(message))


def _blocks(message):
    content = message["content"]
    return [{{"type": "text", "text": content}}] if isinstance(content, str) else list(content)


def _billed(usage):
    return (usage.input_tokens + (usage.cache_read_input_tokens or 0)
            + (usage.cache_creation_input_tokens or 0))


def run(client, model, prompts, *, execute, system="", tools=(), max_tokens=4096,
        clock=time.monotonic):
    """Answer each prompt to its end, compacting on demand; return the messages and the
    compaction responses (one per summary asked)."""
    messages, compactions = [], []
    since, last_input, last_time, armed = 0, None, None, True
    for prompt in prompts:
        messages.append({{"role": "user", "content": prompt}})
        new_task = True
        while True:
            now = clock()
            pause = None if last_time is None else now - last_time
            compacted = False
            if asks(new_task, since, last_input, pause, armed) is not None:
                messages, response = compact(client, model, messages, max_tokens)
                if response is not None:
                    compactions.append(response)
                    compacted = True
            extra = {{"system": system}} if system else {{}}
            if tools:
                extra["tools"] = list(tools)
            response = client.beta.messages.create(
                model=model, max_tokens=max_tokens, messages=messages, betas=BETAS, **extra
            )
            since = 1 if compacted else since + 1
            last_input, last_time = _billed(response.usage), clock()
            if RULES["at_tokens"] is not None:
                armed = last_input < RULES["at_tokens"] or (armed and not compacted)
            content = [b.model_dump(exclude_none=True) for b in response.content]
            messages.append({{"role": "assistant", "content": content}})
            calls = [b for b in response.content if b.type == "tool_use"]
            if response.stop_reason != "tool_use" or not calls:
                break
            results = [
                {{"type": "tool_result", "tool_use_id": b.id, "content": execute(b.name, b.input)}}
                for b in calls
            ]
            messages.append({{"role": "user", "content": results}})
            new_task = False
    return messages, compactions
'''


def on_demand_loop(config: ContextConfig) -> Exported:
    """The source of an Anthropic SDK agent loop that compacts by ``config.on_demand``'s rules
    (`Exported.value`: a module's text; exec it, then call its ``run``), with what it cannot
    express in ``dropped``."""
    policy = config.on_demand
    if policy is None:
        msg = (
            "export('anthropic_loop') writes a compaction-on-demand loop: set on_demand, e.g. "
            "config.merge(on_demand={'at_task': True})"
        )
        raise UsageError(msg)
    rules = policy.model_dump(exclude={"instructions"})
    source = f"OnDemandCompaction({', '.join(f'{k}={v!r}' for k, v in rules.items())})"
    code = _LOOP.format(
        source=source, rules=rules, instructions=policy.instructions, beta=LOOP_BETA
    )
    dropped = [
        "summary_schema, summary_template, compression_prompt: the server summarizes in its own "
        "words (on_demand.instructions replaces its prompt)",
        "the kept tail: the loop keeps the latest turn only (the new prompt, or the last call "
        "with its results), whatever reserve_ratio or compaction.keep_messages say",
    ]
    if config.compaction.enabled:
        dropped.append(
            "the threshold compaction beside it (trigger_ratio): a compaction request cannot be "
            "combined with context_management; the loop compacts on demand only"
        )
    return Exported("anthropic_loop", code, tuple(dropped))
