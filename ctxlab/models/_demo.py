"""`DemoModel`: an offline, deterministic stand-in for a coding model.

It works on ctxlab's sample project (``ctxlab.demo``) like a real coding agent: it plans with
``todo_write``, lists and reads files, greps, runs the tests (a real subprocess, through the
``run_tests`` tool), edits the buggy line, re-runs the tests and reports. It decides from what the
request shows — the tool results it gets back are real — and remembers the facts it noticed, as a
model's own notes would, so that it keeps going after its context was compacted. Summary requests
get an extractive summary (paths, commands and errors verbatim).

Its default window is small (8,000 tokens) so that a session shows truncation, offload and
compaction within seconds.
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import uuid
from collections.abc import Callable, Mapping
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
    local_response,
)
from ctxlab.models._demo_reading import file_named, run_verdict
from ctxlab.pipeline import SummaryRequest, extractive_summarizer
from ctxlab.tokens import ApproximateCounter

__all__ = ["DEMO_MODEL", "MADE_UP_USAGE", "DemoModel", "made_up_usage"]

DEMO_MODEL = "ctxlab-demo"
"""The demo model's name, as its responses and the transcripts of its sessions carry it."""
MADE_UP_USAGE = (
    "the demo model's usage, which it makes up (an approximate count of the request it was "
    "sent): no provider billed it, so figures calibrated on it show the mechanism, not a "
    "provider's tokenizer"
)
"""What every view that calibrates on a demo session's usage says of it."""


def made_up_usage(meta: Mapping[str, Any]) -> bool:
    """Whether the usage of a session whose transcript carries ``meta`` (its ``model`` or
    ``models``) is the demo model's made-up count rather than a provider's bill."""
    models = meta.get("models")
    names = [meta.get("model"), *(models if isinstance(models, list | tuple) else ())]
    return DEMO_MODEL in names


_FIX_WORDS = ("fix", "bug", "fail", "test", "broken", "repair")
_NEEDED = {"list_files", "read_file", "grep", "edit_file", "run_tests"}
_BUGGY = "Decimal(amount_cents * percent) / 10)"

Step = Callable[[ModelRequest], list[Any] | None]


def _latest_prompt(request: ModelRequest) -> str | None:
    """The user's latest own words (not tool results, material, summaries or notes)."""
    for message in reversed(request.messages):
        if not isinstance(message, UserMessage):
            continue
        for block in message.content:
            if isinstance(block, TextBlock) and not block.text.lstrip().startswith("<"):
                return block.text
    return None


def _result_of(request: ModelRequest, name: str, match: str = "") -> str | None:
    """The text of the latest result of a call to ``name`` whose input mentions ``match``."""
    results: dict[str, ToolResultBlock] = {}
    for message in request.messages:
        if isinstance(message, UserMessage):
            for result in message.tool_results:
                results[result.tool_use_id] = result
    for message in reversed(request.messages):
        if isinstance(message, AssistantMessage):
            for use in reversed(message.tool_uses):
                if use.name == name and match in use.input_json and use.id in results:
                    return results[use.id].text
    return None


