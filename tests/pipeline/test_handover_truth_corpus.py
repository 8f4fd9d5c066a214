"""The handover of real sessions at an 8k window, audited by `handover_audit` (code of its own,
reading the recording): no false "fixed", no "→ ok" on a command that never passed, no "none
recorded" after a failed run. The sessions hold what the audit found false before issue 53: runs
mini-SWE-agent killed (pylint-6528, sympy-19040), a reproduction's error printed again by a later
run (django-15957), heredocs a cut name stood for (django-11138)."""

from __future__ import annotations

import pytest

from ctxlab import ContextConfig, TiktokenCounter, load_transcript, replay
from ctxlab.messages import request_start
from tests.conftest import corpus_files, requires_corpus
from tests.pipeline.handover_audit import Audit, audit, request_text

SESSIONS = (
    "mini_swe_agent__pylint-dev__pylint-6528",
    "mini_swe_agent__sympy__sympy-19040",
    "mini_swe_agent__django__django-15957",
    "mini_swe_agent__django__django-11138",
)


@requires_corpus
@pytest.mark.parametrize("name", SESSIONS)
async def test_the_handover_at_8k_makes_no_false_claim(
    name: str, tiktoken_counter: TiktokenCounter
) -> None:
    path = next(p for p in corpus_files() if p.name.startswith(name))
    transcript = load_transcript(path)
    # The replay starts at the first message a request can start from: counts are from there.
    messages = transcript.messages[request_start(transcript.messages) :]
    found, done = Audit(), 0
    async for step in replay(
        messages,
        context_window=8_000,
        counter=tiktoken_counter,
        config=ContextConfig.preset("agentscope"),  # results cut to 3,000 tokens: 8k can run
        system=transcript.system,
        tools=transcript.tools,
        grade=False,
    ):
        summary = step.state.summary
        if step.compaction is None or summary is None or not summary.fields:
            continue
        end = summary.compacted_messages
        found.add(
            audit(summary.fields, messages[:end], messages[done:end], request_text(step.request))
        )
        done = end
    assert found.summaries > 3
    assert (found.false_fixed, found.false_ok, found.none_after_failure) == ([], [], 0)
