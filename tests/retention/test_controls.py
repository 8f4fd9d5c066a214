"""The retention grader against an independent measure written here, on its controls.

The controls are summaries that must score low where they say nothing: an empty summary, a
list-only summary (every argument the span's tool calls were given, nothing else), and a
foreign session's summary. On files and numbers the grader must agree with this module's own
count — a few lines that know nothing of `ctxlab.retention` — within 5 points: an editor's
sub-commands (``str_replace``) and the repository root (``/testbed``) are items any summary of
such a session would "keep", so neither counts.

Sessions are made up in SWE-agent's shape (``str_replace_editor`` on files under
``/testbed`` or a root named for the repository and its version, shell runs) by Hypothesis, and taken from the corpus at a 32k window.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ctxlab import ContextConfig, TiktokenCounter, load_transcript, replay
from ctxlab.messages import (
    AssistantMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ctxlab.retention import measure_retention
from tests.conftest import corpus_files, requires_corpus
from tests.helpers import Message
from tests.strategies import SETTINGS

# ---- the independent measure: files and numbers, counted by this module alone ----

_EXTENSION = r"\.(?:py|js|ts|md|rst|txt|json|toml|ya?ml|cfg|ini|sh|c|h|ex|exs|rb|go|rs|html|css)"
_FILE_WORD = re.compile(r"^(?:~|\.{1,2})?/?(?:[\w.-]+/)*[\w.-]+" + _EXTENSION + "$")
_NUMBER = re.compile(r"(?<![\w.])(?:v?\d+(?:\.\d+)+|\d{2,})(?![\w.]*\w)")
_NAME = re.compile(
    r"(?<![\w.])(?:[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+|_*[a-z][a-z0-9]*(?:_[a-z0-9]+)+"
    r"|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+)(?!\w)"
)
_EDITOR = {"view", "create", "str_replace", "insert", "undo_edit", "str_replace_editor"}
_CONTENT = {"content", "new_str", "old_str", "new_string", "old_string", "file_text", "text"}


def _strings(value: Any, key: str = "") -> Iterable[str]:
    if key in _CONTENT:
        return
    if isinstance(value, str):
        if value.strip() not in _EDITOR:
            yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, k)
    elif isinstance(value, list):
        for v in value:
            yield from _strings(v, key)


def independent_items(span: Sequence[Message]) -> tuple[list[str], list[str]]:
    """(files, numbers) of ``span``: files are paths with an extension passed to a tool or
    named in a shell command (a directory, the root among them, is not a file); numbers are
    numbers and code names the agent wrote, not the editor's words nor file contents."""
    files: list[str] = []
    numbers: list[str] = []
    for message in span:
        if not isinstance(message, AssistantMessage):
            continue
        for block in message.content:
            if isinstance(block, TextBlock):
                texts = [block.text]
            elif isinstance(block, ToolUseBlock):
                texts = list(_strings(block.input))
                files += [
                    v.strip()
                    for k, v in block.input.items()
                    if ("path" in k or "file" in k)
                    and isinstance(v, str)
                    and re.search(_EXTENSION + "$", v)
                ]
                command = block.input.get("command")
                if isinstance(command, str) and command.strip() not in _EDITOR:
                    words = re.split(r"[\s;|&<>()'\"=]+", command)
                    files += [w for w in words if _FILE_WORD.match(w)]
            else:
                continue
            for text in texts:
                numbers += _NUMBER.findall(text)
                numbers += [
                    n
                    for n in _NAME.findall(text)
                    if len(n) >= 4 and n not in _EDITOR and not re.search(_EXTENSION + "$", n)
                ]
    return list(dict.fromkeys(files)), list(dict.fromkeys(numbers))


def _held(text: str, item: str, path: bool) -> bool:
    def found(word: str) -> bool:
        edge = r"(?<!\w)" if word[0].isalnum() or word[0] == "_" else ""
        return re.search(edge + re.escape(word) + r"(?!\w)", text) is not None

    if found(item):
        return True
    parts = [p for p in item.split("/") if p not in ("", ".")]
    return path and len(parts) >= 2 and found("/".join(parts[-2:]))


