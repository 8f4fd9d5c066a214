"""OpenCode sessions: ``opencode export <session id>`` output, or the session as OpenCode keeps
it in ``~/.local/share/opencode/storage`` (``session/<project>/<session id>.json``, its messages
in ``message/<session id>/``, their parts in ``part/<message id>/``).

Read from OpenCode's own code (sst/opencode, now anomalyco/opencode, 2026:
``packages/opencode/src/session/message-v2.ts`` — ``User``, ``Assistant``, the parts, and
``toModelMessages``, which turns the stored messages into each request —,
``src/cli/cmd/export.ts``, ``src/session/index.ts`` — ``getUsage``). A message is ``{info,
parts}``; an assistant message is one agent turn, whose ``step-start`` parts begin its model
calls (steps): each step is one request, its ``step-finish`` part holding that call's
``tokens`` (``input`` — the cache left out —, ``output``, ``reasoning``, ``cache.read``,
``cache.write``). Parts as the request gets them: ``text`` (a user's ``ignored`` text is not
sent), ``reasoning`` (thinking), ``file`` (an image or a document; plain text and folders are
sent as text parts beside them), ``tool`` (the call, and its result from its ``state``:
``completed`` — "[Old tool result content cleared]" once OpenCode compacted it —, ``error``,
or ``pending``/``running``: "[Tool execution was interrupted]"), ``compaction`` ("What did we do
so far?"), ``subtask``. An assistant message that failed (``info.error``, other than an
interrupted one with content) is not sent and is counted. A summary reply (``summary: true``)
after a compaction part is OpenCode's own compaction, recorded as such. Snapshots, patches,
retries and agent parts are counted skipped. The census counts the session's info, each
message and each part a record (of a stored session, each file: ``session file``,
``message file (user)``, ``part file (tool)``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._build import ConversationBuilder, as_mapping, image_block, tool_result
from ctxlab.messages import ProviderUsage

__all__ = ["from_opencode", "is_opencode_export", "is_opencode_session_info"]

_CLEARED = "[Old tool result content cleared]"
_INTERRUPTED = "[Tool execution was interrupted]"
_COMPACTION = "What did we do so far?"
_SUBTASK = "The following tool was executed by the user"


def is_opencode_export(value: Any) -> bool:
    """``opencode export`` output: the session's ``info`` and ``messages`` of ``{info, parts}``."""
    if not isinstance(value, Mapping) or not isinstance(value.get("messages"), list):
        return False
    info = value.get("info")
    if not isinstance(info, Mapping) or not str(info.get("id") or "").startswith("ses"):
        return False
    return all(
        isinstance(m, Mapping) and "info" in m and "parts" in m for m in value["messages"][:20]
    )


def is_opencode_session_info(value: Any) -> bool:
    """A session as OpenCode stores it (``storage/session/<project>/<id>.json``)."""
    return (
        isinstance(value, Mapping)
        and str(value.get("id") or "").startswith("ses_")
        and "projectID" in value
        and isinstance(value.get("time"), Mapping)
    )


def from_opencode(
    messages: Sequence[Any], where: str, *, stored: bool = False
) -> tuple[ConversationBuilder, str, dict[str, Any]]:
    """The conversation, System text and notes of a session's ``{info, parts}`` messages. The
    census counts the session's info, each message and each part a record; ``stored``: they are
    files of OpenCode's storage (a session file, message files, part files), and the kinds say
    so."""
    builder = ConversationBuilder(where, unit="record")
    noun = " file" if stored else ""
    builder.record(f"session{noun}" if stored else "info")
    builder.use()  # read for the transcript's metadata
    system: list[str] = []
    models: list[str] = []
    compactions: list[dict[str, Any]] = []
    for index, message in enumerate(messages):
        info = as_mapping(message.get("info")) if isinstance(message, Mapping) else {}
        parts = message.get("parts") if isinstance(message, Mapping) else None
        if not info or not isinstance(parts, list):
            msg = f"{where} message {index}: expected {{info, parts}} (an OpenCode message)"
            raise MessageFormatError(msg)
        builder.record(f"message{noun} ({info.get('role')})")
        read = _Parts(builder, f"part{noun}")
        if info.get("role") == "user":
            if isinstance(info.get("system"), str) and info["system"] not in system:
                system.append(info["system"])
            builder.use()  # read for the order of its parts (and its System text)
            _user(read, parts)
        elif info.get("role") == "assistant":
            model = f"{info.get('providerID')}/{info.get('modelID')}"
            if info.get("modelID") and model not in models:
                models.append(model)
            if info.get("summary") is True:
                compactions.append(
                    {
                        "kind": "compact",
                        "trigger": "unknown",
                        "replies_before": sum(t["role"] == "assistant" for t in builder.turns),
                        "summary_head": _COMPACTION,
                    }
                )
            _assistant(read, info, parts)
        else:
            builder.skip(f"message of role {info.get('role')!r}")
            read.skip_all(parts, "part of a message of another role")
    notes: dict[str, Any] = {"models": models} if models else {}
    if compactions:
        notes["compactions"] = compactions
    return builder, "\n\n".join(system), notes


