"""Claude Code session files (``~/.claude/projects/<project>/<session>.jsonl``).

One API response is spread over several lines (one per content block, the same
``message.id``) and parallel tool results are one line each: consecutive turns of one role are
merged. Progress, file-history and system lines are skipped; ``compact_boundary`` lines become
compaction records and the summary message that follows (``isCompactSummary``) is marked (a
summary without a boundary is a compaction too); ``microcompact_boundary`` lines (old tool
results cleared in place) are recorded with the calls they cleared.
Subagents (Task calls, compaction summaries) are conversations of their own, each with its own
requests and bill: their own ``<session>/subagents/agent-<id>.jsonl`` files, ``agent_progress``
lines of the main file and sidechain lines (``isSidechain``), grouped by agent
(``ctxlab.io.formats.claude_code.subagents``); the main thread keeps the Task's real result, and
``load(path, episode=N)`` opens the N-th subagent (``meta["subagents"]`` lists them, each with
the parent's call that started it). A response's usage is taken from the line that carries its
final figures (the most output), not its first line. Claude Code does not record its system
prompt or tool schemas.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._build import EMPTY_USAGE, ConversationBuilder, anthropic_block
from ctxlab.io._cache_split import split_usage
from ctxlab.io.formats.claude_code.compactions import boundary as _boundary
from ctxlab.io.formats.claude_code.compactions import mark_summary as _mark_summary
from ctxlab.messages import ProviderUsage
from ctxlab.messages._usage import token_count

__all__ = ["from_claude_code", "is_claude_code_line"]

_LINE_TYPES = {"user", "assistant", "progress", "system", "file-history-snapshot", "summary"}


def is_claude_code_line(record: Any) -> bool:
    """Whether a decoded JSONL line looks like a Claude Code session line: a typed record with
    Claude Code's ids. Its own line types, or any other carrying a ``sessionId`` (newer
    versions add kinds — ``queue-operation``, ``attachment``, ``custom-title`` — that a file
    may open with)."""
    if not isinstance(record, Mapping) or not isinstance(record.get("type"), str):
        return False
    if record["type"] in _LINE_TYPES:
        return "sessionId" in record or "messageId" in record or "leafUuid" in record
    return isinstance(record.get("sessionId"), str) and "role" not in record


def _usage(
    message: Mapping[str, Any], builder: ConversationBuilder, where: str, number: int
) -> ProviderUsage | None:
    # The API's usage as Claude Code copies it, with the TTL split of its cache writes.
    usage = message.get("usage")
    if not isinstance(usage, Mapping):
        return None
    keys = (
        "input_tokens",
        "output_tokens",
        "cache_read_input_tokens",
        "cache_creation_input_tokens",
    )
    try:
        counts = ProviderUsage(*(token_count(usage.get(key), key) for key in keys))
    except ValueError as exc:
        msg = f"{where} line {number}: {exc}"
        raise MessageFormatError(msg) from exc
    split, trusted = split_usage(counts, usage)
    builder.cache_split(split, trusted)
    return split


def _blocks(content: Any) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    if not isinstance(content, list):
        return []
    return [anthropic_block(block) for block in content if isinstance(block, Mapping)]


def from_claude_code(
    records: Iterable[tuple[int, Any]], where: str, *, sidechains: bool = False
) -> tuple[ConversationBuilder, dict[str, Any]]:
    """The conversation of (line number, decoded line) pairs, and the meta learned on the way.

    Every line that is not a message is counted in ``meta["skipped"]`` by its kind (progress,
    file-history snapshots, queue operations, other system lines, attachments, sidechain lines
    left out, lines of an unknown shape). A response's usage is the one its lines end on:
    Claude Code writes the usage on every line of a response, and only the last carries its
    whole output (`_Responses`)."""
    builder = ConversationBuilder(where, unit="line")
    meta: dict[str, Any] = {"source": "claude_code", "compactions": []}
    models: list[str] = []
    responses = _Responses(builder)
    # The model of each reply with usage, by the reply's rank (not its message index, which
    # repairs may shift): a session can switch models (``/model``).
    reply_models: dict[str, str] = {}
    for number, line in records:
        found = _message_line(
            line, builder, meta["compactions"], sidechains, f"{where} line {number}"
        )
        if found is None:
            continue
        kind, record, message = found
        meta.setdefault("session_id", record.get("sessionId"))
        if kind != "assistant":
            _user_line(builder, record, message, meta["compactions"])
            continue
        model = message.get("model")
        if isinstance(model, str) and model and model not in models:
            models.append(model)
        turn = _reply_line(responses, record, message, where, number)
        if turn is not None and isinstance(model, str) and model:
            reply_models[str(responses.rank[turn])] = model
    responses.finish()
    meta["models"] = models
    meta["reply_models"] = reply_models
    return builder, meta


def _reply_line(
    responses: _Responses,
    record: Mapping[str, Any],
    message: Mapping[str, Any],
    where: str,
    number: int,
) -> int | None:
    """Place assistant line ``number`` in its response: its turn, or None for an empty line of
    a response with no turn yet."""
    builder = responses.builder
    blocks = [
        b
        for b in _blocks(message.get("content"))
        if b.get("type") != "text" or str(b.get("text", "")).strip()
    ]
    # One response is one (message id, request id): a later reply that reuses a message
    # id under another request (a retried or copied reply) is a reply of its own.
    key = f"{message.get('id') or f'line {number}'}|{record.get('requestId') or ''}"
    usage = _usage(message, builder, where, number)
    turn = responses.line(key, blocks, usage, record.get("timestamp"))
    if not blocks:
        # An empty line ("\n\n"): no content. Read for its usage when that is the
        # response's final one (its output complete), else counted skipped.
        if responses.took_usage:
            builder.use()
        else:
            builder.skip("empty reply line")
    return turn


def _user_line(
    builder: ConversationBuilder,
    record: Mapping[str, Any],
    message: Mapping[str, Any],
    compactions: list[dict[str, Any]],
) -> None:
    """A user line: its blocks, the tool's own copy of a result set aside, a compaction's
    summary marked."""
    blocks = _blocks(message.get("content"))
    if "toolUseResult" in record:
        # The tool's own structured copy of its result (a subagent's totals and
        # words): the result itself is the message's tool_result.
        builder.set_aside(record["toolUseResult"], "the tool's own copy of its result")
    if record.get("isCompactSummary") and blocks:
        replies = sum(t["role"] == "assistant" for t in builder.turns)
        _mark_summary(compactions, blocks, replies)
    if not builder.add("user", blocks):
        builder.skip("empty user message")


class _Responses:
    """Where each response's lines go, and the usage it ends on.

    Claude Code writes one line per content block of a response, each with the response's
    usage so far: the input and cache figures are the same on every line, the output grows to
    its final count on the last. So a response's usage is its line with the most output (the
    later one on a tie), whichever line that is — an empty one too."""

    def __init__(self, builder: ConversationBuilder) -> None:
        self.builder = builder
        self.turn: dict[str, int] = {}
        """The turn each response's blocks went to."""
        self.usage: dict[str, ProviderUsage] = {}
        self.rank: dict[int, int] = {}
        """Each assistant turn's rank among the replies (turns are only ever appended)."""
        self.counted: set[tuple[str, int]] = set()
        """The (response, turn) pairs whose usage the census has read: one report a request."""
        self.placed: dict[int, str] = {}
        """The response whose usage each turn carries."""
        self.took_usage = False
        """Whether the last line placed gave its response's usage (the most output so far)."""
        self.empty: set[str] = set()
        """The responses with a line whose usage counts nothing (a synthetic reply's)."""
        self.pending: dict[str, Any] = {}
        """The first line's ``timestamp`` of each response not on a turn yet (an empty line)."""
        self.stamps: dict[int, dict[str, Any]] = {}
        """Each reply turn's responses and the ``timestamp`` of each one's first line."""

    def line(
        self, key: str, blocks: list[dict[str, Any]], usage: ProviderUsage | None, stamp: Any
    ) -> int | None:
        """Place a line of response ``key`` (written at ``stamp``): its turn, or None for an
        empty line of a response with no blocks yet."""
        builder = self.builder
        turn = self.turn.get(key)
        if turn is None:
            self.pending.setdefault(key, stamp)
        if usage is not None and usage.empty:
            # No bill (Claude Code's synthetic replies record every count zero): no usage.
            self.empty.add(key)
            usage = None
        if blocks:
            if turn is not None and self._continues(turn):
                # The same response, its first calls' results recorded in between: its blocks
                # join its own turn, and the results that follow join the results turn.
                builder.add_to(turn, blocks)
            elif turn is not None and turn == len(builder.turns) - 1:
                builder.add("assistant", blocks)
            else:
                # A new response — or a reused id that cannot continue its first reply (a user
                # message came between): a reply of its own, in its place, with its own usage.
                if turn is not None:
                    self.usage.pop(key, None)
                first = stamp if turn is not None else self.pending.pop(key, stamp)
                builder.add("assistant", blocks)
                if not builder.turns or builder.turns[-1]["role"] != "assistant":
                    return None
                turn = self.turn[key] = len(builder.turns) - 1
                self.stamps.setdefault(turn, {})[key] = first
        if turn is not None and turn not in self.rank:
            self.rank[turn] = len(self.rank)
        self.took_usage = False
        if usage is not None:
            best = self.usage.get(key)
            if best is None or usage.output_tokens >= best.output_tokens:
                self.usage[key] = usage
                self.took_usage = True
        if turn is not None and key in self.usage:
            if (key, turn) not in self.counted:
                # One usage report per response, however many of its lines repeat it.
                self.counted.add((key, turn))
                builder.tally.usage_read += 1
                if self.placed.get(turn, key) != key:
                    # Two responses merged in one turn: the later's usage stands.
                    builder._lose_usage("replaced: replies merged in a turn")
                self.placed[turn] = key
            builder.usage[turn] = self.usage[key]
        return turn

    def finish(self) -> None:
        """Date each reply by its response's first line — the response whose usage it carries
        when responses were merged in it — and count the usage of every response that kept no
        block (all its lines empty): read, and lost."""
        for turn, stamps in self.stamps.items():
            owner = self.placed.get(turn)
            first = next(iter(stamps.values()))
            self.builder.reply_time(stamps.get(owner, first) if owner else first, turn=turn)
        lost = len(self.usage.keys() - self.turn.keys())
        if lost:
            self.builder.tally.usage_read += lost
            self.builder._lose_usage("on a reply with nothing kept", lost)
        empty = len(self.empty - self.usage.keys())
        if empty:
            self.builder.tally.usage_read += empty
            self.builder._lose_usage(EMPTY_USAGE, empty)

    def _continues(self, turn: int) -> bool:
        # A response continues across the turn between only when that turn holds nothing but
        # the results of its own calls (run while it was still being written).
        turns = self.builder.turns
        if turn != len(turns) - 2:
            return False
        calls = {b.get("id") for b in turns[turn]["content"] if b.get("type") == "tool_use"}
        between = turns[-1]["content"]
        return bool(between) and all(
            b.get("type") == "tool_result" and b.get("tool_use_id") in calls for b in between
        )