def _visible(messages: Sequence[Message]) -> str:
    parts: list[str] = []
    for message in messages:
        for block in message.content:
            if isinstance(block, TextBlock):
                parts.append(block.text)
            elif isinstance(block, ToolUseBlock):
                parts += [v for v in block.input.values() if isinstance(v, str)]
            elif isinstance(block, ToolResultBlock):
                parts.append(block.text)
    return " ".join(parts)


def independent_shares(
    span: Sequence[Message], summary: str, tail: Sequence[Message]
) -> dict[str, tuple[int, int]]:
    """(kept, total) of files and numbers: an item is kept when the summary or the tail holds
    it as a word (a path also by its last two components)."""
    text = " ".join(f"{summary} {_visible(tail)}".split())
    files, numbers = independent_items(span)
    return {
        "files": (sum(_held(text, f, True) for f in files), len(files)),
        "numbers": (sum(_held(text, n, False) for n in numbers), len(numbers)),
    }


def list_only(span: Sequence[Message]) -> str:
    """The list-only control: every argument the span's tool calls were given, nothing else."""
    return "\n".join(
        v
        for m in span
        if isinstance(m, AssistantMessage)
        for b in m.tool_uses
        for v in b.input.values()
        if isinstance(v, str) and v.strip() not in _EDITOR
    )


# ---- the comparison ----

Case = tuple[Sequence[Message], str, Sequence[Message]]  # span, control summary, kept tail


def _gaps(cases: Iterable[Case]) -> dict[str, float]:
    """Grader minus independent measure, in points, per category, summed over ``cases``."""
    sums = {c: [0, 0, 0, 0] for c in ("files", "numbers")}
    for span, summary, tail in cases:
        graded = measure_retention(span, summary, tail)
        for category, (kept, total) in independent_shares(span, summary, tail).items():
            acc = sums[category]
            acc[0] += graded[category].kept
            acc[1] += graded[category].total
            acc[2] += kept
            acc[3] += total
    return {c: 100 * (g / gt - i / it) for c, (g, gt, i, it) in sums.items() if gt and it}


# ---- made-up SWE-agent sessions ----

MODULES = st.lists(
    st.sampled_from(["parser", "lexer", "nodes", "printer", "cache", "units", "io"]),
    min_size=2,
    max_size=5,
    unique=True,
)


