"""Salient artifacts of a stretch of conversation, and how many of them a request still holds.

What an agent needs to carry on after its history is compacted is not the prose but the
specifics it acted on. ctxlab calls these artifacts, by kind:

- ``paths``: file paths the task, the agent's text, its tool inputs or an error line name, and the
  first 20 distinct paths of each tool output (an output naming more is a listing: the command
  that produced it is the artifact, and it can be run again);
- ``commands``: the salient input of *every* tool call, whatever the tool is called — its
  ``command``/``cmd``/``code``/``query``/``pattern``/``path``-like argument, else its longest
  string argument — first line, whitespace collapsed, at most 160 characters;
- ``numbers``: versions, decimals and numbers of three or more digits (line numbers, ports, ids,
  counts) in the same places as paths (one- and two-digit numbers are everywhere, so not telling);
- ``identifiers``: code-like names (``snake_case``, ``CamelCase``, ``dotted.names``) in the
  agent's text and tool inputs;
- ``errors``: error lines of tool outputs (exceptions, ``FAILED``, ``error:``), first 160
  characters.

`artifacts_of` extracts them (cached per message by content hash: a replay under ten configs pays
once); `retention` says which share of a compacted span's artifacts is still reachable in the text
of the request that follows — summary, kept messages, offload pointers. The offline summarizer
writes the same artifacts, so what it keeps is what this measures.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ctxlab.messages import (
    AssistantMessage,
    HintBlock,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)

__all__ = [
    "ARTIFACT_KINDS",
    "Artifacts",
    "Retention",
    "artifacts_of",
    "reachable_text",
    "retention",
    "salient_input",
]

ARTIFACT_KINDS = ("paths", "commands", "numbers", "identifiers", "errors")
"""The kinds of artifacts, in the order they are reported."""

_PATH = re.compile(
    r"(?<![\w/.~-])(?:~|\.{1,2})?/?(?:[\w.-]+/)+[\w.-]*\w\.\w{1,8}\b"
    r"|(?<![\w/.-])[\w-]+\.(?:py|pyi|js|jsx|ts|tsx|md|rst|txt|json|toml|yaml|yml|cfg|ini|rs|go|"
    r"java|kt|c|h|cc|cpp|hpp|sh|sql|html|css|lock|xml|csv|ipynb)\b"
)
_NUMBER = re.compile(r"(?<![\w.])v?(?:\d+\.\d+(?:\.\d+)*|\d{3,})(?![\w.]*\w)")
_IDENTIFIER = re.compile(
    r"(?<![\w.])(?:[A-Za-z_]\w*\.)+[A-Za-z_]\w*|(?<![\w.])[a-z]+_[a-z0-9_]+\b"
    r"|(?<![\w.])[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]+)+\b"
)
_ERROR = re.compile(
    r"^.*(?:\w+(?:Error|Exception)\b|\bFAILED\b|\berror:|\bERROR\b|\bfatal:).*$", re.MULTILINE
)
_SALIENT_KEYS = (
    "command",
    "cmd",
    "commands",
    "code",
    "script",
    "query",
    "pattern",
    "regex",
    "url",
    "file_path",
    "path",
    "filename",
    "file",
)
_MAX_COMMAND = 160
_OUTPUT_SCAN = 50_000  # characters of a tool output searched for error lines and paths
_OUTPUT_PATHS = 20
_CACHE_LIMIT = 100_000
_cache: dict[str, Artifacts] = {}


@dataclass(frozen=True)
class Artifacts:
    """Artifacts by kind, each in order of first appearance."""

    paths: tuple[str, ...] = ()
    commands: tuple[str, ...] = ()
    numbers: tuple[str, ...] = ()
    identifiers: tuple[str, ...] = ()
    errors: tuple[str, ...] = ()

    def of(self, kind: str) -> tuple[str, ...]:
        """The artifacts of one kind (one of `ARTIFACT_KINDS`)."""
        value: tuple[str, ...] = getattr(self, kind)
        return value

    def merged(self, other: Artifacts) -> Artifacts:
        """Both, in order, without repeats."""
        return Artifacts(**{k: _unique((*self.of(k), *other.of(k))) for k in ARTIFACT_KINDS})

    @property
    def count(self) -> int:
        """How many artifacts in all."""
        return sum(len(self.of(k)) for k in ARTIFACT_KINDS)


@dataclass(frozen=True)
class Retention:
    """How much of a compacted span's artifacts the next request still holds."""

    kept: Mapping[str, int] = field(default_factory=dict)
    """Artifacts still reachable, by kind."""
    total: Mapping[str, int] = field(default_factory=dict)
    """Artifacts of the span, by kind."""
    lost: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    """The artifacts no longer reachable, by kind (to see *what* a config loses)."""

    def share(self, *kinds: str) -> float | None:
        """The share kept over ``kinds`` (all kinds when none given); None without artifacts."""
        chosen = kinds or ARTIFACT_KINDS
        total = sum(self.total.get(k, 0) for k in chosen)
        if total == 0:
            return None
        return sum(self.kept.get(k, 0) for k in chosen) / total

    @property
    def core(self) -> float | None:
        """The share of paths, commands and numbers kept (the figure compaction is tuned on)."""
        return self.share("paths", "commands", "numbers")


