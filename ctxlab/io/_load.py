"""`load`: a session recorded by ctxlab or another tool, as a `Transcript` — the format detected
from the content (or forced with ``format=``)."""

from __future__ import annotations

import os
import zipfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ctxlab.exceptions import MessageFormatError, UsageError
from ctxlab.io._accounting import account_for
from ctxlab.io._aider import from_aider, is_aider_history
from ctxlab.io._aider_llm import from_aider_llm, is_aider_llm_history
from ctxlab.io._claude_code_reader import claude_code
from ctxlab.io._detect import FORMATS, Format, detect_format, detect_lines
from ctxlab.io._episodes import one_conversation
from ctxlab.io._files import (
    count_skipped_lines,
    inner_document,
    path_problem,
    read_records,
    shown_path,
)
from ctxlab.io._files import head as first_bytes
from ctxlab.io._foreign import foreign_text
from ctxlab.io._frameworks import (
    as_plain_data,
)
from ctxlab.io._inspect import read_eval_zip
from ctxlab.io._inventory import remembered
from ctxlab.io._openhands_v1 import v1_folder_events
from ctxlab.io._places import located
from ctxlab.io._readers import built_transcript, from_data, v1_conversation
from ctxlab.io._specstory import from_specstory, is_specstory
from ctxlab.io._transcript import Transcript, read_transcript
from ctxlab.tokens import preload
from ctxlab.util._jsonl import check_regular_file, read_text

__all__ = ["FORMATS", "Format", "detect_format", "detect_lines", "load", "read"]


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
        with remembered():  # a record skipped and set aside is walked once, not twice
            transcript, values = _load(source, format, episode, sidechains, name)
            transcript = account_for(transcript, values)
    except MessageFormatError as exc:
        guess = _guessed(exc, format)
        if guess is not None:
            msg = f"{exc} ({_GUESS_HINT.format(guess=guess)})"
            raise MessageFormatError(msg) from exc
        if (
            isinstance(source, str | os.PathLike)
            and str(source) not in str(exc)
            and shown_path(source) not in str(exc)
        ):
            # Every error of a file names it: a folder's listing must say which one.
            raise MessageFormatError(f"{shown_path(source)}: {exc}") from exc
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
        where = shown_path(source) if isinstance(source, str | os.PathLike) else "the data"
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
            f"{shown_path(source) if isinstance(source, str | os.PathLike) else 'the data'}: "
            f"no block of it reads as {guess} ({_GUESS_HINT.format(guess=guess)})"
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
) -> tuple[Transcript, list[Any] | None]:
    # The transcript, and the decoded values it was read from (for the file's inventory; None
    # when it is not JSON).
    if isinstance(source, str | os.PathLike):
        path = Path(source)
        problem = path_problem(path)
        if problem is not None:
            msg = f"cannot read {shown_path(path)}: {problem}"
            raise MessageFormatError(msg)
        folder = _conversation_folder(path, format)
        if folder is not None:  # an OpenHands V1 conversation: a folder of event files
            where, (events, state) = folder
            transcript = v1_conversation(events, state, str(path), name or where.resolve().name)
            return transcript, [*events, *([state] if state is not None else [])]
        found = located(path, format, name)  # a folder, or a file named for its part
        if found is not None:
            return found, None
        check_regular_file(path)  # before any open: a FIFO would block it
        head = first_bytes(path)
        if format is None and foreign_text(head) is not None:
            msg = f"{path}: {foreign_text(head)}"
            raise MessageFormatError(msg)
        text_session = _text_session(path, head, format, episode, name)
        if text_session is not None:
            return text_session, None
        if path.suffix == ".eval" and zipfile.is_zipfile(path):
            log = read_eval_zip(path, episode or 0)
            read_as = format or "inspect"
            return from_data(log, read_as, str(path), name or path.stem, episode or 0), [log]
        read = read_records(path)
        records, document = read.records, read.document
        if records == [] and isinstance(document, str):
            # A document saved as a JSON string of itself (seen in Letta's published agent
            # files): read the JSON it holds.
            document = inner_document(path, document)
        values = [value for _, value in records] if records else [document]
        label, stem = str(path), path.name.split(".")[0]
        kind = format or (detect_format(document) if records == [] else detect_lines(records))
        one_conversation(kind, episode, label)
        if kind == "ctxlab":
            # Its meta line carries the notes of the load it was saved from (totals among
            # them): what it holds of its own is its messages and their usage.
            return read_transcript(path), values[1:]
        if kind == "claude_code":
            transcript, own = claude_code(
                records or [(1, document)],
                label,
                name or stem,
                episode or 0,
                sidechains,
                path,
                read,
            )
            return transcript, values if own is None else own
        data: Any = document if records == [] else [value for _, value in records]
        if read.lines is not None and read.lines.left_out:
            transcript = from_data(data, kind, label, name or stem, episode or 0)
            return count_skipped_lines(transcript, read), values
    else:
        data = as_plain_data(source) if isinstance(source, list | tuple) else source
        label, stem = "<data>", "session"
        kind = format or detect_format(data)
        one_conversation(kind, episode, label)
        values = [data]
    try:
        return from_data(data, kind, label, name or stem, episode or 0), values
    except MessageFormatError as exc:
        if format is None:
            exc.guessed_format = kind  # load's hint names the guess
        raise


def _text_session(
    path: Path, head: str, format: Format | None, episode: int | None, name: str | None
) -> Transcript | None:
    """A session kept as text, not JSON — SpecStory's Markdown, aider's chat history or its LLM
    log — known by its first bytes (or ``format``); None for any other file."""
    if format == "specstory" or (format is None and is_specstory(head)):
        builder, notes = from_specstory(read_text(path), str(path))
        meta = {"source": "specstory", **notes}
        return built_transcript(name or path.stem, builder, meta, "", ())
    # Named for the folder it is in: aider keeps one history (and log) per repository.
    folder = name or path.resolve().parent.name or "aider"
    if format in (None, "aider") and is_aider_llm_history(head):
        builder, system, notes = from_aider_llm(read_text(path), str(path), episode)
        return built_transcript(folder, builder, {"source": "aider", **notes}, system, ())
    if format == "aider" or (format is None and is_aider_history(head)):
        builder, notes = from_aider(read_text(path), str(path), episode)
        return built_transcript(folder, builder, {"source": "aider", **notes}, "", ())
    return None


def _conversation_folder(
    path: Path, format: Format | None
) -> tuple[Path, tuple[list[Any], Mapping[str, Any] | None]] | None:
    # A V1 conversation is read from its folder, its base_state.json or its events folder.
    if format not in (None, "openhands"):
        return None
    if path.name == "base_state.json" or (path.name == "events" and path.is_dir()):
        path = path.parent
    found = v1_folder_events(path) if path.is_dir() else None
    if found is None and (path / "base_state.json").is_file() and path.is_dir():
        msg = (
            f"{path}: an OpenHands V1 conversation with no event yet (its base_state.json "
            "alone, no events/ folder or an empty one): nothing was said in it to load"
        )
        raise MessageFormatError(msg)
    return (path, found) if found is not None else None
