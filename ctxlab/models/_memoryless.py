"""`MemorylessModel`: an offline coding model that remembers nothing between requests — each
action is a function of the request alone, so what a context config keeps or drops decides what
it does.

It works the demo project's task (``ctxlab.demo``: a discount bug that fails the tests) with the
workspace tools, reading only the **tool results still in its request** — not the summary of a
compaction (prose to it), not notes of its own (it has none):

1. no test verdict in sight, or an edit in sight with no test run after it: it runs the tests
   (when three runs are in sight and each was cut before its verdict, it gives up);
2. the latest verdict in sight is OK: it replies that the tests pass (the call ends);
3. the tests fail and no grep result in sight shows where ``apply_discount`` is defined: it
   greps for its uses — or, when such a search is in sight but cut before the definition, for
   the definition alone; when that is cut too, it gives up;
4. it knows where the function is but no ``read_file`` result in sight shows the faulty line:
   it reads the file — again if the last read is gone (compacted, or masked: a result with no
   numbered line is out of sight to it) — and, if the reads in sight were cut (truncated)
   before that line, a narrower window from the definition, then a narrower one; when even
   the narrowest read in sight is cut, it gives up and says why;
5. the faulty line is in sight in a read result: it edits that line, exactly as it saw it.

So a config that drops or cuts what the task needs costs steps (a re-read, a second grep) or
the task itself (a give-up), *because of what the request holds*: nothing in it looks at the
config, and the same request always gets the same answer (tool-call ids included: they are
derived from the request). It is a teaching and testing model — the story of one bug, told by
a policy a reader can check by hand — not a model of how a real LLM behaves; run a real model
(`AnthropicModel`, `OpenAIModel`) through the same code for that.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ctxlab.messages import (
    AssistantMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ctxlab.messages._request import ModelRequest
from ctxlab.models._base import (
    Model,
    ModelResponse,
    Purpose,
    TextCallback,
    checked_call,
    emit_text,
    local_response,
)
from ctxlab.pipeline import SummaryRequest, extractive_summarizer
from ctxlab.tokens import ApproximateCounter

__all__ = ["MemorylessModel"]

_TOOLS = {"grep", "read_file", "edit_file", "run_tests"}
_VERDICT = re.compile(
    r"^exit status \d+: Ran \d+ tests?[^,\n]*, (?:OK|FAILED)[^\n;]*", re.MULTILINE
)
_DEFINED = re.compile(r"^([\w./-]+\.py):(\d+): def apply_discount\(", re.MULTILINE)
_NUMBERED = re.compile(r"^ *(\d{1,6})  (.*)$")
_HIT = re.compile(r"^[\w./-]+:\d+: ", re.MULTILINE)
_CUT = "<<<TRUNCATED>>>"
"""The pipeline's mark of a result cut to fit (`ctxlab.pipeline`): the text after it is gone."""
_FAULT = "percent) / 10)"
"""What it recognises as the bug: a percentage divided by 10."""
GREPS = ("apply_discount", "def apply_discount")
"""Its searches for the function, in order: every use, then (when that result is cut before
the definition) the definition alone."""
GIVE_UP = 3
"""Test runs in sight, none of them readable, after which it stops."""
WINDOWS = (400, 8, 5)
"""The read sizes it tries, in lines: the whole file (read_file's default), then narrower
windows starting at the definition."""


@dataclass(frozen=True)
class _Exchange:
    """A tool call in the request and its result (both still in sight)."""

    position: int
    use: ToolUseBlock
    result: ToolResultBlock


def _exchanges(request: ModelRequest) -> list[_Exchange]:
    calls: dict[str, ToolUseBlock] = {}
    found: list[_Exchange] = []
    for position, message in enumerate(request.messages):
        if isinstance(message, AssistantMessage):
            calls.update((u.id, u) for u in message.tool_uses)
        elif isinstance(message, UserMessage):
            for result in message.tool_results:
                use = calls.get(result.tool_use_id)
                if use is not None:
                    found.append(_Exchange(position, use, result))
    return found


def _verdict(exchange: _Exchange) -> str | None:
    match = _VERDICT.search(exchange.result.text)
    return match.group(0).split(": ", 1)[1] if match else None


class MemorylessModel(Model):
    """The offline model for forks: its actions depend only on what its request holds (see the
    module's documentation for its policy). No key, no network, deterministic.

    Args:
        context_window: Its window; small by default (like `DemoModel`'s) so that configs
            differ within a few steps.
    """

    def __init__(self, *, context_window: int = 8_000) -> None:
        self.name = "ctxlab-memoryless"
        self.context_window = context_window
        self._usage_counter = ApproximateCounter()

    async def request(
        self,
        request: ModelRequest,
        *,
        purpose: Purpose = "reasoning",
        on_text: TextCallback | None = None,
    ) -> ModelResponse:
        checked_call(request, on_text)
        message = AssistantMessage(content=tuple(decide(request)))
        emit_text(message, on_text)
        return local_response(request, message, self._usage_counter, self.name)

    async def summarize(
        self, summary: SummaryRequest, *, context: ModelRequest | None = None
    ) -> Mapping[str, Any]:
        return await extractive_summarizer(summary)


