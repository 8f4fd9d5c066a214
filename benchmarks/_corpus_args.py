"""The corpus sessions a preparation bench runs on, chosen from its command line (shared by
`compaction_bench.py` and `replay_user_bench.py`, so that both time the same sessions).

`corpus_args(parser, ...)` adds the options (``--windows``, ``--repeat``, ``--stitch``,
``--stitched``, ``--group``); `chosen_sessions(args)` reads ``$CTXLAB_CORPUS/norm/*.jsonl``
and returns the sessions of the groups asked for (`sessions`: the corpus split by name into a
tuned and a held-out part, and long sessions stitched within each part), or ``None`` when the
corpus holds no transcript (said on stderr). `forget_memos()` empties ctxlab's process-wide
memos (`ctxlab.util._memo.Memo`: the summarizer's and the grader's scans kept by text), so that
a contender timed after another run of the same session is cold.
"""

from __future__ import annotations

import argparse
import gc
import sys
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ctxlab import AssistantMessage, TextBlock, UserMessage
from ctxlab.io._transcript import corpus_dir, load_transcript
from ctxlab.messages import request_start
from ctxlab.messages._messages import MESSAGES_ADAPTER
from ctxlab.util._memo import Memo

Messages = tuple[UserMessage | AssistantMessage, ...]


@dataclass
class Session:
    name: str
    group: str  # corpus/tuned, corpus/held-out, stitched/tuned, stitched/held-out
    paths: tuple[Path, ...]

    def load(self) -> tuple[Messages, str]:
        """Fresh message objects (a cold repeat): the files read again and concatenated."""
        messages: list[UserMessage | AssistantMessage] = []
        system = ""
        for number, path in enumerate(self.paths):
            transcript = load_transcript(path)
            system = system or transcript.system
            part = transcript.messages[request_start(transcript.messages) :]
            if number:
                part = renamed(part, f"s{number}_")
            if messages and isinstance(messages[-1], UserMessage) and part:
                # Two sessions joined: the next one's first user turn follows an assistant turn
                # of the previous one, as a user returning to the agent would.
                messages.append(AssistantMessage(content=(TextBlock(text="(session continues)"),)))
            messages.extend(part)
        return tuple(messages), system


def renamed(messages: Messages, prefix: str) -> Messages:
    """The messages with every tool call id prefixed: two joined sessions may reuse ids."""
    dumped = MESSAGES_ADAPTER.dump_python(list(messages), mode="json")
    for message in dumped:
        if isinstance(message["content"], list):
            for block in message["content"]:
                for key in ("id", "tool_use_id"):
                    if block.get("type") in ("tool_use", "tool_result") and key in block:
                        block[key] = prefix + block[key]
    return tuple(MESSAGES_ADAPTER.validate_python(dumped))


def held_out(path: Path) -> bool:
    """A fixed third of the corpus, chosen by name (never by size or by how ctxlab does)."""
    return zlib.crc32(path.name.encode()) % 3 == 0


def sessions(files: list[Path], stitch: int, stitched: int, stitched_only: bool) -> list[Session]:
    """The corpus sessions of each part, then ``stitched`` long ones per part: its sessions
    joined in name order from a different starting session each, until ``stitch`` messages."""
    out: list[Session] = []
    for part in ("tuned", "held-out"):
        chosen = [p for p in files if held_out(p) == (part == "held-out")]
        if not stitched_only:
            out += [Session(p.stem, f"corpus/{part}", (p,)) for p in chosen]
        sizes = {p: sum(1 for _ in p.open()) - 1 for p in chosen}
        for k in range(stitched):
            offset = k * len(chosen) // stitched
            ring = chosen[offset:] + chosen[:offset]
            group: list[Path] = []
            while ring and sum(sizes[p] for p in group) < stitch:
                group.append(ring.pop(0))
            out.append(Session(f"stitched-{part}-{k}", f"stitched/{part}", tuple(group)))
    return out


def corpus_args(
    parser: argparse.ArgumentParser, *, windows: str, group: str, stitched_only: bool = False
) -> None:
    """Add the windows, repeats and corpus selection options to ``parser`` (``windows`` and
    ``group`` are the bench's defaults; ``stitched_only`` adds ``--stitched-only``)."""
    parser.add_argument("--windows", default=windows, help="context windows, comma-separated")
    parser.add_argument("--repeat", type=int, default=3, help="cold runs of each; best kept")
    parser.add_argument("--stitch", type=int, default=1500, help="messages per stitched session")
    parser.add_argument("--stitched", type=int, default=3, help="stitched sessions per part")
    if stitched_only:
        parser.add_argument("--stitched-only", action="store_true", help="skip single sessions")
    parser.add_argument("--group", default=group, help="only the groups containing this text")


def windows_of(args: argparse.Namespace) -> list[int]:
    """The windows asked for, as numbers."""
    return [int(w) for w in args.windows.split(",")]


def chosen_sessions(args: argparse.Namespace) -> list[Session] | None:
    """The sessions of the groups asked for; ``None`` (said on stderr) without a corpus."""
    files = sorted((corpus_dir() / "norm").glob("*.jsonl"))
    if not files:
        print("no transcripts: set CTXLAB_CORPUS", file=sys.stderr)
        return None
    only = getattr(args, "stitched_only", False)
    return [s for s in sessions(files, args.stitch, args.stitched, only) if args.group in s.group]


_MEMOS: list[Memo[Any, Any]] = []


def forget_memos() -> int:
    """Empty every `Memo` of the process (a replay's summarizer keeps each tool result's scan
    by its text: a second run of a session finds them made, a third of its cold cost at 16k).
    Found once through the garbage collector (ctxlab's memos are its modules'), so that the
    benches run against any version of ctxlab; returns how many were emptied. Call it outside
    the timed region."""
    if not _MEMOS:
        _MEMOS.extend(o for o in gc.get_objects() if isinstance(o, Memo))
    for memo in _MEMOS:
        memo._values.clear()  # a benchmark's cold start: nothing else empties them
    return len(_MEMOS)
