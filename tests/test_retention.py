"""Salient artifacts, retention after a compaction, and the offline summarizer that keeps them."""

from __future__ import annotations

from ctxlab import ApproximateCounter, ContextConfig, replay
from ctxlab.messages import AssistantMessage, ToolResultBlock, ToolUseBlock, UserMessage
from ctxlab.pipeline import SummaryRequest, extractive_summarizer
from ctxlab.pipeline._artifacts import artifacts_of, reachable_text, retention, salient_input
from ctxlab.tokens import TokenCache


def call(id: str, name: str, **input: object) -> AssistantMessage:
    return AssistantMessage(content=(ToolUseBlock(id=id, name=name, input=input),))


def result(id: str, text: str) -> UserMessage:
    return UserMessage(content=(ToolResultBlock(tool_use_id=id, content=text),))


SPAN = (
    UserMessage(content="Fix the crash in src/app/models.py when the port is 8080 (v2.31.0)."),
    call("a", "execute_bash", command="cd /repo && python -m pytest tests/test_models.py -x"),
    result(
        "a",
        "tests/test_models.py::test_save FAILED\nE   KeyError: 'user_id'\n"
        "collected 12 items; ERROR at line 1142 of src/app/models.py",
    ),
    call("b", "str_replace_editor", path="/repo/src/app/models.py", old_str="x", new_str="y"),
    result("b", "ok"),
    AssistantMessage(content="The `load_user` helper in models.UserStore drops user_id."),
    call("c", "search", query="user_id default"),
    result("c", "\n".join(f"pkg/mod{n}/file{n}.py" for n in range(30))),
)


def test_artifacts_of_a_hand_made_span() -> None:
    found = artifacts_of(SPAN)
    # Every tool's salient input, whatever the tool is called.
    assert found.commands == (
        "cd /repo && python -m pytest tests/test_models.py -x",
        "/repo/src/app/models.py",
        "user_id default",
    )
    assert "src/app/models.py" in found.paths and "/repo/src/app/models.py" in found.paths
    assert "tests/test_models.py" in found.paths
    # A listing contributes its first 20 paths, not all 30.
    assert sum(p.startswith("pkg/") for p in found.paths) == 20
    assert found.numbers == ("8080", "v2.31.0", "1142")
    assert "load_user" in found.identifiers and "models.UserStore" in found.identifiers
    assert any("KeyError: 'user_id'" in e for e in found.errors)
    assert any("FAILED" in e for e in found.errors)


def test_salient_input_falls_back_to_the_longest_string() -> None:
    use = ToolUseBlock(id="x", name="do", input={"flag": True, "a": "short", "b": "the long one"})
    assert salient_input(use) == "the long one"


def test_retention_counts_what_the_next_request_still_holds() -> None:
    span = artifacts_of(SPAN)
    text = reachable_text(
        [call("d", "execute_bash", command="git diff")],
        "Files: src/app/models.py. Ran: cd /repo && python -m pytest tests/test_models.py -x "
        "on port 8080",
    )
    kept = retention(span, text)
    assert kept.kept["commands"] == 1 and kept.total["commands"] == 3
    assert kept.kept["numbers"] == 1 and set(kept.lost["numbers"]) == {"v2.31.0", "1142"}
    assert kept.share("commands") == 1 / 3
    assert retention(span, "").core == 0.0
    assert retention(artifacts_of([UserMessage(content="hi")]), "").core is None


async def test_the_offline_summary_keeps_the_task_and_every_tools_artifacts() -> None:
    cache = TokenCache(ApproximateCounter())
    task = "Fix the crash in src/app/models.py when the port is 8080 (v2.31.0).\n" + "\n".join(
        f"Detail {n}: the reproduction needs step {n}." for n in range(40)
    )
    span = (UserMessage(content=task), *SPAN[1:])
    request = SummaryRequest(
        messages=span,
        previous_summary=None,
        schema=ContextConfig().summary_schema,
        prompt="",
        budget_tokens=1_500,
        count=cache.text,
    )
    fields = await extractive_summarizer(request)
    assert fields["task_overview"] == task  # whole: it fits its share of the budget
    text = "\n".join(fields.values())
    assert retention(artifacts_of(span), " ".join(text.split())).core == 1.0
    assert sum(cache.text(v) for v in fields.values()) <= 1_500
    # A budget too small for everything: the summary stays within it, the task is cut and says so.
    small = await extractive_summarizer(
        SummaryRequest(
            span, None, ContextConfig().summary_schema, "", budget_tokens=400, count=cache.text
        )
    )
    assert sum(cache.text(v) for v in small.values()) <= 400 + 60
    assert "cut at 160 tokens" in small["task_overview"]
    assert small["context_to_preserve"].startswith("$ cd /repo && python -m pytest")


async def test_a_replayed_compaction_reports_its_retention() -> None:
    messages: list[UserMessage | AssistantMessage] = [
        UserMessage(content="Find why the job fails; logs are under /var/log/jobs.")
    ]
    for n in range(12):
        messages.append(call(f"c{n}", "run_shell", cmd=f"grep -n timeout /var/log/jobs/job{n}.log"))
        messages.append(result(f"c{n}", f"job{n}.log:{100 + n}: timeout after 30s\n" * 80))
    messages.append(AssistantMessage(content="All twelve jobs time out at 30 s."))
    records = [
        step.compaction
        async for step in replay(messages, context_window=6_000, counter=ApproximateCounter())
        if step.compaction is not None
    ]
    assert records
    for record in records:
        assert record.retention is not None
        assert record.retention.core == 1.0
        assert record.retention.total["commands"] > 0


async def test_compare_configs_reports_retention_per_compaction() -> None:
    from ctxlab import compare_configs

    messages: list[UserMessage | AssistantMessage] = [UserMessage(content="Check the jobs.")]
    for n in range(12):
        messages.append(call(f"c{n}", "run_shell", cmd=f"grep -n timeout /var/log/jobs/job{n}.log"))
        messages.append(result(f"c{n}", f"job{n}.log:{100 + n}: timeout after 30s\n" * 80))
    messages.append(AssistantMessage(content="done"))
    frame = await compare_configs(
        messages, {"d": ContextConfig()}, context_window=6_000, counter=ApproximateCounter()
    )
    compacted = frame[frame["compaction"] != ""]
    assert len(compacted) > 0 and (compacted["retention"] == 1.0).all()
    assert frame[frame["compaction"] == ""]["retention"].isna().all()
