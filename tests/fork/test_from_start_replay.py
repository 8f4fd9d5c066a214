"""A fork *as if from the start* sends, at its first step, what an independent replay of the
same session under the same config sends at that step: `ctxlab.replay` of the origin's messages
(the public replay, run here by the test), offloading into a folder of the test's own, each
file shown by its path under that folder (as a run is shown its files: relative to its
workspace). A result the replay already cut is not cut a second time."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from ctxlab import ContextConfig, replay
from ctxlab.demo import DEMO_SYSTEM, demo_config
from ctxlab.fork import fork, run_forward
from ctxlab.materials import Materials, SystemPart
from ctxlab.messages import AssistantMessage, UserMessage
from ctxlab.messages._request import ModelRequest
from ctxlab.models import MemorylessModel
from ctxlab.pipeline import TRUNCATION_MARKER, extractive_summarizer
from ctxlab.tokens import TokenCache
from tests.fork.helpers import RelativeFolder, Session, demo_session

CONFIGS = {
    "cut300": demo_config(tool_result_limit=300),
    "cut200": demo_config(tool_result_limit=200),
    "eager": demo_config(trigger_ratio=0.4, tool_result_limit=400),
    "masking": ContextConfig.preset("observation_masking").merge(tool_result_limit=200),
}


def _conversation(request: ModelRequest) -> tuple[UserMessage | AssistantMessage, ...]:
    return tuple(request.messages[: len(request.messages) - request.material_messages])


async def _replayed(
    session: Session, config: ContextConfig, at: int, offloads: Path
) -> ModelRequest:
    """Request ``at`` of the test's replay of the whole session under ``config``."""
    messages = [m for m in session.agent.history if isinstance(m, UserMessage | AssistantMessage)]
    model = MemorylessModel()
    async for step in replay(
        messages,
        context_window=model.context_window,
        counter=TokenCache(model.counter),
        config=config,
        materials=Materials(system=(SystemPart("system_prompt", DEMO_SYSTEM),)),
        tools=session.agent.tool_schemas(),
        summarizer=extractive_summarizer,
        offloader=RelativeFolder(offloads),
        max_output_tokens=model.max_output_tokens,
    ):
        if step.number == at:
            assert step.request is not None
            return step.request
    raise AssertionError(f"the replay made no request {at}")


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Session:
    # One origin for the grid (its run is the slow part); forks only read it.
    return asyncio.run(demo_session(tmp_path_factory.mktemp("origin")))


@pytest.mark.parametrize("name", sorted(CONFIGS))
@pytest.mark.parametrize("at", [1, 2, 3, 4, 5])
async def test_the_first_request_from_the_start_is_the_replays_request(
    session: Session, tmp_path: Path, name: str, at: int
) -> None:
    config = CONFIGS[name]
    branch = await fork(
        session.agent, at=at, config=config, arrival="from_start", root=tmp_path / "b"
    )
    (run,) = (await run_forward(branch, max_steps=1)).runs
    assert run.requests and run.requests[0] is not None and run.workspace is not None, run.error
    first = _conversation(run.requests[0])
    expected = _conversation(await _replayed(session, config, at, tmp_path / "mine"))
    assert [m.model_dump_json() for m in first] == [m.model_dump_json() for m in expected]
    if name.startswith("cut") and at >= 2:  # results cut by the replay, before the last turn
        assert any(TRUNCATION_MARKER in m.model_dump_json() for m in first[:-1])
