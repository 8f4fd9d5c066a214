"""What each tool call tells the offline summarizer is read once per call's content and kept
(`_span._calls`, issue 54: a what-if summarizes the same calls in spans that differ config after
config, and reading them again was a third of a cold slider move's summaries): the span read
with every call kept, cold or after other spans kept them, is the span the reader before the
memo gave — kept here as the reference — over generated spans (shell commands that edit, read
and fail, editor and plan calls, other tools, results missing or out of order)."""

from __future__ import annotations

import dataclasses
import json

from hypothesis import given, settings
from hypothesis import strategies as st

import ctxlab.pipeline._span as span_module
from ctxlab.messages import (
    AssistantMessage,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ctxlab.pipeline._changes import edit_change, shell_changes
from ctxlab.pipeline._handover_warnings import warning_lines
from ctxlab.pipeline._span import (
    _CONTENT_ARGS,
    _EDITOR,
    _EDITORS,
    _TODO_TOOLS,
    _WRITERS,
    TAGS,
    Run,
    Span,
    _file_arg,
    _read_result,
    _shell,
    _todos,
    _values,
    flat,
    read_span,
    short,
)
from ctxlab.pipeline._span_text import _WORD_FILE
from tests.helpers import Message


def reference_span(messages: list[Message]) -> Span:
    """`read_span` as it was before its calls were kept (issue 54, i62-slider)."""
    span = Span()
    calls: dict[str, tuple[str, ToolUseBlock]] = {}
    for message in messages:
        if isinstance(message, UserMessage):
            if not message.tool_results:
                text = TAGS.sub(
                    " ", "\n".join(b.text for b in message.content if isinstance(b, TextBlock))
                )
                lines = [flat(ln) for ln in text.splitlines() if len(flat(ln)) > 2]
                if lines and lines[0].startswith(span_module._RECORDED_SUMMARY):
                    span.recorded.extend(lines)
                else:
                    span.users.extend(lines)
                    if span.first_lines < 0:
                        span.first_lines = len(lines)
            for result in message.tool_results:
                _reference_result(span, calls.pop(result.tool_use_id, None), result)
            continue
        for block in message.content:
            if isinstance(block, TextBlock) and block.text.strip():
                span.last_text = block.text
                span.values.extend(_values(block.text))
            elif isinstance(block, ToolUseBlock):
                calls[block.id] = (_reference_call(span, block), block)
    for command, _block in calls.values():
        if command:
            span.runs.append(Run(command, "no result yet"))
    return span


def warnings_of_last_run(span: Span) -> Span:
    """``span`` with the warnings of its last run with a result alone (i66-summ: the reader
    reads only those, the only ones the handover says; the reference reads every run's)."""
    done = [n for n, run in enumerate(span.runs) if run.outcome != "no result yet"]
    span.runs = (
        [
            run if n == done[-1] else dataclasses.replace(run, warnings=())
            for n, run in enumerate(span.runs)
        ]
        if done
        else span.runs
    )
    return span


def _reference_call(span: Span, block: ToolUseBlock) -> str:
    name = block.name.lower()
    if name in _TODO_TOOLS:
        span.todos = _todos(block) or span.todos
        span.last_action = f"{block.name}: plan updated"
        return ""
    raw = _shell(block)
    command = flat(raw) if raw is not None else None
    path = _file_arg(block)
    sub = str(block.input.get("command", "")).strip()
    for key, value in block.input.items():
        if isinstance(value, str) and key not in _CONTENT_ARGS and value.strip() not in _EDITOR:
            span.values.extend(_values(value))
    if command is not None:
        span.last_action = f"$ {short(command, 200)}"
        span.reads.extend(_WORD_FILE.findall(command))
        for changed, what in shell_changes(raw or ""):
            span.edits.setdefault(changed, []).append(what)
        return command
    if path is not None:
        if name in _EDITORS | _WRITERS or sub in _EDITOR - {"view"}:
            span.edits.setdefault(path, []).append(
                edit_change(block.input, writes=name in _WRITERS)
            )
        else:
            span.reads.append(path)
        span.last_action = f"{block.name} {path}"
        return ""
    args = json.dumps(block.input, ensure_ascii=False, sort_keys=True)
    span.last_action = f"{block.name} {short(args, 200)}"
    return f"{block.name} {args}" if len(args) <= 400 else ""


def _reference_result(
    span: Span, call: tuple[str, ToolUseBlock] | None, result: ToolResultBlock
) -> None:
    if call is None or not call[0]:
        return
    command = call[0]
    outcome, status, failures, failed, telling = _read_result(result.text, bool(result.is_error))
    warned = warning_lines(result.text)
    span.runs.append(Run(command, outcome, status, failures, failed, telling, warned))
    if span.last_action == f"$ {short(command, 200)}":
        span.last_action += f" → {outcome}"


_COMMANDS = [
    "pytest tests/test_a.py -q",
    "sed -i 's/old_name/new_name/' src/a.py",
    "echo hi > notes.txt",
    "cat <<EOF > b.py\nx = 1\nEOF",
    "python reproduce.py && ls src/",
    "str_replace",  # an editor's sub-command is no command
    "  ",
]
_OUTPUTS = [
    "ok",
    "E   AssertionError: 1 != 2\n=== 1 failed in 0.2s ===",
    "<returncode>1</returncode>\nTraceback (most recent call last)",
    "src/a.py:3: DeprecationWarning: old",
    "",
]
_INPUTS = st.one_of(
    st.builds(lambda c: ("bash", {"command": c}), st.sampled_from(_COMMANDS)),
    st.builds(
        lambda sub, path: ("str_replace_editor", {"command": sub, "path": path, "old_str": "a"}),
        st.sampled_from(["view", "str_replace", "create"]),
        st.sampled_from(["src/a.py", "/repo/b.py", "x\ny"]),
    ),
    st.builds(
        lambda path: ("Edit", {"file_path": path, "old_string": "a", "new_string": "b"}),
        st.sampled_from(["src/a.py", "c.md"]),
    ),
    st.builds(lambda path: ("Read", {"file_path": path}), st.sampled_from(["src/a.py", "d.txt"])),
    st.builds(
        lambda todos: ("TodoWrite", {"todos": todos}),
        st.lists(
            st.fixed_dictionaries(
                {
                    "content": st.sampled_from(["Fix retry_limit", "Run tests"]),
                    "status": st.sampled_from(["pending", "completed"]),
                }
            ),
            max_size=2,
        ),
    ),
    st.builds(lambda q: ("search", {"query": q}), st.sampled_from(["FooBar", "x" * 500])),
)


@st.composite
def spans(draw: st.DrawFn) -> list[Message]:
    """A span: user lines, replies with text and tool calls, results (some missing, some for
    calls made before the span, some in another order)."""
    messages: list[Message] = []
    for turn in range(draw(st.integers(1, 6))):
        if draw(st.booleans()):
            said = draw(st.sampled_from(["Fix the bug in src/a.py", "ok", "Use retry_limit_2"]))
            messages.append(UserMessage(content=said))
        calls = draw(st.lists(_INPUTS, max_size=3))
        blocks: list[TextBlock | ToolUseBlock] = [TextBlock(text=f"Checking FooBar{turn}.")]
        # Two calls may share an id (a recording's ids are not always unique).
        ids = [f"c{draw(st.integers(0, 8))}" for _ in calls]
        blocks += [
            ToolUseBlock(id=i, name=n, input=a) for i, (n, a) in zip(ids, calls, strict=True)
        ]
        messages.append(AssistantMessage(content=tuple(blocks)))
        answered = draw(st.permutations([*ids, "elsewhere"]))[: draw(st.integers(0, len(ids) + 1))]
        results = [
            ToolResultBlock(
                tool_use_id=i, content=draw(st.sampled_from(_OUTPUTS)), is_error=draw(st.booleans())
            )
            for i in answered
        ]
        if results:
            messages.append(UserMessage(content=tuple(results)))
    return messages


@settings(max_examples=150, deadline=None, database=None)
@given(spans(), st.integers(0, 12))
def test_a_span_read_with_kept_calls_is_the_span_the_reference_reads(
    messages: list[Message], cut: int
) -> None:
    expected = warnings_of_last_run(reference_span(messages))
    span_module._calls._values.clear()
    assert read_span(messages) == expected  # cold: every call read
    span_module._calls._values.clear()
    read_span(messages[cut:])  # another span kept some of its calls first
    assert read_span(messages) == expected
    assert read_span(messages) == expected  # every call kept


def test_a_call_is_read_once_whatever_span_it_is_in() -> None:
    call = ToolUseBlock(id="c1", name="bash", input={"command": "sed -i 's/a/b/' src/a.py"})
    messages: list[Message] = [
        AssistantMessage(content=(call,)),
        UserMessage(
            content=(ToolResultBlock(tool_use_id="c1", content="<returncode>0</returncode>"),)
        ),
    ]
    span_module._calls._values.clear()
    first = read_span(messages)
    assert first.edits == {"src/a.py": ["`a` → `b` (sed)"]}
    assert first.last_action == "$ sed -i 's/a/b/' src/a.py → exit 0"
    assert call.content_hash in span_module._calls._values
    # The span that holds the call again (after a summary) finds it kept, the same.
    again = read_span([UserMessage(content="go on"), *messages])
    assert again.edits == first.edits and again.runs == first.runs
    assert len(span_module._calls._values) == 1
