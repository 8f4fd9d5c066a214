"""Summaries: the request handed to a summarizer, checking its answer, and rendering it.

A summarizer is any async callable taking a `SummaryRequest` and returning a mapping of the
schema's fields to text; the agent's model supplies one. `extractive_summarizer` is a
deterministic one that keeps the task statement and the span's salient artifacts (paths, every
tool call's salient input, numbers, errors) verbatim within its budget (for tests, replays and
the offline demo model).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxlab._config import ContextConfig
from ctxlab._state import Summary
from ctxlab.messages import (
    AssistantMessage,
    HintBlock,
    TextBlock,
    ToolUseBlock,
    UserMessage,
)
from ctxlab.pipeline._artifacts import Artifacts, artifacts_of, salient_input
from ctxlab.tokens import head_within

__all__ = [
    "Summarizer",
    "SummaryRequest",
    "extractive_summarizer",
    "render_summary",
    "validate_summary",
]


@dataclass(frozen=True)
class SummaryRequest:
    """What a summarizer is asked to condense."""

    messages: tuple[UserMessage | AssistantMessage, ...]
    """The prefix being compacted, in order."""
    previous_summary: Summary | None
    """The summary already standing for earlier history, to carry forward."""
    schema: Mapping[str, Any]
    """JSON Schema the answer must satisfy (``summary_schema``)."""
    prompt: str
    """The instruction (``compression_prompt``)."""
    instructions: str | None = None
    """Extra guidance from the caller (the hint of a manual compression)."""
    attempt: int = 1
    """1 for the first try, then 2, 3, ... on retries."""
    template: str | None = None
    """000's summary prompt: when set, the request is this text alone with ``{messages}``
    replaced by the prefix as a transcript (instead of the prefix plus ``prompt``)."""
    budget_tokens: int | None = None
    """Tokens the rendered summary may take (the pipeline sets it from the reserve)."""
    count: Callable[[str], int] | None = field(default=None, compare=False, repr=False)
    """The pipeline's token counter, for summarizers that fit themselves to the budget."""
    kept: tuple[UserMessage | AssistantMessage, ...] = ()
    """The tail that stays in context after the summary (a model summarizer may be shown it,
    so that its request starts with what the provider already cached)."""


Summarizer = Callable[[SummaryRequest], Awaitable[Mapping[str, Any]]]
"""An async callable producing a structured summary."""


def validate_summary(answer: Any, config: ContextConfig) -> dict[str, str]:
    """The answer as field → text, or `ValueError` naming the missing or mistyped fields."""
    if not isinstance(answer, Mapping):
        msg = f"a summary must be a mapping of {list(config.summary_fields)}, got {type(answer)}"
        raise ValueError(msg)
    fields: dict[str, str] = {}
    problems: list[str] = []
    for name in config.summary_schema["properties"]:
        value = answer.get(name)
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            value = "\n".join(f"- {v}" for v in value)
        if value is None and name not in config.summary_fields:
            value = ""
        if not isinstance(value, str):
            problems.append(f"{name} ({'missing' if value is None else type(value).__name__})")
            continue
        fields[name] = value
    if problems:
        msg = f"the summary lacks string fields: {', '.join(problems)}"
        raise ValueError(msg)
    return fields


def render_summary(fields: Mapping[str, str], config: ContextConfig) -> str:
    """The summary text the model sees: ``summary_template`` filled with the fields.

    A field the template names but ``fields`` lacks (an earlier summary made under another
    schema, a log from an older ctxlab) renders as "(not recorded)" rather than failing.
    """
    return config.summary_template.format_map(_Fields(fields))


class _Fields(dict[str, str]):
    def __missing__(self, key: str) -> str:
        return "(not recorded)"


TASK_SHARE = 0.4
"""The share of a summary's budget the offline summarizer gives the task statement."""

EXTRA_SHARE = 0.15
"""The share of a summary's budget the offline summarizer gives what is not the task or the
span's core artifacts: error lines, names, what earlier summaries preserved."""


def _tokens(lines: Sequence[str], count: Callable[[str], int]) -> int:
    return sum(count(line) + 1 for line in lines)


_DEFAULT_BUDGET = 2_000


def _approximate(text: str) -> int:
    return len(text) // 4 + 1


def _texts(message: UserMessage | AssistantMessage) -> list[str]:
    return [b.text for b in message.content if isinstance(b, TextBlock)] + [
        b.hint for b in message.content if isinstance(b, HintBlock)
    ]


