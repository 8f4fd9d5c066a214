"""aider's chat history (``.aider.chat.history.md``) and its LLM log (``--llm-history-file``,
often ``.aider.llm.history``) — `ctxlab.io.formats.aider.chat_history` and `ctxlab.io.formats.aider.llm_history` say what is read
and where it was learned; ``episode`` picks a run."""

from __future__ import annotations

from pathlib import Path

from ctxlab.io._format import SessionFormat
from ctxlab.io._readers import built_transcript
from ctxlab.io._transcript import Transcript
from ctxlab.io.formats.aider.chat_history import from_aider, is_aider_history
from ctxlab.io.formats.aider.llm_history import from_aider_llm, is_aider_llm_history
from ctxlab.util._jsonl import read_text

_HISTORY = ".aider.chat.history.md"


def _is_aider(head: str) -> bool:
    return is_aider_llm_history(head) or is_aider_history(head)


def _read_text(path: Path, head: str, episode: int | None, name: str | None) -> Transcript:
    # Named for the folder it is in: aider keeps one history (and log) per repository.
    folder = name or path.resolve().parent.name or "aider"
    if is_aider_llm_history(head):
        builder, system, notes = from_aider_llm(read_text(path), str(path), episode)
        return built_transcript(folder, builder, {"source": "aider", **notes}, system, ())
    builder, notes = from_aider(read_text(path), str(path), episode)
    return built_transcript(folder, builder, {"source": "aider", **notes}, "", ())


def _listed(path: Path) -> bool:
    # Of Markdown files, only aider's chat history (by its name): not every README.
    name = path.name.lower()
    return not name.endswith(".md") or name.endswith(_HISTORY)


FORMAT = SessionFormat(
    name="aider",
    tool="aider's chat history and LLM log, 2023–2026",
    learned_from="Aider-AI/aider aider/io.py (append_chat_history, log_llm_history), "
    "aider/coders/base_coder.py, aider/utils.py (format_messages)",
    priority=310,
    never="other Markdown: a run's '# aider chat started at' line, or the log's TO LLM header",
    text=_is_aider,
    read_text=_read_text,
    episodes=True,
    census="a run's inputs, replies and tool output (the log: its requests and replies)",
    suffixes=(".aider.llm.history", ".md"),
    listed=_listed,
)