class _Parts:
    """The census of a message's parts: each part a record, used or skipped as it is read."""

    def __init__(self, builder: ConversationBuilder, noun: str) -> None:
        self.builder = builder
        self.noun = noun

    def open(self, part: Any) -> str | None:
        """Start the record of ``part``; its type."""
        kind = as_mapping(part).get("type")
        self.builder.record(f"{self.noun} ({kind or 'unreadable'})")
        return kind if isinstance(kind, str) else None

    def skip_all(self, parts: list[Any], reason: str) -> None:
        """Each of ``parts`` read and skipped; a step's usage among them counted lost (a call
        billed for a reply the conversation does not hold)."""
        for part in parts:
            kind = self.open(part)
            self.builder.skip(reason)
            if kind == "step-finish" and _usage(part.get("tokens")) is not None:
                self.builder.lose_usage(f"{reason}: its step's usage")


def _user(read: _Parts, parts: list[Any]) -> None:
    builder = read.builder
    blocks: list[dict[str, Any]] = []
    for part in parts:
        kind = read.open(part)
        if kind == "text":
            if part.get("ignored"):
                builder.skip("ignored text part")
            elif str(part.get("text") or "").strip():
                blocks.append({"type": "text", "text": str(part["text"])})
                builder.use()
            else:
                builder.skip("empty text part")
        elif kind == "file":
            if part.get("mime") in ("text/plain", "application/x-directory"):
                builder.skip("file part (sent as its text part)")
            else:
                blocks.append(_file(part))
                builder.use()
        elif kind == "compaction":
            blocks.append({"type": "text", "text": _COMPACTION})
            builder.use()
        elif kind == "subtask":
            blocks.append({"type": "text", "text": _SUBTASK})
            builder.use()
        else:
            builder.skip(f"{kind or 'unreadable'} part")
    if blocks:
        builder.add("user", blocks)
    else:
        builder.leave_out("message without a part sent")


def _assistant(read: _Parts, info: Mapping[str, Any], parts: list[Any]) -> None:
    builder = read.builder
    error = as_mapping(info.get("error"))
    sent = [p for p in parts if as_mapping(p).get("type") not in ("step-start", "reasoning")]
    if error and not (error.get("name") == "MessageAbortedError" and sent):
        builder.skip("failed reply (not sent again)")
        builder.set_aside_field(info, "tokens", "failed reply (not sent again)")
        read.skip_all(parts, "part of a failed reply")
        return
    builder.use()  # read for the order of its steps (and its usage when no step has any)
    steps: list[list[Any]] = [[]]
    for part in parts:
        if as_mapping(part).get("type") == "step-start":
            read.open(part)
            builder.use()  # where a model call begins
            if steps[-1]:
                steps.append([])
            continue
        steps[-1].append(part)
    finished = any(as_mapping(p).get("type") == "step-finish" for p in parts)
    fallback = info.get("tokens") if len(steps) == 1 and not finished else None
    if fallback is None:
        # The message's tokens total its steps', each billed on its own step-finish.
        read.builder.set_aside_field(info, "tokens", "a reply's total over its steps")
    created = as_mapping(info.get("time")).get("created")
    for number, step in enumerate(steps):
        # A step's own step-finish, its last part: a step that has none (or a finish without
        # tokens) takes no other step's usage.
        tokens = next(
            (
                as_mapping(p).get("tokens")
                for p in reversed(step)
                if as_mapping(p).get("type") == "step-finish"
                and isinstance(as_mapping(p).get("tokens"), Mapping)
            ),
            fallback,
        )
        _step(read, step, _usage(tokens), _started(step, created if number == 0 else None))