def _unique(items: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(i for i in items if i))


def _line(text: str, limit: int = _MAX_COMMAND) -> str:
    stripped = text.strip()
    first = stripped.splitlines()[0] if stripped else ""
    return " ".join(first.split())[:limit]


def salient_input(block: ToolUseBlock) -> str:
    """The one input of a tool call that says what it did (a shell command, a query, a path)."""
    values = block.input
    for key in _SALIENT_KEYS:
        value = values.get(key)
        if isinstance(value, str) and value.strip():
            return _line(value)
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return _line(" ".join(value))
    strings = [v for v in values.values() if isinstance(v, str) and v.strip()]
    if strings:
        return _line(max(strings, key=len))
    return _line(block.input_json) if values else block.name


def _scan_text(text: str, out: dict[str, list[str]], identifiers: bool) -> None:
    out["paths"].extend(_PATH.findall(text))
    out["numbers"].extend(_NUMBER.findall(text))
    if identifiers:
        out["identifiers"].extend(i for i in _IDENTIFIER.findall(text) if len(i) >= 4)


def _message_artifacts(message: UserMessage | AssistantMessage) -> Artifacts:
    out: dict[str, list[str]] = {k: [] for k in ARTIFACT_KINDS}
    agent = isinstance(message, AssistantMessage)
    for block in message.content:
        if isinstance(block, TextBlock | HintBlock):
            text = block.text if isinstance(block, TextBlock) else block.hint
            _scan_text(text, out, identifiers=agent)
        elif isinstance(block, ToolUseBlock):
            command = salient_input(block)
            out["commands"].append(command)
            for value in _strings(block.input):
                _scan_text(value, out, identifiers=True)
        elif isinstance(block, ToolResultBlock):
            listed = _unique(_PATH.findall(block.text[:_OUTPUT_SCAN]))
            out["paths"].extend(listed[:_OUTPUT_PATHS])
            for line in _ERROR.findall(block.text[:_OUTPUT_SCAN]):
                error = _line(line)
                out["errors"].append(error)
                _scan_text(error, out, identifiers=False)
    return Artifacts(**{k: _unique(v) for k, v in out.items()})


def _strings(value: Any) -> Iterable[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def artifacts_of(messages: Sequence[UserMessage | AssistantMessage]) -> Artifacts:
    """The salient artifacts of ``messages`` (see the module's documentation)."""
    merged = Artifacts()
    for message in messages:
        key = message.content_hash
        found = _cache.get(key)
        if found is None:
            if len(_cache) >= _CACHE_LIMIT:
                _cache.clear()
            found = _cache[key] = _message_artifacts(message)
        merged = merged.merged(found)
    return merged


def reachable_text(messages: Iterable[UserMessage | AssistantMessage], *extra: str) -> str:
    """Everything a request lets the model read: texts, tool inputs and outputs, and ``extra``
    (the summary, offload pointers); whitespace collapsed, as artifacts are."""
    parts: list[str] = list(extra)
    for message in messages:
        for block in message.content:
            if isinstance(block, TextBlock):
                parts.append(block.text)
            elif isinstance(block, HintBlock):
                parts.append(block.hint)
            elif isinstance(block, ToolUseBlock):
                parts.extend(_strings(block.input))
            elif isinstance(block, ToolResultBlock):
                parts.append(block.text)
    return " ".join(" ".join(p.split()) for p in parts)


def retention(span: Artifacts, text: str) -> Retention:
    """Which of ``span``'s artifacts appear in ``text`` (a request's `reachable_text`)."""
    kept: dict[str, int] = {}
    total: dict[str, int] = {}
    lost: dict[str, tuple[str, ...]] = {}
    for kind in ARTIFACT_KINDS:
        items = span.of(kind)
        missing = tuple(i for i in items if i not in text)
        total[kind] = len(items)
        kept[kind] = len(items) - len(missing)
        if missing:
            lost[kind] = missing
    return Retention(kept, total, lost)
