"""A run is never shown the origin's absolute folder: a traceback the origin's tools printed
before the fork named the user's project by its absolute path (``File "/home/me/proj/tests/
test_report.py"``); in the state a run starts from it reads relative to that folder
(``File "tests/test_report.py"``), as the run's own tools' output does — the same text in every
run, and nothing of the user's folder shown. A recording answering its fork still replays
(its requests read the same way on both sides)."""

from __future__ import annotations

from pathlib import Path

from ctxlab.demo import demo_config
from ctxlab.fork import fork, run_forward
from ctxlab.io._transcript import Transcript
from ctxlab.messages import AssistantMessage, ToolUseBlock, UserMessage
from tests.fork.helpers import demo_session


def _texts(run: object) -> str:
    return "\n".join(
        m.model_dump_json()
        for r in run.requests
        for m in r.messages  # type: ignore[attr-defined]
    )


async def test_a_traceback_from_before_the_fork_reads_relative_to_the_origins_folder(
    tmp_path: Path,
) -> None:
    session = await demo_session(tmp_path / "o")
    origin = str(session.workspace)
    before = "\n".join(m.model_dump_json() for m in session.agent.history[:3])
    assert f'File \\"{origin}/tests/test_report.py\\"' in before  # the test's premise
    # Replayed from the start under a config that keeps the result whole: the traceback is sent.
    config = demo_config(tool_result_limit=20_000)
    branch = await fork(
        session.agent, at=3, config=config, arrival="from_start", root=tmp_path / "b"
    )
    (run,) = (await run_forward(branch, check=lambda run: True, max_steps=3)).runs
    sent = _texts(run)
    assert 'File \\"tests/test_report.py\\", line 15, in test_discount_row' in sent
    assert origin not in sent
    assert str(tmp_path) not in sent


def _recording(folder: Path) -> Transcript:
    trace = f'Traceback (most recent call last):\n  File "{folder}/src/a.py", line 3\nValueError: x'
    messages: list[UserMessage | AssistantMessage] = [UserMessage(content="Fix it.")]
    for n, output in enumerate((trace, "ok", "done")):
        use = ToolUseBlock(id=f"toolu_{n}", name="run", input={"n": n})
        messages.append(AssistantMessage(content=(use,)))
        result = {"type": "tool_result", "tool_use_id": use.id, "content": output}
        messages.append(UserMessage(content=[result]))
    messages.append(AssistantMessage(content="Fixed."))
    return Transcript(name="paths", meta={}, system="", messages=tuple(messages))


async def test_a_recording_naming_the_folder_given_still_replays_to_its_end(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "src").mkdir(parents=True)
    (project / "src" / "a.py").write_text("x = 1\n")
    recording = _recording(project)
    branch = await fork(recording, at=2, model="recorded", workspace=project, root=tmp_path / "b")
    (run,) = (await run_forward(branch, check=lambda run: True, max_steps=10)).runs
    assert run.notes == [
        "unknown: replayed the recording to its end (request 3) — no call ran here"
    ]
    sent = _texts(run)
    assert 'File \\"src/a.py\\", line 3' in sent and str(project) not in sent
