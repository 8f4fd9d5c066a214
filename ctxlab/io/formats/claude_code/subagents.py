"""Claude Code's subagents, each a conversation of its own with its own requests and bill.

A subagent (a ``Task`` / ``Agent`` call, or the call that writes a compaction's summary) is
recorded in one or more of three layouts, all read here:

- **its own file** (Claude Code 2.1 and later): ``<session>/subagents/agent-<id>.jsonl`` beside
  the session's ``<session>.jsonl``, every line ``isSidechain`` with the ``agentId``; later
  versions add ``agent-<id>.meta.json`` (``agentType``, ``description``, ``toolUseId``). A
  compaction's summary call is ``agent-acompact-<id>.jsonl``;
- **``agent_progress`` lines** of the session file (the subagent's messages as it ran, under the
  ``parentToolUseID`` of the call that started it, with ``data.agentId``);
- **sidechain lines** of the session file (older versions): ``isSidechain`` lines, grouped by
  ``agentId`` — or, in versions that wrote none, by the chain of ``parentUuid`` each hangs from,
  so that subagents run in parallel stay apart.

The call that started each is found from the parent's tool result (``toolUseResult.agentId``
beside the ``tool_result`` of the call), from the progress lines' ``parentToolUseID`` or from
the meta file's ``toolUseId``. Where a subagent has its own file, the file is read (it is
whole; the progress lines hold what was shown while it ran).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

__all__ = ["Split", "Subagent", "agent_folder", "split_subagents"]

Record = tuple[int, Any]


@dataclass
class Subagent:
    """One subagent of a session, as found in its files."""

    key: str
    """How its lines were grouped: its agent id, or the sidechain it hangs from."""
    agent_id: str | None = None
    task_call_id: str | None = None
    """The parent's tool call that started it (None when the files do not say)."""
    kind: Literal["task", "compaction"] = "task"
    """A subagent started by a tool call, or the call that wrote a compaction's summary."""
    records: list[Record] = field(default_factory=list)
    """Its lines in the session file (progress messages, sidechain lines)."""
    path: Path | None = None
    """Its own file, when it has one."""
    agent_type: str | None = None
    description: str | None = None
    first_line: int = 0
    """Where the session file first mentions it (its episodes are numbered in that order)."""

    def listing(self, episode: int) -> dict[str, Any]:
        """Its entry in the session's ``meta["subagents"]``."""
        entry: dict[str, Any] = {
            "episode": episode,
            "task_call_id": self.task_call_id,
            "agent_id": self.agent_id,
            "kind": self.kind,
            "lines": len(self.records),
        }
        if self.path is not None:
            entry["file"] = str(self.path)
        for key, value in (("agent_type", self.agent_type), ("description", self.description)):
            if value:
                entry[key] = value
        return entry


def agent_folder(session: Path) -> Path:
    """Where Claude Code keeps the per-agent files of ``session`` (``<session>/subagents``)."""
    return session.with_suffix("") / "subagents"


@dataclass
class Split:
    """A session file's lines, parted into the main thread's and its subagents'."""

    main: list[Record]
    agents: list[Subagent]
    """In the order the session file first mentions them (then any other per-agent files of
    the session's folder, by name)."""
    repeated: int = 0
    """Progress lines that reported a subagent message already reported (counted, not read
    twice)."""


def split_subagents(records: Iterable[Record], session: Path | None = None) -> Split:
    """The main thread's lines and the session's subagents (`Split`); ``session`` is the
    session file's path, beside which its per-agent files are looked for.

    A file holding sidechain lines only (a subagent's own ``agent-*.jsonl``) is that agent's
    main thread, not a subagent of itself."""
    main: list[Record] = []
    repeated = 0
    found: dict[str, Subagent] = {}
    side: list[Record] = []
    seen: set[str] = set()
    calls: dict[str, tuple[str, int]] = {}  # agent id -> (task call id, line)
    for number, record in records:
        if not isinstance(record, Mapping):
            main.append((number, record))
            continue
        progress = _progress_message(record)
        if progress is not None:
            message, agent_id = progress
            uuid = str(message.get("uuid") or "")
            if uuid and uuid in seen:
                repeated += 1  # the same message reported again
                continue
            seen.add(uuid)
            call = str(record.get("parentToolUseID") or "") or None
            key = agent_id or call or "agent"
            agent = found.setdefault(key, Subagent(key, agent_id, call, first_line=number))
            agent.task_call_id = agent.task_call_id or call
            agent.records.append((number, message))
            continue
        if record.get("isSidechain"):
            side.append((number, record))
            continue
        _note_task_result(record, number, calls)
        main.append((number, record))
    if side and not any(
        isinstance(r, Mapping) and r.get("type") in ("user", "assistant") for _, r in main
    ):
        # A subagent's own file: its lines are the conversation.
        return Split([*main, *((n, {**r, "isSidechain": False}) for n, r in side)], [], repeated)
    for key, lines in _sidechains(side).items():
        agent_id = next((str(r["agentId"]) for _, r in lines if r.get("agentId")), None)
        name = agent_id or key
        agent = found.setdefault(name, Subagent(name, agent_id, first_line=lines[0][0]))
        agent.records.extend((n, {**r, "isSidechain": False}) for n, r in lines)
    for agent in found.values():
        if agent.agent_id in calls and agent.task_call_id is None:
            agent.task_call_id = calls[agent.agent_id][0]
    if session is not None:
        _own_files(agent_folder(session), found, calls)
    agents = sorted(found.values(), key=lambda a: (a.first_line == 0, a.first_line, a.key))
    return Split(main, agents, repeated)


