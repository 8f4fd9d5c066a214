"""The handover tells the state true (issue 53): a run the harness killed or never ran, a
traceback and a missing command are failures, never "→ ok"; "fixed" only when the last run of
that same command passed and no later output prints its error again; the next steps are not the
agent's self-assessment when the last outcome contradicts it. Each summary is checked by the
independent audit of `tests/pipeline/handover_audit.py`, which shares no code with the
summarizer."""

from __future__ import annotations

from ctxlab import ApproximateCounter, ContextConfig
from ctxlab.messages import AssistantMessage, Summary, ToolResultBlock, ToolUseBlock, UserMessage
from ctxlab.pipeline import SummaryRequest, extractive_summarizer
from ctxlab.tokens import TokenCache
from tests.pipeline.handover_audit import audit

Message = UserMessage | AssistantMessage


def _run(id: str, command: str, output: str, is_error: bool = False) -> tuple[Message, Message]:
    call = AssistantMessage(content=(ToolUseBlock(id=id, name="bash", input={"command": command}),))
    result = UserMessage(
        content=(ToolResultBlock(tool_use_id=id, content=output, is_error=is_error),)
    )
    return call, result


async def _fields(
    span: tuple[Message, ...], previous: Summary | None = None, budget: int = 4_000
) -> dict[str, str]:
    cache = TokenCache(ApproximateCounter())
    request = SummaryRequest(
        span, previous, ContextConfig().summary_schema, "", budget_tokens=budget, count=cache.text
    )
    return await extractive_summarizer(request)


def _timeout(command: str, output: str = "") -> str:
    # mini-SWE-agent's timeout_template (src/minisweagent/agents/default.py), as sent.
    return (
        f"The last command <command>{command}</command> timed out and has been killed.\n"
        f"The output of the command was:\n <output>\n{output}\n</output>\n"
        "Please try another command and make sure to avoid those requiring interactive input."
    )


async def test_a_run_the_harness_killed_is_a_failure_not_ok() -> None:
    span = (*_run("a", "python3 verify.py", _timeout("python3 verify.py")),)
    fields = await _fields(span)
    assert "$ python3 verify.py  → timed out" in fields["context_to_preserve"]
    assert fields["important_discoveries"].startswith("`python3 verify.py` failed: timed out")
    assert audit(fields, span, span, "").false_ok == []


async def test_swe_agents_cancelled_and_unexecuted_commands_are_failures() -> None:
    # SWE-agent's command_cancelled_timeout_template and shell_check_error_template.
    cancelled = (
        "The command 'pytest -x' was cancelled because it took more than 30 seconds. "
        "Please try a different command that completes more quickly."
    )
    unexecuted = "Your bash command contained syntax errors and was NOT executed. Please fix"
    span = (*_run("a", "pytest -x", cancelled), *_run("b", "echo (", unexecuted))
    fields = await _fields(span)
    assert "$ pytest -x  → timed out" in fields["context_to_preserve"]
    assert "$ echo (  → not run" in fields["context_to_preserve"]
    assert "→ ok" not in fields["context_to_preserve"]


async def test_a_traceback_naming_no_error_and_a_missing_command_are_failures() -> None:
    traceback = (
        'Traceback (most recent call last):\n  File "r.py", line 3, in <module>\n'
        "django.core.exceptions.ImproperlyConfigured: Requested setting INSTALLED_APPS"
    )
    span = (
        *_run("a", "python r.py", traceback),
        *_run("b", "tox -e py", "bash: tox: command not found"),
    )
    fields = await _fields(span)
    context = fields["context_to_preserve"]
    assert "$ python r.py  → traceback" in context
    assert "$ tox -e py  → bash: tox: command not found" in context
    discoveries = fields["important_discoveries"]
    assert "`python r.py` failed: traceback" in discoveries
    assert "`tox -e py` failed: bash: tox: command not found — not yet fixed" in discoveries