def _started(parts: list[Any], created: Any) -> Any:
    """When a step (a model call) began, in ms: its first part that says when it started (a
    text's or reasoning's ``time.start``, a call's ``state.time.start``; step parts say
    nothing), else — for a message's first step — the message's ``time.created``."""
    for part in parts:
        part = as_mapping(part)
        holder = as_mapping(part.get("state")) if part.get("type") == "tool" else part
        start = as_mapping(holder.get("time")).get("start")
        if start is not None:
            return start
    return created


def _step(read: _Parts, parts: list[Any], usage: ProviderUsage | None, started: Any) -> None:
    """One model call (begun at ``started``, ms): its reply, and the results of its calls."""
    builder = read.builder
    blocks: list[dict[str, Any]] = []
    results: list[dict[str, Any]] = []
    for part in parts:
        kind = read.open(part)
        if kind in ("text", "reasoning") and not str(part.get("text") or "").strip():
            builder.skip(f"empty {kind} part")
        elif kind == "text":
            blocks.append({"type": "text", "text": str(part["text"])})
        elif kind == "reasoning":
            signature = as_mapping(as_mapping(part.get("metadata")).get("anthropic")).get(
                "signature"
            )
            blocks.append(
                {
                    "type": "thinking",
                    "thinking": str(part["text"]),
                    "signature": signature if isinstance(signature, str) else "",
                }
            )
        elif kind == "tool":
            use, result = _tool(part)
            blocks.append(use)
            results.append(result)
        elif kind == "file":
            # A reply's file (a generated image): kept whole as a provider block, since a reply
            # holds no image block (an image here made the whole session fail to load).
            blocks.append({"type": "provider", "data": dict(part)})
        elif kind == "step-finish" and isinstance(part.get("tokens"), Mapping):
            pass  # the step's usage, read by the caller
        else:
            builder.skip(f"{kind or 'unreadable'} part")
        builder.use()  # (no-op when skipped above)
    if not blocks:
        if usage is not None:
            builder.lose_usage("on a step without output")
        builder.leave_out("step without output")
        return
    if builder.add("assistant", blocks, usage):
        builder.reply_time(started, "ms", replace=usage is not None)
    builder.add("user", results)


def _tool(part: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    state = as_mapping(part.get("state"))
    call_id = str(part.get("callID") or part.get("id") or "")
    inputs = state.get("input")
    use = {
        "type": "tool_use",
        "id": call_id,
        "name": str(part.get("tool") or "tool"),
        "input": dict(inputs) if isinstance(inputs, Mapping) else {},
    }
    status = state.get("status")
    error = True
    if status == "completed":
        compacted = as_mapping(state.get("time")).get("compacted")
        text = _CLEARED if compacted else str(state.get("output") or "")
        error = False
    elif status == "error":
        interrupted = as_mapping(state.get("metadata"))
        if interrupted.get("interrupted") is True and isinstance(interrupted.get("output"), str):
            text, error = interrupted["output"], False
        else:
            text = str(state.get("error") or "error")
    else:
        text = _INTERRUPTED
    return use, tool_result(call_id, text, is_error=error)


def _file(part: Mapping[str, Any]) -> dict[str, Any]:
    url = part.get("url")
    if str(part.get("mime") or "").startswith("image/") and isinstance(url, str):
        return image_block(url)
    return {"type": "provider", "data": dict(part)}


def _usage(tokens: Any) -> ProviderUsage | None:
    if not isinstance(tokens, Mapping):
        return None
    cache = as_mapping(tokens.get("cache"))
    # OpenCode stores input without the cache (its getUsage takes the cache out of
    # OpenAI-style counts); reasoning is billed as output.
    return ProviderUsage(
        tokens.get("input") or 0,
        (tokens.get("output") or 0) + (tokens.get("reasoning") or 0),
        cache.get("read") or 0,
        cache.get("write") or 0,
    )
