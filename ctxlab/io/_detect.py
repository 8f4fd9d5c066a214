"""Which format a session is: by its document, its first JSON Lines records, or a list of
messages — the most specific rule first, the chat formats (known by their role fields alone)
last; what no rule recognises is said with the formats considered."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from typing import Any, Literal, get_args

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._autogen import is_autogen_state
from ctxlab.io._chat import is_openai
from ctxlab.io._claude_code import is_claude_code_line
from ctxlab.io._cline import is_cline_history
from ctxlab.io._codex import is_codex_line
from ctxlab.io._codex_exec import is_codex_exec_line
from ctxlab.io._continue import is_continue_session
from ctxlab.io._copilot import is_copilot_line
from ctxlab.io._foreign import foreign_document
from ctxlab.io._frameworks import (
    is_langchain,
    is_pydantic_ai,
)
from ctxlab.io._gemini import (
    is_gemini_cli,
    is_gemini_contents,
)
from ctxlab.io._gemini_stream import (
    is_gemini_json_output,
    is_gemini_stream,
    is_gemini_stream_line,
)
from ctxlab.io._goose import is_goose_export, is_goose_line
from ctxlab.io._inspect import is_inspect_log
from ctxlab.io._letta import is_letta_agent_file
from ctxlab.io._mini_swe_agent import is_mini_swe_agent_list
from ctxlab.io._openai_responses import is_openai_responses
from ctxlab.io._opencode import is_opencode_export
from ctxlab.io._openhands import is_openhands_events
from ctxlab.io._openhands_logs import is_v0_log, is_v1_log
from ctxlab.io._openhands_v1 import is_v1_event
from ctxlab.io._otel import is_otel
from ctxlab.io._smolagents import is_smolagents_steps
from ctxlab.io._swe_agent import is_swe_agent

__all__ = ["FORMATS", "Format", "detect_format", "detect_lines"]

Format = Literal[
    "ctxlab",
    "claude_code",
    "anthropic",
    "openai",
    "openai_responses",
    "langchain",
    "pydantic_ai",
    "mini_swe_agent",
    "swe_agent",
    "openhands",
    "tau_bench",
    "otel",
    "gemini_cli",
    "gemini",
    "codex",
    "copilot",
    "aider",
    "inspect",
    "cline",
    "continue",
    "codex_exec",
    "gemini_stream",
    "letta",
    "autogen",
    "smolagents",
    "opencode",
    "goose",
    "specstory",
]
FORMATS: tuple[Format, ...] = get_args(Format)


_DOCUMENT_RULES: tuple[tuple[Callable[[Mapping[str, Any]], bool], Format], ...] = (
    (lambda v: v.get("type") == "meta", "ctxlab"),
    (is_claude_code_line, "claude_code"),
    (is_gemini_cli, "gemini_cli"),
    (is_gemini_stream_line, "gemini_stream"),
    (is_gemini_json_output, "gemini_stream"),  # refused by its reader, saying what to record
    (is_inspect_log, "inspect"),
    (is_codex_line, "codex"),
    (is_copilot_line, "copilot"),
    (is_continue_session, "continue"),
    (is_letta_agent_file, "letta"),
    (is_autogen_state, "autogen"),
    (is_opencode_export, "opencode"),
    (is_goose_export, "goose"),
    (is_goose_line, "goose"),
    (is_codex_exec_line, "codex_exec"),
    (lambda v: "trajectory_format" in v and "messages" in v, "mini_swe_agent"),
    (is_swe_agent, "swe_agent"),
    (
        lambda v: is_v0_log(v) or is_v1_log(v) or is_openhands_events(v) or is_v1_event(v),
        "openhands",
    ),
)
"""The formats a document (or a JSON Lines file's first record) is recognised by, most
specific first: the chat formats, known by their role fields alone, come after them all."""


def detect_format(value: Any) -> Format:
    """The format of a decoded document or of the first record of a JSON Lines file."""
    found = _format_of(value)
    if found is not None:
        return found
    foreign = foreign_document(value[0] if isinstance(value, list) and value else value)
    if foreign is not None:
        raise MessageFormatError(foreign)
    msg = (
        f"cannot tell the format of this session ({_shape(value)}): it reads as none of "
        f"{', '.join(FORMATS)}; if it is one of them, pass format= to read it as that"
    )
    raise MessageFormatError(msg)


def _format_of(value: Any) -> Format | None:
    if is_otel(value):
        return "otel"
    if isinstance(value, Mapping):
        found = next((kind for rule, kind in _DOCUMENT_RULES if rule(value)), None)
        if found is not None:
            return found
        if foreign_document(value) is not None:
            return None  # a format of its own, not the chat format its role fields suggest
        if "messages" in value and isinstance(value["messages"], list):
            return "openai" if is_openai(value["messages"]) else "anthropic"
        if "role" in value:
            return "openai" if is_openai([value]) else "anthropic"
    if isinstance(value, list) and value:
        if foreign_document(value[0]) is not None:
            return None
        return _list_format(value)
    return None


def _shape(value: Any) -> str:
    # What the data looked like, in a few words, for the error.
    if isinstance(value, Mapping):
        keys = ", ".join(repr(str(k)) for k in list(value)[:6])
        return f"an object with keys {keys}" if keys else "an empty object"
    if isinstance(value, list):
        first = value[0] if value else None
        inner = "an object" if isinstance(first, Mapping) else f"a JSON {type(first).__name__}"
        return f"a list of {len(value)}, the first {inner}" if value else "an empty list"
    return f"a JSON {type(value).__name__}"


_LINE_FORMATS = frozenset({"claude_code", "codex", "copilot", "gemini_cli", "goose"})
"""Formats whose every line says what it is: a file's lines outvote one foreign line (a Goose
file's line of tool schemas, say, that no rule knows)."""


def detect_lines(records: list[tuple[int, Any]]) -> Format:
    """The format of a JSON Lines file from its first records: the first's, unless the lines
    after it are of one line format (a file that opens with another tool's line)."""
    if is_gemini_stream([value for _, value in records[:20]]):
        return "gemini_stream"  # its init line or timestamps missing: read by its events
    guesses = [_format_of(value) for _, value in records[:20]]
    later = [g for g in guesses[1:] if g in _LINE_FORMATS]
    if later:
        common = Counter(later).most_common(1)[0][0]
        if guesses[0] != common:
            return common
    return guesses[0] or detect_format(records[0][1])


_LIST_RULES: tuple[tuple[Callable[[list[Any]], bool], Format], ...] = (
    (lambda v: all(isinstance(r, Mapping) and "traj" in r for r in v[:3]), "tau_bench"),
    (lambda v: is_codex_line(v[0]), "codex"),
    (lambda v: is_gemini_cli(v[0]), "gemini_cli"),
    (is_gemini_stream, "gemini_stream"),
    (is_cline_history, "cline"),
    (is_smolagents_steps, "smolagents"),
    (is_openhands_events, "openhands"),
    (is_pydantic_ai, "pydantic_ai"),
    (is_gemini_contents, "gemini"),
    (is_openai_responses, "openai_responses"),
    (is_langchain, "langchain"),
    (is_mini_swe_agent_list, "mini_swe_agent"),
)
"""The formats a list of records is recognised by, in order: the chat formats, known by their
role fields alone, after them all."""


def _list_format(value: list[Any]) -> Format | None:
    found = next((kind for rule, kind in _LIST_RULES if rule(value)), None)
    if found is not None:
        return found
    if all(isinstance(v, Mapping) and "role" in v for v in value[:50]):
        return "openai" if is_openai(value) else "anthropic"
    return None