class DemoModel(Model):
    """The offline demo model (no API key, no network).

    Args:
        context_window: Its window; small by default so compaction shows up early.
        delay: Seconds to "think" before each answer (lets notebook panels animate).
    """

    def __init__(self, *, context_window: int = 8_000, delay: float = 0.0) -> None:
        self.name = DEMO_MODEL
        self.context_window = context_window
        self.delay = delay
        self._usage_counter = ApproximateCounter()
        self._prompt: str | None = None
        self._plan: list[Step] = []
        self._notes: dict[str, Any] = {}
        self._ids = 0
        # Ids must stay unique when a session is resumed by another process.
        self._salt = uuid.uuid4().hex[:6]

    # -- the model interface ------------------------------------------------------------------

    async def request(
        self,
        request: ModelRequest,
        *,
        purpose: Purpose = "reasoning",
        on_text: TextCallback | None = None,
    ) -> ModelResponse:
        checked_call(request, on_text)
        if self.delay:
            await asyncio.sleep(self.delay)
        prompt = _latest_prompt(request)
        if prompt is not None and prompt != self._prompt:
            self._prompt = prompt
            self._plan = self._make_plan(prompt, request)
        blocks: list[Any] | None = None
        while blocks is None:
            step = self._plan.pop(0) if self._plan else self._final_report
            blocks = step(request)
        message = AssistantMessage(content=tuple(blocks))
        if on_text is not None:
            for block in blocks:
                if isinstance(block, TextBlock):
                    for word in re.findall(r"\S+\s*", block.text):
                        on_text(word)
        return local_response(request, message, self._usage_counter, self.name)

    def branch(self) -> DemoModel:
        """A new demo model for a fork's branch: this one's plan and notes are its own memory
        of this session, which a branch does not share (it plans again from what it sees)."""
        return DemoModel(context_window=self.context_window, delay=self.delay)

    async def summarize(
        self, summary: SummaryRequest, *, context: ModelRequest | None = None
    ) -> Mapping[str, Any]:
        return await extractive_summarizer(summary)

    # -- planning -----------------------------------------------------------------------------

    def _call(self, name: str, **arguments: Any) -> ToolUseBlock:
        self._ids += 1
        digest = hashlib.sha256(f"{self._salt}:{self._ids}:{name}".encode()).hexdigest()[:12]
        return ToolUseBlock(id=f"toolu_demo_{self._ids:03d}_{digest}", name=name, input=arguments)

    def _make_plan(self, prompt: str, request: ModelRequest) -> list[Step]:
        tools = {t.name for t in request.tools}
        if not tools >= _NEEDED:
            return [self._no_tools]
        self._notes = {}
        if any(word in prompt.lower() for word in _FIX_WORDS):
            return [
                self._plan_todos,
                self._list,
                self._readme_and_tests,
                self._grep,
                self._read_source,
                self._read_helpers,
                self._read_tests,
                self._todo_located,
                self._maybe_compress,
                self._edit,
                self._rerun,
                self._todo_done,
                self._final_report,
            ]
        named = file_named(prompt)
        if named:
            self._notes["file"] = named
            return [self._read_named, self._show_named]
        return [self._list, self._read_readme, self._describe]

    def _todos(self, request: ModelRequest, statuses: list[str]) -> ToolUseBlock | None:
        if not any(t.name == "todo_write" for t in request.tools):
            return None
        items = [
            "Reproduce: run the test suite",
            "Locate the failing code",
            "Fix the bug",
            "Verify: re-run the tests",
        ]
        return self._call(
            "todo_write",
            todos=[
                {"content": item, "status": status}
                for item, status in zip(items, statuses, strict=True)
            ],
        )

    # -- steps (each returns the turn's blocks, or None to skip) ------------------------------

    def _no_tools(self, request: ModelRequest) -> list[Any]:
        return [
            TextBlock(
                text="I am ctxlab's offline demo model. I work on the sample project through its "
                "workspace tools (list_files, read_file, grep, edit_file, run_tests); build the "
                "agent with ctxlab.demo.demo_agent() to give them to me."
            )
        ]

    def _plan_todos(self, request: ModelRequest) -> list[Any] | None:
        todo = self._todos(request, ["in_progress", "pending", "pending", "pending"])
        if todo is None:
            return None
        return [TextBlock(text="I'll reproduce the failure first, then locate and fix it."), todo]

    def _list(self, request: ModelRequest) -> list[Any]:
        return [
            TextBlock(text="Let me see the project's files."),
            self._call("list_files", path="."),
        ]

    def _readme_and_tests(self, request: ModelRequest) -> list[Any]:
        return [
            TextBlock(text="Reading the README and running the tests in parallel."),
            self._call("read_file", path="README.md"),
            self._call("run_tests"),
        ]

    def _read_readme(self, request: ModelRequest) -> list[Any]:
        return [self._call("read_file", path="README.md")]

    def _grep(self, request: ModelRequest) -> list[Any]:
        output = _result_of(request, "run_tests") or ""
        self._notes["before"] = run_verdict(output)
        failing = re.findall(r"^(test_\w+) \(.*\) \.\.\. FAIL", output, re.M)
        failing += re.findall(r"^FAIL: (test_\w+)", output, re.M)
        header = re.search(r"failing: ([\w, ]+)$", output.split("\n", 1)[0])
        failing += header.group(1).split(", ") if header else []
        self._notes["failing"] = sorted(set(failing))
        return [
            TextBlock(
                text=f"The suite reports {self._notes['before']}. The failures are about "
                "discounts; let me find every use of apply_discount, the pricing log included."
            ),
            self._call("grep", pattern="apply_discount", path="."),
        ]

    def _read_source(self, request: ModelRequest) -> list[Any]:
        hits = _result_of(request, "grep") or ""
        self._notes["log_lines"] = sum(1 for line in hits.splitlines() if line.startswith("logs/"))
        return [
            TextBlock(text="apply_discount is defined in ledger/totals.py; reading it."),
            self._call("read_file", path="ledger/totals.py"),
        ]

    def _read_helpers(self, request: ModelRequest) -> list[Any]:
        self._note_buggy_line(request)
        return [
            TextBlock(
                text="totals.py rounds with ledger.money.round_half_up and the report calls "
                "apply_discount too; reading both to be sure the fix belongs in totals.py."
            ),
            self._call("read_file", path="ledger/money.py"),
            self._call("read_file", path="ledger/report.py"),
        ]

    def _note_buggy_line(self, request: ModelRequest) -> None:
        source = _result_of(request, "read_file", "totals.py") or ""
        for line in source.splitlines():
            content = re.sub(r"^\s*\d+  ", "", line)
            if _BUGGY in content:
                self._notes["buggy_line"] = content

    def _read_tests(self, request: ModelRequest) -> list[Any]:
        return [
            TextBlock(text="And the tests that pin the expected behaviour."),
            self._call("read_file", path="tests/test_totals.py"),
        ]

    def _todo_located(self, request: ModelRequest) -> list[Any] | None:
        todo = self._todos(request, ["completed", "completed", "in_progress", "pending"])
        if todo is None:
            return None
        found = self._notes.get("buggy_line")
        text = (
            f"Found it: `{found.strip()}` divides by 10, so a 15% discount takes 150% off. "
            "Percentages are 0-100 (README), so it must divide by 100."
            if found
            else "I could not find the faulty division; the code may already be fixed."
        )
        return [TextBlock(text=text), todo]

    def _maybe_compress(self, request: ModelRequest) -> list[Any] | None:
        offered = any(t.name == "CompressContext" for t in request.tools)
        notice = any(
            "CompressContext" in getattr(b, "text", "")
            for m in request.messages[-2:]
            for b in m.content
        )
        if not (offered and notice):
            return None
        return [
            TextBlock(text="The context is filling up; compressing before the edit."),
            self._call(
                "CompressContext",
                instructions="Keep the failing test names, ledger/totals.py and the buggy line.",
            ),
        ]

    def _edit(self, request: ModelRequest) -> list[Any] | None:
        line = self._notes.get("buggy_line")
        if not line:
            return None
        fixed = line.replace("/ 10)", "/ 100)")
        return [
            self._call("edit_file", path="ledger/totals.py", old=line.strip(), new=fixed.strip())
        ]

    def _rerun(self, request: ModelRequest) -> list[Any]:
        edit = _result_of(request, "edit_file") or "(no edit)"
        self._notes["edit"] = edit
        return [TextBlock(text="Re-running the tests."), self._call("run_tests")]

    def _todo_done(self, request: ModelRequest) -> list[Any] | None:
        self._notes["after"] = run_verdict(_result_of(request, "run_tests") or "")
        return (
            None
            if (todo := self._todos(request, ["completed"] * 4)) is None
            else [TextBlock(text="All done; updating the plan."), todo]
        )

    def _final_report(self, request: ModelRequest) -> list[Any]:
        notes = self._notes
        if "after" not in notes:
            notes["after"] = run_verdict(_result_of(request, "run_tests") or "")
        failing = ", ".join(notes.get("failing", [])) or "none"
        lines = [
            "Fixed the discount bug in ledger/totals.py: apply_discount divided by 10 instead of "
            "100, so every discount was ten times too large."
            if notes.get("buggy_line")
            else "I found no faulty division in ledger/totals.py.",
            f"Before: {notes.get('before', 'not run')} (failing: {failing}).",
            f"After: {notes['after']}.",
        ]
        if notes.get("log_lines"):
            lines.append(
                f"logs/pricing.log holds {notes['log_lines']} discount computations made with the "
                "bug; those invoices need to be re-issued."
            )
        self._plan = []
        return [TextBlock(text="\n".join(lines))]

    def _read_named(self, request: ModelRequest) -> list[Any]:
        return [self._call("read_file", path=self._notes["file"])]

    def _show_named(self, request: ModelRequest) -> list[Any]:
        content = _result_of(request, "read_file", self._notes["file"]) or "(nothing read)"
        lines = len(content.splitlines())
        self._plan = []
        return [
            TextBlock(
                text=f"{self._notes['file']} has {lines} lines; its content is in the read_file "
                "result above (shown as text, whatever it contains)."
            )
        ]

    def _describe(self, request: ModelRequest) -> list[Any]:
        readme = _result_of(request, "read_file", "README") or ""
        text = re.sub(r"^[ \t]*+\d++  ", "", readme, flags=re.MULTILINE)
        paragraph = next((p for p in text.split("\n\n") if p and not p.startswith("#")), text)
        files = len((_result_of(request, "list_files") or "").splitlines())
        self._plan = []
        return [
            TextBlock(
                text=f"{paragraph.strip()}\n\nThe workspace holds {files} files. Ask me to fix "
                "the failing tests to see the whole loop."
            )
        ]