@st.composite
def swe_sessions(draw: st.DrawFn) -> tuple[list[Message], int]:
    """A session in SWE-agent's shape and where its kept tail starts."""
    package = draw(st.sampled_from(["sympy/core", "src/_pytest", "astropy/units"]))
    modules = draw(MODULES)
    number = draw(st.integers(100, 9_999))
    # SWE-agent's roots: /testbed, or the repository and its version (issue 53: a root whose
    # name ends in ".4" was counted as a file, crediting every control with it).
    root = draw(st.sampled_from(["/testbed", "/pytest-dev__pytest__5.4", "/astropy__astropy__4.3"]))
    calls: list[tuple[str, dict[str, Any], str]] = [
        ("str_replace_editor", {"command": "view", "path": root}, f"{root}\n{root}/x"),
    ]
    for n, module in enumerate(modules):
        path = f"{root}/{package}/{module}.py"
        calls.append(("str_replace_editor", {"command": "view", "path": path}, f"{n}\tdef f():"))
        calls.append(
            (
                "str_replace_editor",
                {
                    "command": "str_replace",
                    "path": path,
                    "old_str": f"limit = {number + n}",
                    "new_str": f"limit = {number + n + 1}",
                },
                "The file has been edited.",
            )
        )
        calls.append(("bash", {"command": f"cd {root} && python -m pytest {path}"}, "1 failed"))
    messages: list[Message] = [UserMessage(content=f"Fix the overflow in {package}.")]
    for n, (tool, arguments, output) in enumerate(calls):
        words = f"Checking {modules[n % len(modules)]}_limit_{number + n} next."
        messages.append(
            AssistantMessage(
                content=(
                    TextBlock(text=words),
                    ToolUseBlock(id=f"t{n}", name=tool, input=arguments),
                )
            )
        )
        messages.append(
            UserMessage(content=(ToolResultBlock(tool_use_id=f"t{n}", content=output),))
        )
    split = 1 + 2 * draw(st.integers(len(calls) // 2, len(calls) - 1))
    return messages, split


@SETTINGS
@given(st.lists(swe_sessions(), min_size=3, max_size=5))
def test_the_controls_agree_with_an_independent_measure_on_made_up_sessions(
    sessions: list[tuple[list[Message], int]],
) -> None:
    cases: dict[str, list[Case]] = {"empty": [], "list-only": [], "foreign": []}
    for n, (messages, split) in enumerate(sessions):
        span, tail = messages[:split], messages[split:]
        other, other_split = sessions[(n + 1) % len(sessions)]
        # A foreign session's summary: the list of what that session's calls were given.
        foreign = list_only(other[:other_split])
        cases["empty"].append((span, "", tail))
        cases["list-only"].append((span, list_only(span), tail))
        cases["foreign"].append((span, foreign, tail))
    for control, control_cases in cases.items():
        for category, gap in _gaps(control_cases).items():
            assert abs(gap) <= 5, (control, category, gap)


def test_an_editor_sub_command_and_the_root_are_not_items() -> None:
    span = (
        UserMessage(content="Fix it."),
        AssistantMessage(
            content=(
                ToolUseBlock(
                    id="a", name="str_replace_editor", input={"command": "view", "path": "/testbed"}
                ),
            )
        ),
        UserMessage(content=(ToolResultBlock(tool_use_id="a", content="/testbed/a.py"),)),
        AssistantMessage(
            content=(
                ToolUseBlock(
                    id="b",
                    name="str_replace_editor",
                    input={
                        "command": "str_replace",
                        "path": "/testbed/pkg/a.py",
                        "old_str": "x",
                        "new_str": "y",
                    },
                ),
            )
        ),
        UserMessage(content=(ToolResultBlock(tool_use_id="b", content="edited"),)),
        AssistantMessage(
            content=(
                TextBlock(text="I used str_replace on it."),
                ToolUseBlock(id="c", name="bash", input={"command": "cd /testbed/pkg && ls"}),
            )
        ),
        UserMessage(content=(ToolResultBlock(tool_use_id="c", content="a.py"),)),
    )
    graded = measure_retention(span, "Edited /testbed/pkg/a.py with str_replace.", ())
    assert graded["files"].total == 1 and graded["files"].kept == 1  # /testbed/pkg/a.py alone
    assert graded["numbers"].total == 0  # str_replace is the editor's word, not a value


# ---- real sessions ----

SESSIONS = (
    "claude_code__8463c716-a2ea",
    "claude_code__fa812bfe-b295",
    "mini_swe_agent__django__django-11138",
    "mini_swe_agent__sympy__sympy-13091",
)


async def _compactions(name: str, counter: TiktokenCounter) -> list[tuple[Case, str]]:
    path = next(p for p in corpus_files() if p.name.startswith(name))
    transcript = load_transcript(path)
    messages = transcript.messages
    start = next(i for i, m in enumerate(messages) if isinstance(m, UserMessage))
    found: list[tuple[Case, str]] = []
    done = 0
    async for step in replay(
        messages,
        context_window=32_000,
        counter=counter,
        config=ContextConfig.preset("agentscope"),
        system=transcript.system,
        tools=transcript.tools,
    ):
        summary = step.state.summary
        if step.compaction is None or summary is None:
            continue
        end = start + summary.compacted_messages
        own = summary.text.replace(summary.task, "") if summary.task else summary.text
        found.append(((messages[start + done : end], own, step.state.conversation), own))
        done = summary.compacted_messages
    return found


@requires_corpus
async def test_the_controls_agree_with_an_independent_measure_on_real_sessions(
    tiktoken_counter: TiktokenCounter,
) -> None:
    runs = {name: await _compactions(name, tiktoken_counter) for name in SESSIONS}
    assert all(runs.values())
    cases: dict[str, list[Case]] = {"summary": [], "empty": [], "list-only": [], "foreign": []}
    names = list(runs)
    for n, name in enumerate(names):
        # Foreign: a summary of a session of another kind (the other half of the list).
        foreign = runs[names[(n + 2) % len(names)]][0][1]
        for (span, own, tail), _ in runs[name]:
            cases["summary"].append((span, own, tail))
            cases["empty"].append((span, "", tail))
            cases["list-only"].append((span, list_only(span), tail))
            cases["foreign"].append((span, foreign, tail))
    gaps = {control: _gaps(c) for control, c in cases.items()}
    for control, by_category in gaps.items():
        for category, gap in by_category.items():
            assert abs(gap) <= 5, (control, category, gap, gaps)