def _message_line(
    record: Any,
    builder: ConversationBuilder,
    compactions: list[dict[str, Any]],
    sidechains: bool,
    where: str,
) -> tuple[str, Mapping[str, Any], Mapping[str, Any]] | None:
    """A line's kind (user or assistant), the line and its message — or None for a line that
    is not one, counted in the census as used (a compaction boundary) or skipped, by kind."""
    if not isinstance(record, Mapping):
        msg = f"{where}: not a JSON object"
        raise MessageFormatError(msg)
    builder.record(_kind_of(record), raw=record)
    if record.get("isSidechain") and not sidechains:
        builder.skip("sidechain")
        return None
    kind = record.get("type")
    if kind == "system":
        _system_line(record, builder, compactions)
        return None
    if kind is None and record.get("role") in ("user", "assistant"):
        record = _plain_message_line(record, builder)
        kind = record.get("type")
    elif not _is_session_line(record):
        # A line another tool wrote into the file (a meta line, a marker): not the session's,
        # counted — never a reason to refuse the rest.
        builder.skip("line of another tool")
        return None
    if kind not in ("user", "assistant"):
        builder.skip(_kind_of(record))
        return None
    message = record.get("message")
    if not isinstance(message, Mapping):
        builder.skip(f"{kind} line without a message object")
        return None
    return str(kind), record, message


