"""When do two branches' contexts part? Each request is read as a *signature* — what the model
is shown, with what differs between two runs of the same behaviour taken out — and two runs'
signatures are compared step by step.

Taken out: tool-call ids (numbered in order of first appearance within the request, so
``toolu_01…`` and ``call_7…`` for the same call read alike, in the text that names them too —
an offloaded result's file name holds its call's id and a hash of it) and each run's own
workspace folder (offload hints name the file's path); and the usage notice's count of the
context's tokens — a figure of the rest of the request, which is compared itself, that moves
by a token or two with how a folder's path or an id tokenizes. Everything else counts: the System text, the tool names,
every message's text, tool inputs and results, errors.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from ctxlab.exceptions import UsageError
from ctxlab.messages import ToolResultBlock, ToolUseBlock
from ctxlab.messages._request import ModelRequest
from ctxlab.pipeline._offload import safe_name
from ctxlab.pipeline._stages import usage_notice
from ctxlab.util._checks import instance_of, sequence_of, shown, whole_number

__all__ = ["Signature", "first_difference", "signature"]

Signature = tuple[object, ...]
_OFFLOADED = re.compile(r"(<call \d+>)-[0-9a-f]{12}\b")


def _usage_line() -> tuple[re.Pattern[str], str]:
    # Built from the notice itself, so its wording can change: its first sentence with the
    # total and the share as any number (the window kept: it is the model's), and that
    # sentence with them taken out.
    sentence = usage_notice(1111, 2222, 3333, tool_enabled=False).split(". ")[0]
    pattern = re.escape(sentence).replace("1111", r"\d+").replace("2222", r"(\d+)")
    pattern = pattern.replace("50%", r"\d+%")
    return re.compile(pattern), sentence.replace("1111", "<tokens>").replace("50%", "<share>")


_USAGE, _USAGE_SAID = _usage_line()


def signature(request: ModelRequest, folders: Iterable[str] = ()) -> Signature:
    """What the model is shown by ``request``, comparable across runs (see the module)."""
    instance_of(request, ModelRequest, "request", "a ModelRequest (e.g. one of run.requests)")
    folders = sequence_of(folders, str, "folders", "a list of folder paths as text")
    ids: dict[str, str] = {}

    def canonical(tool_id: str) -> str:
        return ids.setdefault(tool_id, f"<call {len(ids) + 1}>")

    for message in request.messages:
        for block in message.content:
            if isinstance(block, ToolUseBlock):
                canonical(block.id)
            elif isinstance(block, ToolResultBlock):
                canonical(block.tool_use_id)
    # Longest first: an id that contains another is replaced whole. An offloaded result's
    # file is named by its call's id (made safe for a file name) and a hash of that id.
    named = {**{safe_name(i)[:80]: c for i, c in ids.items()}, **ids}
    swaps = sorted(named.items(), key=lambda pair: -len(pair[0]))
    swaps += [(folder, "<workspace>") for folder in folders if folder]

    def clean(text: str) -> str:
        for old, new in swaps:
            if old in text:
                text = text.replace(old, new)
        text = _OFFLOADED.sub(r"\1-<hash>", text) if "<call " in text else text
        return _USAGE.sub(lambda m: _USAGE_SAID.replace("2222", m.group(1)), text)

    messages: list[object] = []
    for message in request.messages:
        blocks: list[object] = []
        for block in message.content:
            if isinstance(block, ToolUseBlock):
                blocks.append(("use", ids[block.id], block.name, clean(block.input_json)))
            elif isinstance(block, ToolResultBlock):
                result = (ids[block.tool_use_id], clean(block.text), bool(block.is_error))
                blocks.append(("result", *result))
            else:
                blocks.append(("block", clean(block.model_dump_json())))
        messages.append((message.role, tuple(blocks)))
    return (clean(request.system), tuple(t.name for t in request.tools), tuple(messages))


def first_difference(
    one: Sequence[Signature | None], other: Sequence[Signature | None], start: int = 0
) -> int | None:
    """The first position from ``start`` where two runs' signatures differ, or where one run
    has a request and the other has none; None when they agree throughout. A failed
    preparation (None) differs from every request."""
    for name, run in (("one", one), ("other", other)):
        if isinstance(run, str | bytes) or not isinstance(run, Sequence):
            msg = f"{name} must be a list of signatures (fork.signature), got {shown(run)}"
            raise UsageError(msg)
    start = whole_number(start, "start")
    for position in range(start, max(len(one), len(other))):
        a = one[position] if position < len(one) else None
        b = other[position] if position < len(other) else None
        if a is None or b is None or a != b:
            if a is None and b is None and position < min(len(one), len(other)):
                continue  # both failed at this step: alike
            return position
    return None
