"""Retention's promises at their edges: a compaction is graded only on the span it compacted (not
on what an earlier compaction already took), and a path is held by a longer path ending with it
(``/testbed/src/a.py`` holds ``src/a.py``), for the targets and for ``output_only`` alike."""

from __future__ import annotations

from ctxlab.messages import AssistantMessage, ToolResultBlock, ToolUseBlock, UserMessage
from ctxlab.messages._state import Summary, WorkingState
from ctxlab.retention import compaction_retention, holds, inventory, measure_retention
from tests.helpers import Message


def _session(calls: int) -> list[Message]:
    out: list[Message] = [UserMessage(content="Fix the parser bug.")]
    for n in range(calls):
        use = ToolUseBlock(id=f"c{n}", name="bash", input={"command": f"grep -n err f{n}.py"})
        out.append(AssistantMessage(content=(use,)))
        out.append(
            UserMessage(content=(ToolResultBlock(tool_use_id=f"c{n}", content=f"f{n}.py:3"),))
        )
    return out


def _state(originals: list[Message], compacted: int, text: str) -> WorkingState:
    summary = Summary(text=text, compacted_messages=compacted)
    return WorkingState(conversation=tuple(originals[compacted:]), summary=summary)


def test_a_compaction_is_graded_only_on_the_span_it_compacted() -> None:
    originals = _session(8)  # 17 messages: the task, then eight calls with their results
    said = "Ran grep -n err f0.py, then grep -n err f1.py."
    first, second = _state(originals, 5, said), _state(originals, 11, said)
    graded = compaction_retention(originals, first, second)
    assert graded is not None
    # The second compaction took messages 5 to 10: the calls c2, c3 and c4 with their results.
    span = tuple(f"grep -n err f{n}.py" for n in (2, 3, 4))
    assert inventory(originals[5:11]).of("commands") == span
    # Graded on those alone: the summary, which names only the first span's commands, kept
    # none of them (graded on everything before the tail, it would score 2 of 5).
    assert (graded["commands"].total, graded["commands"].kept) == (3, 0)
    assert graded["commands"].lost == span
    # The control: the same summary graded as the first compaction, on messages 1 to 4.
    opening = compaction_retention(originals, WorkingState(), first)
    assert opening is not None
    assert opening["commands"].total == 2 and opening["commands"].kept == 2


def test_a_path_is_held_by_a_longer_path_ending_with_it() -> None:
    assert holds("edited /testbed/src/app/models.py", "src/app/models.py", path=True)
    assert holds("edited /testbed/src/app/models.py", "app/models.py", path=True)
    # Not by a path that only ends with the same letters.
    assert not holds("edited /testbed/src/myapp/models.py", "app/models.py", path=True)
    span: list[Message] = [
        UserMessage(content="List the modules."),
        AssistantMessage(content=(ToolUseBlock(id="l", name="bash", input={"command": "ls"}),)),
        UserMessage(
            content=(
                ToolResultBlock(
                    tool_use_id="l", content="pkg/mod1/file1.py\npkg/mod2/file2.py\nsetup.cfg"
                ),
            )
        ),
    ]
    assert inventory(span).of("output_only") == (
        "pkg/mod1/file1.py",
        "pkg/mod2/file2.py",
        "setup.cfg",
    )
    summary = "The modules are /testbed/pkg/mod1/file1.py and pkg-mod2 (a folder)."
    kept = measure_retention(span, summary, ())["output_only"]
    assert (kept.total, kept.in_summary) == (3, 1)
    assert kept.lost == ("pkg/mod2/file2.py", "setup.cfg")
