"""Claude Code session files (``~/.claude/projects/<project>/<session>.jsonl``), their subagents'
files beside them (`ctxlab.io.formats.claude_code.parse` says what is read and where it was learned)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxlab.io._format import FileSource, SessionFormat
from ctxlab.io._transcript import Transcript
from ctxlab.io.formats.claude_code.parse import is_claude_code_line
from ctxlab.io.formats.claude_code.reader import claude_code
from ctxlab.io.formats.claude_code.subagents import agent_folder
from ctxlab.io.formats.claude_code.thresholds import THRESHOLDS


def _read_file(source: FileSource) -> tuple[Transcript, list[Any] | None]:
    # Read with its subagents' files (the folder named for the session, beside it).
    label, stem = str(source.path), source.path.name.split(".")[0]
    transcript, own = claude_code(
        source.records or [(1, source.document)],
        label,
        source.name or stem,
        source.episode or 0,
        source.sidechains,
        source.path,
        source.read,
    )
    return transcript, own


def _agent_meta(path: Path) -> bool:
    # ``subagents/agent-<id>.meta.json`` says which call started the agent beside it: read with
    # that agent's file, not a session of its own.
    return path.name.startswith("agent-") and path.name.endswith(".meta.json")


def _read_beside(path: Path) -> list[Path]:
    # A session file is read with its subagents' files and their meta, in the folder named
    # for it (`split_subagents`); any file may be one (known only once decoded).
    return [agent_folder(path)]


FORMAT = SessionFormat(
    name="claude_code",
    tool="Claude Code (session JSONL, subagents' files), 1.x–2.x",
    learned_from="Claude Code's session files and the Agent SDK's types (see "
    "ctxlab.io.formats.claude_code.parse)",
    priority=20,
    never="Codex, Copilot or Gemini CLI lines: a line with Claude Code's own type and uuid",
    document=is_claude_code_line,
    line_format=True,
    read_file=_read_file,
    episodes=True,
    census="lines by type, subagents' lines",
    part=_agent_meta,
    reads=_read_beside,
    thresholds=THRESHOLDS,
)
