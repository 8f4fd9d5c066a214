"""`load`: a session recorded by ctxlab or another tool, as a `Transcript` — the format detected
from the content (or forced with ``format=``)."""

from __future__ import annotations

import os
import zipfile
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, get_args

from ctxlab.exceptions import MessageFormatError, UsageError
from ctxlab.io._aider import from_aider, is_aider_history
from ctxlab.io._autogen import is_autogen_state
from ctxlab.io._chat import (
    is_openai,
    is_openai_responses,
)
from ctxlab.io._claude_code import is_claude_code_line
from ctxlab.io._cline import is_cline_history
from ctxlab.io._codex import is_codex_line
from ctxlab.io._codex_exec import is_codex_exec_line
from ctxlab.io._continue import is_continue_session
from ctxlab.io._copilot import is_copilot_line
from ctxlab.io._files import count_cut_line, inner_document, read_records
from ctxlab.io._files import head as first_bytes
from ctxlab.io._foreign import foreign_document, foreign_text
from ctxlab.io._frameworks import (
    as_plain_data,
    is_langchain,
    is_pydantic_ai,
)
from ctxlab.io._gemini import (
    is_gemini_cli,
    is_gemini_contents,
)
from ctxlab.io._gemini_stream import is_gemini_json_output, is_gemini_stream_line
from ctxlab.io._goose import is_goose_export, is_goose_line
from ctxlab.io._inspect import is_inspect_log, read_eval_zip
from ctxlab.io._letta import is_letta_agent_file
from ctxlab.io._mini_swe_agent import is_mini_swe_agent_list
from ctxlab.io._opencode import is_opencode_export
from ctxlab.io._openhands import is_openhands_events
from ctxlab.io._openhands_v1 import is_v1_event, is_v1_log, v1_folder_events
from ctxlab.io._otel import is_otel
from ctxlab.io._places import located
from ctxlab.io._readers import built_transcript, claude_code, from_data, v1_conversation
from ctxlab.io._smolagents import is_smolagents_steps
from ctxlab.io._specstory import from_specstory, is_specstory
from ctxlab.io._swe_agent import is_swe_agent
from ctxlab.io._transcript import Transcript, read_transcript
from ctxlab.tokens import preload
from ctxlab.util._jsonl import check_regular_file, read_text

__all__ = ["FORMATS", "Format", "detect_format", "detect_lines", "load", "read"]

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
        lambda v: (
            isinstance(v.get("fncall_messages"), list)
            or is_openhands_events(v)
            or is_v1_log(v)
            or is_v1_event(v)
        ),
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


_LINE_FORMATS = frozenset({"claude_code", "codex", "copilot", "gemini_cli"})
"""Formats whose every line says what it is: a file's lines outvote one foreign line."""


def detect_lines(records: list[tuple[int, Any]]) -> Format:
    """The format of a JSON Lines file from its first records: the first's, unless the lines
    after it are of one line format (a file that opens with another tool's line)."""
    guesses = [_format_of(value) for _, value in records[:20]]
    later = [g for g in guesses[1:] if g in _LINE_FORMATS]
    if later:
        common = Counter(later).most_common(1)[0][0]
        if guesses[0] != common:
            return common
    return guesses[0] or detect_format(records[0][1])


def _list_format(value: list[Any]) -> Format | None:
    if all(isinstance(v, Mapping) and "traj" in v for v in value[:3]):
        return "tau_bench"
    if is_codex_line(value[0]):
        return "codex"
    if is_cline_history(value):
        return "cline"
    if is_smolagents_steps(value):
        return "smolagents"
    if is_openhands_events(value):
        return "openhands"
    if is_pydantic_ai(value):
        return "pydantic_ai"
    if is_gemini_contents(value):
        return "gemini"
    if is_openai_responses(value):
        return "openai_responses"
    if is_langchain(value):
        return "langchain"
    if is_mini_swe_agent_list(value):
        return "mini_swe_agent"
    if all(isinstance(v, Mapping) and "role" in v for v in value[:50]):
        return "openai" if is_openai(value) else "anthropic"
    return None