def decide(request: ModelRequest) -> list[TextBlock | ToolUseBlock]:
    """The `MemorylessModel`'s answer to ``request``: a pure function of it."""
    if not {t.name for t in request.tools} >= _TOOLS:
        return [
            TextBlock(
                text="I work on the demo project through its workspace tools "
                "(grep, read_file, edit_file, run_tests); give them to me."
            )
        ]
    seen = _exchanges(request)
    call = _Caller(request)
    runs = [e for e in seen if e.use.name == "run_tests" and _verdict(e)]
    edits = [e for e in seen if e.use.name == "edit_file" and not e.result.is_error]
    last_run = runs[-1] if runs else None
    if edits and (last_run is None or last_run.position < edits[-1].position):
        return [TextBlock(text="Edited; re-running the tests."), call("run_tests")]
    if last_run is None:
        unread = sum(e.use.name == "run_tests" for e in seen)
        if unread >= GIVE_UP:
            return [
                TextBlock(
                    text=f"I cannot read the test results: the {unread} runs in my context are "
                    "all cut before their verdict. Stopping."
                )
            ]
        return [TextBlock(text="Running the tests to see what fails."), call("run_tests")]
    verdict = _verdict(last_run) or ""
    if "OK" in verdict:
        done = f"The tests pass: {verdict}."
        if edits:
            done += f" I changed {edits[-1].use.input.get('path')}: a discount percentage was "
            done += "divided by 10 instead of 100."
        return [TextBlock(text=done)]
    if edits:
        return [TextBlock(text=f"The tests still fail after my edit ({verdict}); stopping.")]
    return _locate_and_fix(seen, verdict, call)


def _locate_and_fix(
    seen: list[_Exchange], verdict: str, call: _Caller
) -> list[TextBlock | ToolUseBlock]:
    # A result with no hit and no numbered line was cleared (masked, replaced): out of sight.
    greps = [e for e in seen if e.use.name == "grep" and _HIT.search(e.result.text)]
    defined = next((m for e in reversed(greps) for m in _DEFINED.finditer(e.result.text)), None)
    if defined is None:
        tried = {e.use.input.get("pattern") for e in greps}
        pattern = next((p for p in GREPS if p not in tried), None)
        if pattern is None:
            return [
                TextBlock(
                    text="I cannot see where apply_discount is defined: every search for it in "
                    "my context is cut before the definition. Stopping."
                )
            ]
        return [
            TextBlock(text=f"The tests fail ({verdict}); searching for {pattern!r}."),
            call("grep", pattern=pattern, path="."),
        ]
    return _read_and_edit(seen, defined.group(1), int(defined.group(2)), call)


def _read_and_edit(
    seen: list[_Exchange], path: str, line: int, call: _Caller
) -> list[TextBlock | ToolUseBlock]:
    reads = [
        e
        for e in seen
        if e.use.name == "read_file"
        and e.use.input.get("path") == path
        and not e.result.is_error
        and any(_NUMBERED.match(row) for row in e.result.text.splitlines())
    ]
    for read in reversed(reads):
        fault = _fault_in(read.result.text)
        if fault is not None:
            return [
                TextBlock(text=f"Line {fault[0]} of {path} divides the percentage by 10."),
                call("edit_file", path=path, old=fault[1], new=fault[1].replace("/ 10)", "/ 100)")),
            ]
    if not reads:
        return [
            TextBlock(text=f"apply_discount is defined in {path}; reading it."),
            call("read_file", path=path),
        ]
    if not any(_CUT in e.result.text for e in reads):
        return [TextBlock(text=f"I read {path} and see no faulty division in it. Stopping.")]
    # Every read in sight was cut before the faulty line: a narrower one, if one is left.
    tried = min(int(e.use.input.get("limit", WINDOWS[0])) for e in reads)
    narrower = [size for size in WINDOWS if size < tried]
    if not narrower:
        return [
            TextBlock(
                text=f"I cannot see the line of {path} I must change: each read of it in my "
                f"context is cut before it (the narrowest, {tried} lines). Stopping."
            )
        ]
    return [
        TextBlock(
            text=f"My read of {path} was cut; reading the {narrower[0]} lines from line {line}."
        ),
        call("read_file", path=path, offset=line - 1, limit=narrower[0]),
    ]


def _fault_in(text: str) -> tuple[int, str] | None:
    """The (line number, text) of a numbered line holding the fault, exactly as read."""
    for row in text.splitlines():
        numbered = _NUMBERED.match(row)
        if numbered and _FAULT in numbered.group(2):
            return int(numbered.group(1)), numbered.group(2).strip()
    return None


class _Caller:
    """Makes the answer's tool calls, with ids derived from the request (unique in a session:
    no two requests of one session hold the same messages)."""

    def __init__(self, request: ModelRequest) -> None:
        digest = hashlib.sha256()
        for message in request.messages:
            digest.update(message.model_dump_json().encode())
        self._stem = digest.hexdigest()[:16]
        self._count = 0

    def __call__(self, name: str, **arguments: Any) -> ToolUseBlock:
        self._count += 1
        return ToolUseBlock(id=f"toolu_ml_{self._stem}_{self._count}", name=name, input=arguments)
