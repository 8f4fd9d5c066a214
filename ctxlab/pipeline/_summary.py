"""Summaries: the request handed to a summarizer, checking its answer, and rendering it.

A summarizer is any async callable taking a `SummaryRequest` and returning a mapping of the
schema's fields to text; the agent's model supplies one. `extractive_summarizer` is a
deterministic one that keeps paths, commands and errors verbatim (for tests, replays and the
offline demo model).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ctxlab._config import ContextConfig
from ctxlab._state import Summary
from ctxlab.messages import (
    AssistantMessage,
    HintBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

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


_PATH = re.compile(
    r"(?<![\w/])(?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]+\.\w{1,8}\b|\b[\w-]+\.(?:py|js|ts|md|txt|json|toml|yaml|yml|cfg|ini|rs|go|java|c|h|cpp|sh)\b"
)
_ERROR = re.compile(
    r"^.*(?:\w*(?:Error|Exception)\b|\bFAILED\b|\bTraceback\b|\berror:|\bfailed\b).*$", re.MULTILINE
)


_MAX_PRESERVED = 60


def _first_line(text: str, limit: int = 200) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _texts(message: UserMessage | AssistantMessage) -> list[str]:
    return [b.text for b in message.content if isinstance(b, TextBlock)] + [
        b.hint for b in message.content if isinstance(b, HintBlock)
    ]


def _unique(items: Sequence[str], limit: int) -> list[str]:
    seen: dict[str, None] = {}
    for item in items:
        seen.setdefault(item, None)
    return list(seen)[:limit]


async def extractive_summarizer(request: SummaryRequest) -> dict[str, str]:
    """A deterministic summary that quotes instead of paraphrasing.

    The task is the first user words; the state lists the last actions; discoveries are error
    lines; context to preserve lists file paths and commands verbatim.
    """
    user_texts = [t for m in request.messages if isinstance(m, UserMessage) for t in _texts(m)]
    actions: list[str] = []
    commands: list[str] = []
    paths: list[str] = []
    errors: list[str] = []
    for message in request.messages:
        for block in message.content:
            if isinstance(block, ToolUseBlock):
                actions.append(f"{block.name}({_first_line(block.input_json, 120)})")
                for value in block.input.values():
                    if isinstance(value, str):
                        paths.extend(_PATH.findall(value))
                        if block.name in ("bash", "Bash", "shell", "execute", "run"):
                            commands.append(_first_line(value, 160))
            elif isinstance(block, ToolResultBlock):
                errors.extend(_first_line(e, 160) for e in _ERROR.findall(block.text[:20_000]))
                paths.extend(_PATH.findall(block.text[:5_000]))
            elif isinstance(block, TextBlock):
                paths.extend(_PATH.findall(block.text[:5_000]))
    previous = request.previous_summary
    task = _first_line(user_texts[0], 400) if user_texts else "(no user request in this span)"
    if previous is not None and previous.fields.get("task_overview"):
        task = previous.fields["task_overview"]
    last_assistant = next(
        (
            _first_line(" ".join(_texts(m)), 300)
            for m in reversed(request.messages)
            if isinstance(m, AssistantMessage) and _texts(m)
        ),
        "",
    )
    state = f"{len(request.messages)} messages compacted; last actions: " + "; ".join(
        actions[-5:] or ["none"]
    )
    if last_assistant:
        state += f"\nLast assistant note: {last_assistant}"
    preserve = _unique(paths, 40) + [f"$ {c}" for c in _unique(commands, 20)]
    if previous is not None and previous.fields.get("context_to_preserve"):
        # Carry earlier artifacts forward, newest kept when the list is full, so that repeated
        # compactions do not grow the summary without bound.
        earlier = previous.fields["context_to_preserve"].splitlines()
        preserve = _unique([*earlier, *preserve], 10_000)[-_MAX_PRESERVED:]
    if request.instructions:
        state += f"\nCaller's instructions: {request.instructions}"
    return {
        "task_overview": task,
        "current_state": state,
        "important_discoveries": "\n".join(_unique(errors, 20)) or "none recorded",
        "next_steps": "Continue from the last action above; re-read files before editing them.",
        "context_to_preserve": "\n".join(preserve) or "none",
    }