def load(
    source: str | os.PathLike[str] | Sequence[Any] | Mapping[str, Any],
    *,
    format: Format | None = None,
    episode: int | None = None,
    sidechains: bool = False,
    name: str | None = None,
) -> Transcript:
    """A recorded session as a `Transcript`, from a file or from decoded data.

    Formats: ctxlab's JSONL, Claude Code session JSONL, Anthropic Messages (a list, a request
    dict with ``system``/``messages``/``tools``, or JSONL), OpenAI Chat Completions messages,
    mini-SWE-agent ``traj.json``, SWE-agent ``.traj`` (both history formats), OpenHands
    completion logs, tau-bench result files (``episode`` picks one), LangChain message dicts,
    pydantic-ai message JSON, OpenTelemetry trace exports (GenAI semantic conventions or
    OpenInference; ``episode`` picks a conversation), Gemini CLI sessions (``session-*.jsonl``
    or ``.json``), Gemini API contents, Codex CLI rollouts (``rollout-*.jsonl``), GitHub Copilot
    CLI sessions (``session-state/<id>/events.jsonl``) and aider's
    ``.aider.chat.history.md`` (``episode`` picks a run; by default the first that holds a
    message), Inspect AI logs (``.eval``, ``.json``; ``episode`` picks a sample), OpenHands V1
    conversation folders and completion logs, Cline / Roo Code / Kilo Code task folders (the
    folder or either of its files), Continue sessions, ``codex exec --json`` and Gemini CLI
    ``stream-json`` output, Letta agent files (``.af``; ``episode`` picks the agent), AutoGen
    AgentChat state (``episode`` picks the agent), smolagents memory steps, OpenCode sessions (an
    export, or a session file in OpenCode's storage), Goose sessions and SpecStory Markdown
    (Cursor chats) — each importer's module says which versions it reads and where it learned
    the format. ``episode`` left out is the first (an episode of a file that holds one
    conversation is an error). Every load takes a census of the file (``meta["census"]``,
    `Transcript.census`): the records read by kind, what was used, what was skipped and why,
    every usage placed or lost — it adds up. What a file holds that is not a message (a CLI's
    info lines, thought summaries) is counted in ``meta["skipped"]``. The
    conversation is repaired where it must be (every tool call answered, ids unique) and
    ``meta`` says what was inferred, dropped or repaired. Raises `MessageFormatError` naming the
    file, the line or message, and what is wrong. The default counter's vocabulary starts
    loading on a background thread meanwhile (`ctxlab.tokens.preload`), so that the first count
    of the session — a what-if, the Lab — need not wait for it.
    """
    preload()  # a session is loaded to be counted: the counter's vocabulary, meanwhile
    return read(source, format=format, episode=episode, sidechains=sidechains, name=name)


def read(
    source: str | os.PathLike[str] | Sequence[Any] | Mapping[str, Any],
    *,
    format: Format | None = None,
    episode: int | None = None,
    sidechains: bool = False,
    name: str | None = None,
) -> Transcript:
    """`load` without starting the counter's vocabulary (`sessions` reads files that it does
    not count exactly)."""
    if format is not None and format not in FORMATS:
        msg = f"format must be one of {', '.join(FORMATS)} (or None to detect it), got {format!r}"
        raise UsageError(msg)
    if episode is not None and (
        isinstance(episode, bool) or not isinstance(episode, int) or episode < 0
    ):
        msg = f"episode must be a whole number from 0 (0: the first), got {episode!r}"
        raise UsageError(msg)
    try:
        transcript = _load(source, format, episode, sidechains, name)
    except MessageFormatError as exc:
        guess = _guessed(exc, format)
        if guess is not None:
            msg = f"{exc} ({_GUESS_HINT.format(guess=guess)})"
            raise MessageFormatError(msg) from exc
        if isinstance(source, str | os.PathLike) and str(source) not in str(exc):
            # Every error of a file names it: a folder's listing must say which one.
            raise MessageFormatError(f"{source}: {exc}") from exc
        raise
    except (
        TypeError,
        AttributeError,
        KeyError,
        IndexError,
        ValueError,
        ArithmeticError,
        RecursionError,
    ) as exc:
        # A record of an unexpected shape deep inside: said as a format error, not a crash.
        where = str(source) if isinstance(source, str | os.PathLike) else "the data"
        reason = (
            "a value nested too deeply to read"
            if isinstance(exc, RecursionError)
            else f"{type(exc).__name__}: {exc}"
        )
        msg = f"{where} does not read as a {format or 'recognized'} session: {reason}"
        raise MessageFormatError(msg) from exc
    if format is None and transcript.meta.get("source") in _GUESSES and not _modelled(transcript):
        # Loaded, but nothing in it reads as the format it was taken for: a wrong guess.
        guess = transcript.meta["source"]
        msg = (
            f"{source if isinstance(source, str | os.PathLike) else 'the data'}: no block of it "
            f"reads as {guess} ({_GUESS_HINT.format(guess=guess)})"
        )
        raise MessageFormatError(msg)
    return transcript


