"""`load`: a session recorded by ctxlab or another tool, as a `Transcript` — the format detected
from the content (or forced with ``format=``)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from ctxlab.exceptions import MessageFormatError, UsageError
from ctxlab.io._accounting import account_for
from ctxlab.io._detect import Format, detect_format, detect_lines
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
from ctxlab.io._format import FileSource, SessionFormat
from ctxlab.io._inventory import remembered
from ctxlab.io._readers import from_data, plain_data
from ctxlab.io._registry import format_named, format_names, formats
from ctxlab.io._transcript import Transcript
from ctxlab.tokens import preload
from ctxlab.util._gc import collector_paused
from ctxlab.util._jsonl import check_regular_file

__all__ = ["Format", "detect_format", "detect_lines", "load", "read"]


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
    (Cursor chats) — each format's module (``ctxlab/io/formats/``) says which versions it reads
    and where it learned the format —, and every format registered with
    `ctxlab.register_format` or a ``ctxlab.formats`` entry point (``ctxlab.FORMATS`` names them
    all). ``episode`` left out is the first (an episode of a file that holds one
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
    _check_arguments(format, episode)
    try:
        # A file's records live through its read, and the collector ran over all of them
        # again and again, freeing nothing (what a read drops, reference counting frees): a
        # fifth of `sessions`. Held off, and on again once the records are freed.
        with collector_paused(), remembered():  # (remembered: a record set aside walked once)
            transcript, values = _load(source, format, episode, sidechains, name)
            transcript = account_for(transcript, values)
            del values
    except MessageFormatError as exc:
        better = _said_better(exc, source, format)
        if better is None:
            raise
        raise better from exc
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
        raise _unexpected_shape(exc, source, format) from exc
    if format is None and transcript.meta.get("source") in _guesses() and not _modelled(transcript):
        # Loaded, but nothing in it reads as the format it was taken for: a wrong guess.
        guess = transcript.meta["source"]
        msg = (
            f"{shown_path(source) if isinstance(source, str | os.PathLike) else 'the data'}: "
            f"no block of it reads as {guess} ({_guess_hint(guess)})"
        )
        raise MessageFormatError(msg)
    return transcript


def _check_arguments(format: Format | None, episode: int | None) -> None:
    """A `UsageError` for a format ctxlab does not know or an episode that is no index."""
    if format is not None and format not in format_names():
        known = ", ".join(format_names())
        msg = f"format must be one of {known} (or None to detect it), got {format!r}"
        raise UsageError(msg)
    if episode is not None and (
        isinstance(episode, bool) or not isinstance(episode, int) or episode < 0
    ):
        msg = f"episode must be a whole number from 0 (0: the first), got {episode!r}"
        raise UsageError(msg)


def _said_better(
    exc: MessageFormatError, source: object, format: Format | None
) -> MessageFormatError | None:
    """The error with the guess that led to it, or with the file's name; None: it says both."""
    guess = _guessed(exc, format)
    if guess is not None:
        return MessageFormatError(f"{exc} ({_guess_hint(guess)})")
    if (
        isinstance(source, str | os.PathLike)
        and str(source) not in str(exc)
        and shown_path(source) not in str(exc)
    ):
        # Every error of a file names it: a folder's listing must say which one.
        return MessageFormatError(f"{shown_path(source)}: {exc}")
    return None


def _unexpected_shape(
    exc: BaseException, source: object, format: Format | None
) -> MessageFormatError:
    """A crash deep in a reader, said as the format error it is: which file, what broke."""
    where = shown_path(source) if isinstance(source, str | os.PathLike) else "the data"
    reason = (
        "a value nested too deeply to read"
        if isinstance(exc, RecursionError)
        else f"{type(exc).__name__}: {exc}"
    )
    return MessageFormatError(
        f"{where} does not read as a {format or 'recognized'} session: {reason}"
    )


def _guesses() -> frozenset[str]:
    """The formats taken from ``role`` fields alone, when nothing more specific matched."""
    return frozenset(f.name for f in formats() if f.guess)


def _guess_hint(guess: str) -> str:
    # What to do when a guess from role fields failed: the chat formats to name instead.
    chats = ", ".join(f.name for f in _by_registration() if f.messages)
    return (
        f"read as {guess}, guessed from its 'role' fields; if it is another format, pass "
        f"format= one of {chats} (or see ctxlab.FORMATS)"
    )


def _by_registration() -> list[SessionFormat]:
    # The formats in ``ctxlab.FORMATS``'s order (ctxlab's own first, then as registered).
    named = {f.name: f for f in formats()}
    return [named[name] for name in format_names() if name in named]


def _guessed(exc: MessageFormatError, format: Format | None) -> str | None:
    # The guess that failed, when the format was taken from role fields alone.
    guess = exc.guessed_format
    return guess if format is None and guess in _guesses() else None


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
        return _load_path(Path(source), format, episode, sidechains, name)
    data = plain_data(source) if isinstance(source, list | tuple) else source
    kind = format or detect_format(data)
    one_conversation(kind, episode, "<data>")
    return _read_data(data, kind, format, "<data>", name or "session", episode), [data]


def _load_path(
    path: Path, format: Format | None, episode: int | None, sidechains: bool, name: str | None
) -> tuple[Transcript, list[Any] | None]:
    # A file or folder: known by where it lives, else by its first characters (a text
    # format), else by its JSON (each format asked once, in priority order).
    problem = path_problem(path)
    if problem is not None:
        msg = f"cannot read {shown_path(path)}: {problem}"
        raise MessageFormatError(msg)
    asked = _asked(format)
    for declared in asked:  # a folder, or a file named for its part
        if declared.place is not None:
            found = declared.place(path, format is not None, name, episode or 0)
            if found is not None:
                return found
    check_regular_file(path)  # before any open: a FIFO would block it
    head = first_bytes(path)
    if format is None and foreign_text(head) is not None:
        msg = f"{path}: {foreign_text(head)}"
        raise MessageFormatError(msg)
    for declared in asked:
        if declared.read_text is not None and (format is not None or _claims_text(declared, head)):
            return declared.read_text(path, head, episode, name), None
    return _load_json(path, format, episode, sidechains, name)


def _asked(format: Format | None) -> tuple[SessionFormat, ...]:
    # Every format in detection order, or the one asked for.
    if format is None:
        return formats()
    declared = format_named(format)
    return (declared,) if declared is not None else ()


def _claims_text(declared: SessionFormat, head: str) -> bool:
    return declared.text is not None and declared.text(head)


def _load_json(
    path: Path, format: Format | None, episode: int | None, sidechains: bool, name: str | None
) -> tuple[Transcript, list[Any] | None]:
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
    declared = format_named(kind)
    if declared is not None and declared.read_file is not None:
        source = FileSource(path, records, document, read, name, episode, sidechains)
        transcript, own = declared.read_file(source)
        return transcript, values if own is None else own
    data: Any = document if records == [] else [value for _, value in records]
    if read.lines is not None and read.lines.left_out:
        transcript = from_data(data, kind, label, name or stem, episode or 0)
        return count_skipped_lines(transcript, read), values
    return _read_data(data, kind, format, label, name or stem, episode), values


def _read_data(
    data: Any, kind: str, format: Format | None, label: str, name: str, episode: int | None
) -> Transcript:
    try:
        return from_data(data, kind, label, name, episode or 0)
    except MessageFormatError as exc:
        if format is None:
            exc.guessed_format = kind  # load's hint names the guess
        raise