def _progress_message(record: Mapping[str, Any]) -> tuple[Mapping[str, Any], str | None] | None:
    # An ``agent_progress`` line's subagent message and agent id; None for any other line.
    data = record.get("data")
    if record.get("type") != "progress" or not isinstance(data, Mapping):
        return None
    message = data.get("message")
    if data.get("type") != "agent_progress" or not isinstance(message, Mapping):
        return None
    agent_id = data.get("agentId")
    return message, str(agent_id) if agent_id else None


def _note_task_result(
    record: Mapping[str, Any], number: int, calls: dict[str, tuple[str, int]]
) -> None:
    # The parent's tool result of a subagent names the agent (``toolUseResult.agentId``).
    result = record.get("toolUseResult")
    message = record.get("message")
    if not isinstance(result, Mapping) or not result.get("agentId"):
        return
    content = message.get("content") if isinstance(message, Mapping) else None
    ids = [
        b.get("tool_use_id")
        for b in content or ()
        if isinstance(b, Mapping) and b.get("type") == "tool_result" and b.get("tool_use_id")
    ]
    if len(ids) == 1:
        calls.setdefault(str(result["agentId"]), (str(ids[0]), number))


def _sidechains(side: list[Record]) -> dict[str, list[Record]]:
    """Sidechain lines by agent: its ``agentId``, else the first line of the ``parentUuid``
    chain it hangs from (each subagent's chain starts at its prompt)."""
    parent_of = {
        str(r["uuid"]): str(r.get("parentUuid") or "")
        for _, r in side
        if isinstance(r, Mapping) and r.get("uuid")
    }
    groups: dict[str, list[Record]] = {}
    for number, record in side:
        agent = record.get("agentId")
        if agent:
            key = str(agent)
        else:
            key = _root(str(record.get("uuid") or ""), parent_of) or "sidechain"
        groups.setdefault(key, []).append((number, record))
    return groups


def _root(uuid: str, parent_of: Mapping[str, str]) -> str:
    # Up the chain while the parent is a sidechain line of this file (a bounded walk: a loop
    # in a damaged file ends).
    seen: set[str] = set()
    while uuid and parent_of.get(uuid) in parent_of and uuid not in seen:
        seen.add(uuid)
        uuid = parent_of[uuid]
    return uuid


def _own_files(folder: Path, found: dict[str, Subagent], calls: dict[str, tuple[str, int]]) -> None:
    # Each ``agent-<id>.jsonl`` of the folder: the subagent of that id (its file is read
    # instead of its lines in the session file), or one the session file never mentions.
    try:
        files = sorted(folder.glob("agent-*.jsonl")) if folder.is_dir() else []
    except OSError:
        return
    for path in files:
        if not path.is_file():
            continue
        agent_id = path.stem.removeprefix("agent-")
        about = _meta_file(path.with_suffix(".meta.json"))
        agent = found.get(agent_id)
        if agent is None:
            call = calls.get(agent_id)
            agent = found[agent_id] = Subagent(
                agent_id, agent_id, call[0] if call else None, first_line=call[1] if call else 0
            )
        agent.path = path
        agent.agent_id = agent.agent_id or agent_id
        if agent_id.startswith("acompact"):
            agent.kind = "compaction"
        tool_use = about.get("toolUseId")
        agent.task_call_id = agent.task_call_id or (str(tool_use) if tool_use else None)
        for key in ("agentType", "description"):
            if isinstance(about.get(key), str):
                setattr(agent, "agent_type" if key == "agentType" else key, about[key])


def _meta_file(path: Path) -> Mapping[str, Any]:
    # An agent's ``.meta.json`` (newer versions); anything unreadable is no meta.
    try:
        value = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}
    except (OSError, ValueError, RecursionError):
        return {}
    return value if isinstance(value, Mapping) else {}
