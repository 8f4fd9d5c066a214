"""Summaries: the request handed to a summarizer, checking its answer, and rendering it.

A summarizer is any async callable taking a `SummaryRequest` and returning a mapping of the
schema's fields to text; the agent's model supplies one. `extractive_summarizer`
(`ctxlab.pipeline._handover`) writes a handover without a model (for tests, replays and the
offline demo model).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ctxlab.config._config import ContextConfig
from ctxlab.messages import AssistantMessage, UserMessage
from ctxlab.messages._state import Summary

__all__ = [
    "Summarizer",
    "SummaryRequest",
    "instruction_tokens",
    "render_summary",
    "summary_instruction",
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
    pinned_task: str | None = None
    """The user's first message, which the pipeline keeps verbatim beside the summary (None
    when it does not: the summary must then state the task itself)."""
    input_limit: int | None = None
    """The most input tokens a request for this summary may take (the window less the
    summary's output reservation); a summarizer that sends a request must stay within it."""


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


def _paragraphs(summary: SummaryRequest) -> list[list[str]]:
    """The instruction's paragraphs, each a list of lines: the earlier summary is a line of its
    own, so that it is counted as the same text every request re-sends."""
    paragraphs = [[summary.prompt]]
    if summary.pinned_task is not None:
        paragraphs.append(
            [
                "The user's first message is kept verbatim beside your summary: do not repeat "
                "it; in task_overview, state the goal in one line and quote every later "
                "instruction of the user verbatim."
            ]
        )
    if summary.previous_summary is not None:
        paragraphs.append(
            [
                "An earlier summary stands for the history before these messages; carry its "
                "facts forward:",
                summary.previous_summary.text,
            ]
        )
    if summary.instructions:
        paragraphs.append([f"Instructions for this summary: {summary.instructions}"])
    paragraphs.append(
        [
            "Answer with one JSON object and nothing else, matching this JSON Schema:",
            json.dumps(summary.schema, ensure_ascii=False),
        ]
    )
    return paragraphs


def summary_instruction(summary: SummaryRequest) -> str:
    """The user text that asks a model for ``summary``: the prompt, the pinned task's note, the
    earlier summary, the caller's hint and the schema."""
    return "\n\n".join("\n".join(lines) for lines in _paragraphs(summary))


def instruction_tokens(summary: SummaryRequest, count: Callable[[str], int]) -> int:
    """The tokens of `summary_instruction`, counted line by line (each line is counted once
    and looked up after: the earlier summary is the same text every request re-sends)."""
    lines = [line for paragraph in _paragraphs(summary) for line in paragraph]
    return sum(count(line) for line in lines) + len(lines)
