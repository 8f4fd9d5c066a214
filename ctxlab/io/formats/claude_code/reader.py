"""A Claude Code session file as a transcript: its main thread (episode 0) or one of its
subagents (episode N), each its own conversation with its own bill, the census of the whole
file (the other threads' lines read and set apart)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._files import FileRecords, count_skipped_lines
from ctxlab.io._readers import built_transcript
from ctxlab.io._transcript import Transcript
from ctxlab.io.formats.claude_code.parse import from_claude_code
from ctxlab.io.formats.claude_code.subagents import Split, split_subagents
from ctxlab.util._jsonl import read_text, session_lines

__all__ = ["claude_code"]


def claude_code(
    records: list[tuple[int, Any]],
    where: str,
    name: str,
    episode: int,
    sidechains: bool,
    path: Path | None = None,
    read: FileRecords | None = None,
) -> tuple[Transcript, list[Any] | None]:
    """A Claude Code session file: episode 0 is the main thread, episode N its N-th subagent
    (`split_subagents`: in the order the file first mentions them), read from its own file
    beside the session's (``path``) when it has one. ``read`` says which lines of the file were
    left out (not JSON, cut off): counted in the census of the file they are of. Also returns
    the records of the subagent's own file when the transcript was read from it (None: the
    records given), for the inventory of the file it came from."""
    transcript, own_file = _claude_code(records, where, name, episode, sidechains, path)
    if own_file is not None:
        return count_skipped_lines(transcript, own_file), [r for _, r in own_file.records]
    return (transcript if read is None else count_skipped_lines(transcript, read)), None


def _claude_code(
    records: list[tuple[int, Any]],
    where: str,
    name: str,
    episode: int,
    sidechains: bool,
    path: Path | None,
) -> tuple[Transcript, FileRecords | None]:
    # The transcript, and the subagent's own file when it was read from one.
    if sidechains:  # the former splice of every subagent into the main thread
        builder, meta = from_claude_code(records, where, sidechains=True)
        return built_transcript(name, builder, meta, "", ()), None
    split = split_subagents(records, path)
    if episode:
        return _subagent(records, split, episode, where, name)
    return _main_thread(records, split, where, name, path), None


def _subagent(
    records: list[tuple[int, Any]], split: Split, episode: int, where: str, name: str
) -> tuple[Transcript, FileRecords | None]:
    """Subagent ``episode``: from its own file when it has one, else from its lines here."""
    listed = [agent.listing(n) for n, agent in enumerate(split.agents, 1)]
    if not 0 < episode <= len(listed):
        msg = (
            f"{where}: no subagent {episode} (the session has {len(listed)}; episode 0 is "
            "the main thread)"
        )
        raise MessageFormatError(msg)
    agent = split.agents[episode - 1]
    lines = agent.records
    label = f"{where} subagent {episode}"
    own = None
    if agent.path is not None:
        label = str(agent.path)
        own = _agent_file(agent.path)
        lines = [(n, {**r, "isSidechain": False}) for n, r in own.records]
    builder, meta = from_claude_code(lines, label)
    meta.update(subagent_of=meta.get("session_id"), subagent=listed[episode - 1])
    if agent.path is None:
        # The census is of the whole file: the other threads' lines are read, not this one's.
        kept = {n for n, _ in lines}
        apart = [r for n, r in records if n not in kept]
        builder.record("line of another thread", len(apart), raw=apart)
        builder.skip("in another thread (the main one or another subagent)")
    return built_transcript(f"{name}#{episode}", builder, meta, "", ()), own


def _main_thread(
    records: list[tuple[int, Any]], split: Split, where: str, name: str, path: Path | None
) -> Transcript:
    """The main thread, the subagents listed in its meta and their lines set apart."""
    listed = [agent.listing(n) for n, agent in enumerate(split.agents, 1)]
    builder, meta = from_claude_code(split.main, where)
    # What the other threads' lines hold is set aside with them (the first group that has any).
    main = {n for n, _ in split.main}
    others: list[Any] | None = [r for n, r in records if n not in main]
    if listed:
        meta["subagents"] = listed
        subagent = sum(item["lines"] for item in listed)
        builder.record("subagent line", subagent, raw=others)
        builder.skip("subagent line")
        others = None
    builder.record("repeated subagent line", split.repeated, raw=others if split.repeated else None)
    builder.skip("repeated subagent line")
    others = others if not split.repeated else None
    # Any other line the split set apart (neither the main thread's nor a listed subagent's).
    rest = (
        len(records)
        - len(split.main)
        - split.repeated
        - (sum(item["lines"] for item in listed) if listed else 0)
    )
    builder.record("line of another thread", rest, raw=others if rest else None)
    builder.skip("in another thread")
    if path is not None and path.stem.startswith("agent-") and _sidechain_only(records):
        # A subagent's own file opened alone: it says whose it is.
        meta.update(subagent_of=meta.get("session_id"), agent_id=path.stem[len("agent-") :])
    return built_transcript(name, builder, meta, "", ())


def _agent_file(path: Path) -> FileRecords:
    lines = session_lines(path, read_text(path))
    return FileRecords(lines.records, None, lines)


def _sidechain_only(records: list[tuple[int, Any]]) -> bool:
    lines = [
        r for _, r in records if isinstance(r, Mapping) and r.get("type") in ("user", "assistant")
    ]
    return bool(lines) and all(r.get("isSidechain") for r in lines)
