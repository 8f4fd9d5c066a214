"""`follow`: a Claude Code session file read as it grows, each new request prepared by the
pipeline and shown in a Lab while the session runs.

Claude Code appends one JSON line per message part; a response can be spread over several lines,
with the results of its first calls in between. A request is therefore prepared once the reply it
produced is complete — when a later reply has begun — and the last one when the follower is
stopped or polled with ``final=True``.

A write that is not an append — the file replaced, truncated, or rewritten in place with another
history (the same inode, the same first bytes) — restarts the follower from the top: after each
write it checks that the file still begins with everything read so far (the SHA-256 of those
bytes), never splicing two histories.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
from typing import Any, BinaryIO

from ctxlab.config._config import ContextConfig
from ctxlab.exceptions import MessageFormatError
from ctxlab.io._compactions import place_compactions
from ctxlab.io.formats.claude_code.parse import from_claude_code
from ctxlab.messages import AssistantMessage
from ctxlab.sources._observed import ObservedSession
from ctxlab.tokens import TokenCounter
from ctxlab.util._checks import seconds
from ctxlab.util._path_args import path_argument

__all__ = ["FollowedSession", "follow"]

_CHUNK = 1 << 20
"""Bytes read at a time when checking what was read against the file."""


class FollowedSession(ObservedSession):
    """A growing Claude Code session file as a source of steps (see `follow`)."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        context_window: int,
        config: ContextConfig | None = None,
        counter: TokenCounter | None = None,
        sidechains: bool = False,
    ) -> None:
        self.path = path_argument(path, "path", what="a session file")
        super().__init__(
            context_window=context_window,
            mode="observe",
            config=config,
            counter=counter,
            name=self.path.stem,
        )
        self.sidechains = sidechains
        self.error: BaseException | None = None
        """What stopped the background polling, if anything did."""
        self._offset = 0
        # What was read (bytes [0, offset)) by its digest, and the file's stat when it was: a
        # rewrite in place keeps the inode and may keep the first bytes, never all of them.
        self._digest = hashlib.sha256()
        self._inode: int | None = None
        self._seen: tuple[int, int, int, int] | None = None
        self.skipped_lines = 0
        """Lines that were not JSON (a damaged write): counted, and the following read on."""
        self._partial = b""
        self._line = 0
        self._records: list[tuple[int, Any]] = []
        self._done = 0  # replies already prepared
        self.meta: dict[str, Any] = {}
        """What the importer learned (compactions, models, session id) and what it left out
        (``skipped``: subagent lines, damaged lines; the ``census``)."""
        self._task: asyncio.Task[None] | None = None

    def _start_over(self) -> None:
        self._offset, self._partial, self._line, self._records = 0, b"", 0, []
        self._done, self._digest, self.skipped_lines = 0, hashlib.sha256(), 0
        self.reset()

    def _read_new_lines(self) -> bool:
        try:
            with self.path.open("rb") as file:
                stat = os.fstat(file.fileno())
                seen = (stat.st_ino, stat.st_size, stat.st_mtime_ns, stat.st_ctime_ns)
                if seen == self._seen:
                    return False  # not written since (a write changes the ctime, always)
                # Truncated, rewritten in place, or another file under the name (a new session
                # written over it, a rename): read from the start, never splicing two sessions.
                if not self._still_read(file, stat):
                    self._start_over()
                self._inode, self._seen = stat.st_ino, seen
                file.seek(self._offset)
                data = file.read()
        except OSError as exc:
            msg = f"cannot read {self.path}: {exc.strerror or exc}"
            raise MessageFormatError(msg) from exc
        self._digest.update(data)
        self._offset += len(data)
        *lines, self._partial = (self._partial + data).split(b"\n")
        for raw in lines:
            self._line += 1
            if not raw.strip():
                continue
            try:
                self._records.append((self._line, json.loads(raw.decode("utf-8"))))
            except (UnicodeDecodeError, json.JSONDecodeError):
                # A damaged line: counted (``skipped_lines``, meta["skipped"]), and the turns
                # after it still read.
                self.skipped_lines += 1
        return bool(lines)

    def _still_read(self, file: BinaryIO, stat: os.stat_result) -> bool:
        """Whether the file still begins with everything read from it so far: the same inode,
        no shorter, and the same bytes up to the offset (by their digest)."""
        if self._offset == 0:
            return True
        if stat.st_ino != self._inode or stat.st_size < self._offset:
            return False
        digest, left = hashlib.sha256(), self._offset
        while left:
            chunk = file.read(min(left, _CHUNK))
            if not chunk:
                return False  # shortened meanwhile
            digest.update(chunk)
            left -= len(chunk)
        return digest.digest() == self._digest.digest()

    async def poll(self, *, final: bool = False) -> int:
        """Read what was appended and prepare the requests whose replies are complete (all of
        them with ``final=True``); returns how many steps were added."""
        if not self._read_new_lines() and not final:
            return 0
        if not self._records:
            return 0
        builder, meta = from_claude_code(self._records, str(self.path), sidechains=self.sidechains)
        messages, notes, usage, _ = builder.finish()
        place_compactions(meta, messages)
        # What the importer left out and why (subagent lines, blocks not modelled, the census),
        # as `load` keeps it: nothing read is dropped without a count.
        meta = {**meta, **notes}
        replies = [i for i, m in enumerate(messages) if isinstance(m, AssistantMessage)]
        ready = replies if final else replies[:-1]
        added = 0
        for index in ready[self._done :]:
            before = len(self.manifests)
            await self.prepare(messages[:index])
            reply = messages[index]
            if len(self.manifests) > before and isinstance(reply, AssistantMessage):
                self.record_response(reply, usage.get(index))
                added += 1
        self._done = max(self._done, len(ready))
        if self.skipped_lines:
            meta["skipped"] = {**meta.get("skipped", {}), "unreadable line": self.skipped_lines}
        self.meta = meta
        if final:
            # The whole file is the session's history now: its last reply included.
            self._history = list(messages)
        return added

    def start(self, interval: float = 0.5) -> asyncio.Task[None]:
        """Poll in the background every ``interval`` seconds until `stop` (needs a running event
        loop, as in a notebook). ``interval`` is a positive, finite number of seconds."""
        interval = poll_interval(interval)
        if self._task is None or self._task.done():
            self._task = asyncio.ensure_future(self._poll_forever(interval))
        return self._task

    async def _poll_forever(self, interval: float) -> None:
        try:
            while True:
                await self.poll()
                await asyncio.sleep(interval)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # kept for the user to read: a background task has no caller
            self.error = exc

    async def stop(self) -> None:
        """Stop polling and prepare the last request."""
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        await self.poll(final=True)


def poll_interval(value: Any) -> float:
    """``value`` as seconds between polls: a finite number above 0 (NaN would poll never,
    infinity once, 0 or less without pause)."""
    return seconds(value, "interval")


async def follow(
    path: str | os.PathLike[str],
    *,
    context_window: int,
    config: ContextConfig | None = None,
    counter: TokenCounter | None = None,
    sidechains: bool = False,
    interval: float = 0.5,
) -> FollowedSession:
    """Follow a Claude Code session file as it grows: what it already holds is prepared now, the
    rest as it is written (every ``interval`` seconds, in the background). Open the result in a
    Lab (``Lab(session)``) to watch the session's requests live; ``await session.stop()`` ends it.

    Raises `MessageFormatError` if the file cannot be read or holds a line that is not JSON,
    `UsageError` for an ``interval`` that is not a positive, finite number of seconds.
    """
    interval = poll_interval(interval)  # before anything is read or started
    session = FollowedSession(
        path, context_window=context_window, config=config, counter=counter, sidechains=sidechains
    )
    await session.poll()
    session.start(interval)
    return session