def _system_line(
    record: Mapping[str, Any], builder: ConversationBuilder, compactions: list[dict[str, Any]]
) -> None:
    # A compaction boundary is recorded; any other system line is counted.
    boundary = _boundary(record, sum(t["role"] == "assistant" for t in builder.turns))
    if boundary is not None:
        compactions.append(boundary)
        builder.use()
        for key in ("compactMetadata", "microcompactMetadata"):
            # Token counts of the context it compacted (kept on the compaction): not a bill.
            builder.set_aside(record.get(key), "a compaction's context size")
    else:
        builder.skip(f"system {record.get('subtype') or 'line'}")


def _is_session_line(record: Mapping[str, Any]) -> bool:
    # Claude Code's own lines, and the message lines of a subagent's progress (which carry no
    # session id of their own).
    return is_claude_code_line(record) or (
        record.get("type") in ("user", "assistant") and isinstance(record.get("message"), Mapping)
    )


def _plain_message_line(
    record: Mapping[str, Any], builder: ConversationBuilder
) -> Mapping[str, Any]:
    # A message written in the plain ``{role, content}`` shape among Claude Code's lines (a tool
    # that appended to the file): read as a message, not lost.
    builder.notes["plain_message_lines"] = builder.notes.get("plain_message_lines", 0) + 1
    return {"type": record["role"], "message": record}


def _kind_of(record: Mapping[str, Any]) -> str:
    # What a line that is not a message is, for meta["skipped"].
    kind = record.get("type")
    if kind == "progress":
        data = record.get("data")
        sub = data.get("type") if isinstance(data, Mapping) else None
        return f"progress {sub}" if sub else "progress"
    if isinstance(kind, str):
        return kind
    return "line of an unknown shape"
