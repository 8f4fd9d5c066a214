"""Retention measured on the original span by an extractor no summarizer uses; the control
(kept tail alone); and the offline handover summary graded by it."""

from __future__ import annotations

import ast
import pickle
from pathlib import Path

import pytest

from ctxlab import ApproximateCounter, ContextConfig, replay
from ctxlab.messages import (
    AssistantMessage,
    TextBlock,
    ToolUseBlock,
    UserMessage,
)
from ctxlab.retention import holds, inventory, measure_retention
from ctxlab.tokens import TokenCache
from tests.helpers import extractive_fields, tool_call, tool_result

TASK = "Fix the crash in src/app/models.py when the port is 8080.\nKeep the public API unchanged."
SPAN = (
    UserMessage(content=TASK),
    AssistantMessage(
        content=(
            TextBlock(text="First I run the tests of load_user at line 1142."),
            ToolUseBlock(
                id="a", name="bash", input={"command": "cd /repo && pytest tests/test_models.py"}
            ),
        )
    ),
    tool_result(
        "a",
        "FAILED tests/test_models.py::test_save - KeyError\nE   KeyError: 'user_id'\n"
        "<returncode>1</returncode>",
    ),
    tool_call("b", "str_replace_editor", command="view", path="/repo/src/app/models.py"),
    tool_result(
        "b", "   1 class UserStore:\n" + "\n".join(f"pkg/mod{n}/file{n}.py" for n in range(5))
    ),
    UserMessage(content="Also, do not touch the migrations folder."),
    tool_call(
        "c",
        "str_replace_editor",
        command="str_replace",
        path="/repo/src/app/models.py",
        old_str="user['user_id']",
        new_str="user.get('user_id')",
    ),
    tool_result("c", "The file /repo/src/app/models.py has been edited."),
    tool_call("d", "bash", command="cd /repo && pytest tests/test_models.py"),
    tool_result("d", "1 passed in 0.12s\n<returncode>0</returncode>"),
)


def test_the_inventory_of_a_hand_made_span_by_category() -> None:
    found = inventory(SPAN)
    assert found.of("task") == (
        "Fix the crash in src/app/models.py when the port is 8080.",
        "Keep the public API unchanged.",
    )
    assert found.of("instructions") == ("Also, do not touch the migrations folder.",)
    # An editor's sub-command is an action on a file, not a command; commands are whole.
    assert found.of("commands") == ("cd /repo && pytest tests/test_models.py",)
    assert found.actions["/repo/src/app/models.py"] == "edited"
    assert found.actions["tests/test_models.py"] == "run"
    assert found.of("edits") == ("/repo/src/app/models.py",)
    # Outcomes come from the *last* run of each command: it passed, so no error is a target.
    assert found.of("outcomes") == ()
    assert "1142" in found.of("numbers") and "load_user" in found.of("numbers")
    # Paths and numbers only tool output named are reported apart, not targets.
    assert "pkg/mod3/file3.py" in found.of("output_only")
    assert "pkg/mod3/file3.py" not in found.of("files")


def test_outcomes_are_the_failures_of_the_last_run() -> None:
    failing = (*SPAN[:8], tool_call("d", "bash", command="cd /repo && pytest tests/test_models.py"))
    failing += (tool_result("d", "FAILED tests/test_models.py::test_load\nE   ValueError: bad id"),)
    assert inventory(failing).of("outcomes") == (
        "tests/test_models.py::test_load",
        "FAILED tests/test_models.py::test_load",
        "ValueError: bad id",
    )


def test_matching_is_on_word_boundaries_and_paths_by_their_last_two_components() -> None:
    assert not holds("# Task Overview of the work", "view")
    assert holds("then view it", "view")
    assert holds("edited app/models.py", "/repo/src/app/models.py", path=True)
    assert not holds("edited models.py", "/repo/src/app/models.py", path=True)
    assert not holds("port 80800", "8080")
    # A prefix of a command is not the command.
    assert not holds("$ mv a b", "mv a b && mv c d && pytest")


def test_retention_splits_summary_and_tail_and_the_control_is_the_tail_alone() -> None:
    tail = SPAN[8:]
    summary = (
        "Task: Fix the crash in src/app/models.py when the port is 8080. Keep the public API "
        "unchanged. User: Also, do not touch the migrations folder. Changed app/models.py."
    )
    kept = measure_retention(SPAN[:8], summary, tail)
    assert kept["task"].kept == 2 and kept["task"].in_summary == 2 and kept["task"].in_tail == 0
    assert kept["instructions"].share == 1.0
    # The command is in the kept tail (run again there), not in the summary.
    assert kept["commands"].in_tail == 1 and kept["commands"].in_summary == 0
    assert kept["files"].kept == kept["files"].total
    control = measure_retention(SPAN[:8], "", tail)
    assert control.share() == control.control_share() == kept.control_share()
    assert control["task"].share == 0.0 and kept.share() > control.share()  # type: ignore[operator]


