"""`SessionFormat`: everything ctxlab knows of one format of recorded sessions, declared in one
place — its name, the tool and versions it reads and where that was learned, how a file of it is
recognised (with a priority, and what it must never claim), how a file, a folder or decoded data
of it is read, what its census counts, and which files of a folder are its sessions.

Each format ctxlab reads declares one (``ctxlab/io/formats/<format>.py``); a user declares one
for a format of their own and hands it to `ctxlab.register_format` (or to the ``ctxlab.formats``
entry-point group). Detection, `load`, `sessions`, ``ctxlab.FORMATS``, the census and fuzz
tests all read the registry of them (`ctxlab.io._registry`)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ctxlab.io._compaction_thresholds import ToolThreshold
    from ctxlab.io._transcript import Transcript

__all__ = ["FileSource", "FormatCase", "SessionFormat"]

Reader = Callable[[Any, str, str, int, dict[str, Any]], "Transcript"]
"""Decoded data (a JSON document, or a JSON Lines file's records as a list), where it came
from (for errors), the transcript's name, the episode asked (0: the first) and the meta to
start from (``{"source": name}``) → the transcript."""
TextReader = Callable[[Path, str, "int | None", "str | None"], "Transcript"]
"""A text file's path, its first characters, the episode asked and the name given → the
transcript."""
Place = Callable[[Path, bool, "str | None", int], "tuple[Transcript, list[Any] | None] | None"]
"""A path, whether this format was asked for (``format=``), the name given and the episode
asked (0: the first) → the transcript and the decoded values it was read from (None: not
JSON), or None when the path is not a session of this format by where it lives."""


@dataclass(frozen=True)
class FileSource:
    """A JSON or JSON Lines file, read: what a format that reads the file itself (not only its
    decoded data) is handed."""

    path: Path
    records: list[tuple[int, Any]]
    """The file's JSON Lines records, (line number, value); empty for one JSON document."""
    document: Any
    """The file's JSON document (None for JSON Lines)."""
    read: Any
    """The read itself (``ctxlab.io._files.read_records``'s result: lines left out...)."""
    name: str | None
    episode: int | None
    sidechains: bool


Count = int | Sequence[int] | Callable[[Any], Any]
"""A count a contract expects: the number itself (a list of numbers for outputs), or a function
of the source that counts it from the file (code that knows the file, not the importer)."""


@dataclass(frozen=True)
class FormatCase:
    """One case of a format's census contract: a source of the format and what its census must
    count — as data, so a format brings its expectations with its declaration."""

    source: Any
    """A file or folder (a path), decoded data, or a function of a folder that writes the
    source there and returns its path."""
    records: Count
    """The records the census reads (summed over its kinds)."""
    calls: Count | None = None
    """The tool calls the census counts (None: not checked)."""
    outputs: Count | None = None
    """Each billed request's output tokens, in order (None: not checked)."""
    label: str = ""
    """Its name in a finding (default: the source's file name)."""
    detected: bool | None = None
    """Whether `load` must find this format with no ``format=`` given (None: when the source
    is a file or folder, not decoded data)."""
    unit: str = ""
    """What its census counts a record as ("line", "event", …; empty: not checked)."""
    read: Mapping[str, int] | None = None
    """The records its census reads, by kind, exactly (None: not checked; ``records`` is
    their sum)."""
    skipped: Mapping[str, int] | None = None
    """What the load skipped or left out, by reason — the transcript's ``meta["skipped"]`` —
    exactly (None: not checked; ``{}``: nothing)."""
    usage_lost: Mapping[str, int] | None = None
    """The usage reports read but placed on no reply, by reason, exactly (None: not
    checked)."""

    def made(self, folder: Path) -> Any:
        """The source, written to ``folder`` first when it is made by a function."""
        return self.source(folder) if callable(self.source) else self.source

    @property
    def name(self) -> str:
        """What a finding calls this case."""
        if self.label:
            return self.label
        return Path(self.source).name if isinstance(self.source, str | Path) else "data"


@dataclass(frozen=True)
class SessionFormat:
    """One format of recorded sessions: how it is recognised, read and listed.

    Only ``name`` is required; a format gives the detectors and readers it has. Detection asks
    the formats in ``priority`` order (lower first), each once; the first whose detector
    claims the data wins — a format's detector must be specific enough never to claim another
    format's files (``never`` says which it is careful of; a test runs every format's files
    through every detector).
    """

    name: str
    """What ``format=`` and ``meta["source"]`` call it: letters, digits and ``_``."""
    tool: str = ""
    """The tool (and versions) whose sessions it reads."""
    learned_from: str = ""
    """Where the format was read from: the tool's source files (repository, path)."""
    priority: int = 500
    """Detection order: lower asked first (ctxlab's own formats use 0–400; a format known by
    role fields alone, ``guess``, is asked after all others whatever its priority)."""
    never: str = ""
    """What its detectors must never claim (the formats whose files look like its own)."""
    document: Callable[[Mapping[str, Any]], bool] | None = None
    """Claims a JSON object: a whole document, or a JSON Lines file's first record."""
    records: Callable[[list[Any]], bool] | None = None
    """Claims a JSON list (a document that is a list, or decoded data)."""
    lines: Callable[[list[Any]], bool] | None = None
    """Claims a JSON Lines file from its first records (asked before its first record is)."""
    line_format: bool = False
    """Every line of its JSON Lines files says what it is: its lines outvote a first line of
    another format (a tool's header line no detector knows)."""
    text: Callable[[str], bool] | None = None
    """Claims a text (not JSON) file from its first characters."""
    kinds: tuple[tuple[str, Callable[[Any], bool]], ...] = ()
    """The variants it tells apart (name, detector), each never claiming another's files: the
    detection test holds them to it."""
    read: Reader | None = None
    """Reads decoded data into a transcript (most formats: through a `ConversationBuilder`)."""
    read_file: Callable[[FileSource], tuple[Transcript, list[Any] | None]] | None = None
    """Reads a JSON or JSON Lines file itself (its path, its lines left out): the transcript
    and the values its census accounts for (None: every value of the file)."""
    read_text: TextReader | None = None
    """Reads a text file this format's ``text`` claimed (or any, when it was asked for)."""
    place: Place | None = None
    """Reads a session known by where it lives (a folder of files, a file named for its part)."""
    episodes: bool = False
    """A file may hold several conversations (``episode`` picks one)."""
    census: str = "the file's records"
    """What its census counts as the records read (lines, a list's items, a task's files...)."""
    suffixes: tuple[str, ...] = ()
    """The file endings `sessions` looks at for it (beside ``.json``/``.jsonl``)."""
    listed: Callable[[Path], bool] | None = None
    """Whether a file of one of its ``suffixes`` is a session (for an ending other files share:
    of Markdown files, only chat histories)."""
    part: Callable[[Path], bool] | None = None
    """Whether a file is a part of a session that `sessions` lists under another file."""
    folders: Callable[[list[Path]], list[Path]] | None = None
    """The folders that are sessions of their own, among the files `sessions` found."""
    reads: Callable[[Path], Iterable[Path]] | None = None
    """The files and folders (a folder: every file under it) that reading a session file of
    this format looks at besides the file itself, wherever they lie — a Claude Code session's
    ``<session>/subagents/``, OpenCode's stored session's messages and parts beside
    ``session/``. `sessions` keeps a session's rows only while its file and these are
    unchanged (`ctxlab.io._sessions_rows`): a file a format reads and does not name here is
    not watched. Asked of every session file (of any format: name nothing for a file not of
    this format), so it must be cheap. None: the file alone."""
    guess: bool = False
    """Known by ``role`` fields alone (the chat formats): asked after every other format."""
    messages: bool = False
    """Its data is a list of chat messages (or a request holding them): named among the
    formats to pass as ``format=`` when a guess from ``role`` fields fails."""
    plain: Callable[[Sequence[Any]], Sequence[Any] | None] | None = None
    """A list of its library's objects (not JSON) as the plain data ``read`` takes, or None
    for objects that are not its library's: `load` asks it of objects given as data."""
    thresholds: tuple[ToolThreshold, ...] = ()
    """The auto-compaction thresholds its tool documents, by version (where a recorded
    compaction should have fired: `sessions`' compaction columns, `compaction_sites`)."""
    contract: tuple[FormatCase, ...] = ()
    """Its census contract: files (or data) of the format and what the census must count in
    each (`FormatCase`); `ctxlab.io.check_contract` checks them, ctxlab's tests run them."""
    extra: Mapping[str, Any] = field(default_factory=dict)
    """Anything else a format wants to keep beside its declaration."""