_GUESSES = ("anthropic", "openai")
"""The formats taken from ``role`` fields alone, when nothing more specific matched."""
_GUESS_HINT = (
    "read as {guess}, guessed from its 'role' fields; if it is another format, pass format= one "
    "of anthropic, openai, openai_responses, langchain, pydantic_ai, gemini (or see "
    "ctxlab.FORMATS)"
)


def _guessed(exc: MessageFormatError, format: Format | None) -> str | None:
    # The guess that failed, when the format was taken from role fields alone.
    guess = exc.guessed_format
    return guess if format is None and guess in _GUESSES else None


def _modelled(transcript: Transcript) -> bool:
    """Whether any block of the transcript is one ctxlab models (not carried as provider data)."""
    return any(
        block.type != "provider" for message in transcript.messages for block in message.content
    )


def _load(
    source: str | os.PathLike[str] | Sequence[Any] | Mapping[str, Any],
    format: Format | None,
    episode: int | None,
    sidechains: bool,
    name: str | None,
) -> Transcript:
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        folder = _conversation_folder(path, format)
        if folder is not None:  # an OpenHands V1 conversation: a folder of event files
            events, state = folder
            return v1_conversation(events, state, str(path), name or path.resolve().name)
        found = located(path, format, name)  # a folder, or a file named for its part
        if found is not None:
            return found
        check_regular_file(path)  # before any open: a FIFO would block it
        head = first_bytes(path)
        if format is None and foreign_text(head) is not None:
            msg = f"{path}: {foreign_text(head)}"
            raise MessageFormatError(msg)
        if format == "specstory" or (format is None and is_specstory(head)):
            builder, notes = from_specstory(read_text(path), str(path))
            meta = {"source": "specstory", **notes}
            return built_transcript(name or path.stem, builder, meta, "", ())
        if format == "aider" or (format is None and is_aider_history(head)):
            builder, notes = from_aider(read_text(path), str(path), episode)
            meta = {"source": "aider", **notes}
            # Named for the folder it is in: aider keeps one history per repository.
            return built_transcript(
                name or path.resolve().parent.name or "aider",
                builder,
                meta,
                "",
                (),
            )
        if path.suffix == ".eval" and zipfile.is_zipfile(path):
            log = read_eval_zip(path, episode or 0)
            return from_data(log, format or "inspect", str(path), name or path.stem, episode or 0)
        read = read_records(path)
        records, document = read.records, read.document
        if records == [] and isinstance(document, str):
            # A document saved as a JSON string of itself (seen in Letta's published agent
            # files): read the JSON it holds.
            document = inner_document(path, document)
        label, stem = str(path), path.name.split(".")[0]
        kind = format or (detect_format(document) if records == [] else detect_lines(records))
        _one_conversation(kind, episode, label)
        if kind == "ctxlab":
            return read_transcript(path)
        if kind == "claude_code":
            transcript = claude_code(
                records or [(1, document)], label, name or stem, episode or 0, sidechains, path
            )
            return (
                transcript if read.cut_line is None else count_cut_line(transcript, read.cut_line)
            )
        data: Any = document if records == [] else [value for _, value in records]
        if read.cut_line is not None:
            transcript = from_data(data, kind, label, name or stem, episode or 0)
            return count_cut_line(transcript, read.cut_line)
    else:
        data = as_plain_data(source) if isinstance(source, list | tuple) else source
        label, stem = "<data>", "session"
        kind = format or detect_format(data)
        _one_conversation(kind, episode, label)
    try:
        return from_data(data, kind, label, name or stem, episode or 0)
    except MessageFormatError as exc:
        if format is None:
            exc.guessed_format = kind  # load's hint names the guess
        raise


def _conversation_folder(path: Path, format: Format | None) -> Any:
    # A V1 conversation is read from its folder, or from its base_state.json.
    if format not in (None, "openhands"):
        return None
    if path.name == "base_state.json":
        path = path.parent
    return v1_folder_events(path) if path.is_dir() else None


EPISODIC: frozenset[str] = frozenset(
    {"claude_code", "tau_bench", "otel", "openhands", "inspect", "aider", "letta", "autogen"}
)
"""The formats whose files may hold several conversations (``episode`` picks one)."""


def _one_conversation(kind: str, episode: int | None, where: str) -> None:
    # An episode asked of a file that holds one conversation: said, never ignored.
    if episode and kind not in EPISODIC:
        msg = (
            f"{where}: no episode {episode}: a {kind} file holds one conversation (episode=0); "
            "episodes are the subagents, runs, samples or conversations of "
            f"{', '.join(sorted(EPISODIC))} files"
        )
        raise MessageFormatError(msg)