def test_output_only_is_measured_when_read_with_the_same_figures_and_pickles(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The costliest category (a scan of every tool output) is not a target: the headline
    # figure does not pay for it; a view reading it gets the same figures as ever.
    from ctxlab.retention import _extract

    scanned: list[str] = []
    scan = _extract._output_values
    monkeypatch.setattr(_extract, "_output_values", lambda t: scanned.append(t) or scan(t))
    summary = "Read pkg/mod1/file1.py and pkg/mod2/file2.py."
    kept = measure_retention(SPAN[:8], summary, SPAN[8:])
    assert kept.core is not None and kept.control_share() is not None
    assert scanned == []
    only = kept["output_only"]
    assert scanned  # read: scanned now
    assert (only.total, only.in_summary, only.in_tail) == (5, 2, 0)
    assert only.lost == ("pkg/mod0/file0.py", "pkg/mod3/file3.py", "pkg/mod4/file4.py")
    assert kept.rows()[-1]["category"] == "output_only" and kept.rows()[-1]["share"] == 0.4
    unread = measure_retention(SPAN[:8], summary, SPAN[8:])  # pickled (to a Dask worker) unread
    again = pickle.loads(pickle.dumps(unread))
    assert again == kept and again["output_only"] == only


async def test_a_summary_of_paths_only_scores_low_on_task_and_instructions() -> None:
    # The control of the headline figure: a summarizer that lists what an artifact metric
    # would count (paths, commands) but drops the task and the user's words.
    found = inventory(SPAN[:8])
    listing = "\n".join([*found.of("files"), *found.of("commands")])
    poor = measure_retention(SPAN[:8], listing, SPAN[8:])
    assert poor["task"].share == 0.0 and poor["instructions"].share == 0.0
    fields = await extractive_fields(SPAN[:8], budget=800)
    good = measure_retention(SPAN[:8], "\n".join(fields.values()), SPAN[8:])
    assert good["task"].share == 1.0 and good["instructions"].share == 1.0
    assert good.share() > poor.share() + 0.3  # type: ignore[operator]


async def test_the_offline_summary_is_a_handover() -> None:
    cache = TokenCache(ApproximateCounter())
    span = (
        *SPAN[:8],
        AssistantMessage(content="Next I will add a regression test for the missing user_id."),
    )
    fields = await extractive_fields(span, budget=800)
    assert fields["task_overview"].startswith(TASK)
    assert "- Also, do not touch the migrations folder." in fields["task_overview"]
    # What changed, short old → new; the command with its outcome; the error and its state.
    assert "`user['user_id']` → `user.get('user_id')`" in fields["current_state"]
    assert "$ cd /repo && pytest tests/test_models.py  → exit 1" in fields["context_to_preserve"]
    assert "KeyError: 'user_id' — not yet fixed" in fields["important_discoveries"]
    # The next steps are the agent's last stated intent, not a fixed line.
    # The last run failed: that failure is the first step, then the agent's intent (issue 53).
    assert fields["next_steps"] == (
        "First make `cd /repo && pytest tests/test_models.py` pass: its last run ended"
        " KeyError: 'user_id'\nNext I will add a regression test for the missing user_id."
    )
    # A directory listing in an output is not quoted.
    assert "pkg/mod3" not in "\n".join(fields.values())
    assert sum(cache.text(v) for v in fields.values()) <= 800


async def test_an_error_fixed_by_a_later_run_is_reported_fixed() -> None:
    fields = await extractive_fields(SPAN, budget=800)
    assert "KeyError: 'user_id' — fixed" in fields["important_discoveries"]
    assert "→ exit 0" in fields["context_to_preserve"]


async def test_the_offline_summary_stays_within_a_small_budget_and_keeps_the_user_first() -> None:
    cache = TokenCache(ApproximateCounter())
    commands = [
        m
        for n in range(40)
        for m in (
            tool_call(f"x{n}", "bash", command=f"grep -rn token_{n} src/"),
            tool_result(f"x{n}", "x"),
        )
    ]
    span = (*SPAN[:8], *commands)
    fields = await extractive_fields(span, budget=300)
    assert sum(cache.text(v) + 1 for v in fields.values()) <= 300
    assert "Also, do not touch the migrations folder." in fields["task_overview"]
    # Short of room, the oldest commands go first: the latest stays.
    assert "grep -rn token_39 src/" in fields["context_to_preserve"]
    assert "grep -rn token_0 src/" not in fields["context_to_preserve"]


async def test_a_replayed_compaction_is_graded_on_the_original_messages() -> None:
    # The failure is past what the truncation keeps of the result: graded on the original,
    # it is an outcome the summary had to carry.
    messages: list[UserMessage | AssistantMessage] = [
        UserMessage(content="Find why the job fails; logs are under /var/log/jobs.")
    ]
    for n in range(30):
        messages.append(
            tool_call(f"c{n}", "bash", command=f"grep -n timeout /var/log/jobs/job{n}.log")
        )
        body = f"job{n}.log:{100 + n}: timeout after 30s\n" * 300
        messages.append(tool_result(f"c{n}", body + f"RuntimeError: job {n} gave up"))
    messages.append(AssistantMessage(content="All thirty jobs time out at 30 s."))
    config = ContextConfig(tool_result_limit=200)
    records = [
        step.compaction
        async for step in replay(
            messages, context_window=6_000, counter=ApproximateCounter(), config=config
        )
        if step.compaction is not None
    ]
    assert records and all(r.retention is not None for r in records)
    first = records[0].retention
    assert first is not None
    assert first["commands"].total > 0 and first["commands"].share == 1.0
    assert any("RuntimeError: job" in o for o in inventory(messages[:3]).of("outcomes"))
    assert first["outcomes"].total > 0
    # The task line is held at every compaction (the pinned first message).
    assert all(r.retention and r.retention["task"].share == 1.0 for r in records)


def test_the_summarizer_and_the_metric_share_no_code() -> None:
    root = Path(__file__).parents[2] / "ctxlab"

    def imports(path: Path) -> set[str]:
        tree = ast.parse(path.read_text())
        names: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and node.module:
                names.add(node.module)
            elif isinstance(node, ast.Import):
                names.update(a.name for a in node.names)
        return names

    summarizer = imports(root / "pipeline" / "_handover.py")
    assert not any(n.startswith("ctxlab.retention") for n in summarizer)
    for module in (root / "retention").glob("*.py"):
        assert not any(n.startswith("ctxlab.pipeline") for n in imports(module)), module


async def test_the_task_and_the_users_instructions_survive_every_compaction() -> None:
    # Three compactions or more; the user speaks once, early. At the last compaction the task
    # (kept verbatim beside the summary) and the instruction (carried from summary to summary)
    # are still in the request.
    task = "Find why the nightly job fails.\nThe logs are under /var/log/jobs."
    messages: list[UserMessage | AssistantMessage] = [UserMessage(content=task)]
    for n in range(40):
        if n == 3:
            messages.append(AssistantMessage(content="Looking at the first logs."))
            messages.append(UserMessage(content="Ignore the job named legacy-sync, it is retired."))
        messages.append(
            tool_call(f"c{n}", "bash", command=f"grep -n timeout /var/log/jobs/job{n}.log")
        )
        messages.append(tool_result(f"c{n}", f"job{n}.log:{100 + n}: timeout after 30s\n" * 40))
    messages.append(AssistantMessage(content="All jobs time out at 30 s."))
    records = [
        step
        async for step in replay(messages, context_window=6_000, counter=ApproximateCounter())
        if step.compaction is not None
    ]
    assert len(records) >= 3
    last = records[-1]
    assert last.state.summary is not None and last.state.summary.task == task
    kept = last.compaction.retention  # type: ignore[union-attr]
    assert kept is not None
    # Held by the pinned copy, not by the summary's own text (graded apart).
    task = kept["task"]
    assert task.share == 1.0 and task.in_pinned == task.total and task.in_summary == 0
    assert kept["instructions"].total == 1 and kept["instructions"].share == 1.0


def test_names_and_numbers_the_agent_put_in_a_tool_input_are_targets_but_not_file_contents() -> (
    None
):
    span = (
        UserMessage(content="Tune the cache."),
        tool_call("q", "configure", settings={"cache_ttl_seconds": 3600, "label": "warm_start_v2"}),
        tool_result("q", "ok"),
        tool_call(
            "w", "write", file_path="src/conf.py", content="MAX_ENTRIES = 98765\nuse_lru_policy()"
        ),
        tool_result("w", "written"),
    )
    numbers = inventory(span).of("numbers")
    # Strings in the input, nested ones too, are what the agent chose.
    assert "warm_start_v2" in numbers
    # What it wrote into a file is the file's content, not a value it must remember.
    assert "98765" not in numbers and "use_lru_policy" not in numbers