def _task(request: SummaryRequest, count: Callable[[str], int], budget: int) -> str:
    previous = request.previous_summary
    if previous is not None and previous.fields.get("task_overview"):
        return previous.fields["task_overview"]  # already cut to its budget when first written
    first = next((m for m in request.messages if isinstance(m, UserMessage) and _texts(m)), None)
    if first is None:
        return "(no user request in this span)"
    task = "\n".join(_texts(first)).strip()
    if count(task) <= budget:
        return task
    head = head_within(task, budget, count)
    return f"{head}\n[... the task statement continues; cut at {budget} tokens]"


def _state(request: SummaryRequest) -> str:
    actions = [
        f"{b.name}: {salient_input(b)}"
        for m in request.messages
        if isinstance(m, AssistantMessage)
        for b in m.content
        if isinstance(b, ToolUseBlock)
    ]
    state = f"{len(request.messages)} messages compacted; last actions: " + "; ".join(
        actions[-3:] or ["none"]
    )
    last = next(
        (
            " ".join(_texts(m))
            for m in reversed(request.messages)
            if isinstance(m, AssistantMessage) and _texts(m)
        ),
        "",
    )
    if last:
        state += f"\nLast assistant note: {' '.join(last.split())[:300]}"
    if request.instructions:
        state += f"\nCaller's instructions: {request.instructions}"
    return state


def _core(span: Artifacts, task: str) -> list[str]:
    """This span's commands, paths and numbers: what compaction is tuned to keep. A path or
    number the commands or the task already spell out is not listed twice."""
    lines = [f"$ {c}" for c in span.commands]
    said = " ".join([task, *lines])
    lines.extend(p for p in span.paths if p not in said)  # one a line: a fact each
    numbers = [n for n in span.numbers if n not in said]
    if numbers:
        lines.append("Numbers: " + ", ".join(numbers))
    return lines


def _fit(lines: list[str], budget: int, count: Callable[[str], int]) -> list[str]:
    """The first lines that fit ``budget`` tokens (a long last line is cut at a comma)."""
    kept: list[str] = []
    used = 0
    for line in lines:
        tokens = count(line) + 1
        if used + tokens <= budget:
            kept.append(line)
            used += tokens
            continue
        room = budget - used
        if room > 16 and ", " in line:
            head = head_within(line.replace(", ", ",\n"), room, count).replace(",\n", ", ")
            kept.append(head.rstrip(", "))
            break
        # A line too long for what is left is skipped: shorter ones after it may still fit.
    return kept


async def extractive_summarizer(request: SummaryRequest) -> dict[str, str]:
    """A deterministic summary that quotes instead of paraphrasing, within the request's budget.

    The task is the first user message, whole up to `TASK_SHARE` of the budget (an earlier
    summary's task carried forward); the state names the last actions; discoveries are the
    span's error lines; context to preserve lists every tool call's salient input (whatever the
    tool), the paths and numbers of the span (see `ctxlab.pipeline._artifacts`) within the
    budget, then names and what earlier summaries preserved within `EXTRA_SHARE` of it (error
    lines share that part): a summary is as long as its content, never padded to the budget.
    """
    count = request.count or _approximate
    budget = request.budget_tokens or _DEFAULT_BUDGET
    span = artifacts_of(request.messages)
    task = _task(request, count, int(budget * TASK_SHARE))
    state = _state(request)
    next_steps = "Continue from the last action above; re-read files before editing them."
    # What is left after the fixed fields (and the template's headings, ~60 tokens).
    left = budget - count(task) - count(state) - count(next_steps) - 60
    earlier: list[str] = []
    previous = request.previous_summary
    if previous is not None and previous.fields.get("context_to_preserve"):
        earlier = previous.fields["context_to_preserve"].splitlines()
    core = _fit(_core(span, " ".join(task.split())), max(left, 0), count)
    # The rest is worth keeping but is not what the next steps stand on: it gets at most
    # `EXTRA_SHARE` of the budget, so that a summary is no larger than it needs to be (every
    # token of it is written again after each compaction).
    extra = min(max(left - _tokens(core, count), 0), int(budget * EXTRA_SHARE))
    discoveries = _fit(list(span.errors), extra // 2, count)
    names = [f"Names: {', '.join(span.identifiers)}"] if span.identifiers else []
    carried = [e for e in earlier if e not in core]
    more = _fit([*carried, *names], extra - _tokens(discoveries, count), count)
    preserve = [*core, *more]
    return {
        "task_overview": task,
        "current_state": state,
        "important_discoveries": "\n".join(discoveries) or "none recorded",
        "next_steps": next_steps,
        "context_to_preserve": "\n".join(preserve) or "none",
    }
