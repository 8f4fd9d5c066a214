"""The offline summarizer's text is pinned while its cost is cut (issue 54 item 3, i66-summ).

Every summary a `replay` writes with the default summarizer on each corpus session, at 16k
and 32k (where it compacts at all), digested per session and window; the digests were taken
on main (5e79c01) before any change of i66-summ and are kept here. Controls: the digest of a
summarizer changed by one character, and of one with a rule changed, must differ (so the
digest reads the text it pins). The generated histories' side is
`test_summary_same_as_before.py` (the implementations before kept there).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

import ctxlab.pipeline._handover as handover
from ctxlab import extractive_summarizer, load_transcript, replay
from ctxlab.messages import UserMessage
from ctxlab.pipeline import SummaryRequest
from ctxlab.tokens import default_counter
from tests.conftest import corpus_files, requires_corpus

Summarize = Callable[[SummaryRequest], Any]


async def summaries_digest(path: Path, window: int, write: Summarize) -> tuple[int, str]:
    """How many summaries a cold replay of ``path`` at ``window`` wrote with ``write``, and the
    SHA-256 of their fields (JSON, keys sorted) in the order written."""
    transcript = load_transcript(path)
    messages = transcript.messages
    start = next(i for i, m in enumerate(messages) if isinstance(m, UserMessage))
    digest = hashlib.sha256()
    written = 0

    async def recording(request: SummaryRequest) -> Mapping[str, Any]:
        nonlocal written
        answer = await write(request)
        digest.update(json.dumps(answer, sort_keys=True).encode())
        written += 1
        return answer

    steps = replay(
        messages[start:],
        context_window=window,
        counter=default_counter(),
        system=transcript.system,
        summarizer=recording,
    )
    async for _ in steps:
        pass
    return written, digest.hexdigest()[:16]


# Taken on main (5e79c01), before i66-summ changed the summarizer: (summaries, digest).
PINNED: dict[tuple[str, int], tuple[int, str]] = {
    ("claude_code__258c7280-ae70-4798-800f-63464d01a85d", 16000): (14, "4af4c0cdb5cf3d61"),
    ("claude_code__258c7280-ae70-4798-800f-63464d01a85d", 32000): (6, "1bb6fc9babed5c71"),
    ("claude_code__258c7280_agent-a881341", 16000): (1, "0413cb3a122692b6"),
    ("claude_code__258c7280_agent-a881341", 32000): (1, "0413cb3a122692b6"),
    ("claude_code__4d5611e5-241a-462a-8d15-5122611a9569", 16000): (16, "34e386f0137a11e0"),
    ("claude_code__4d5611e5-241a-462a-8d15-5122611a9569", 32000): (9, "c32795c730808662"),
    ("claude_code__4d5611e5_agent-a2898e3", 16000): (2, "cb85c652b1ce3575"),
    ("claude_code__4d5611e5_agent-a2898e3", 32000): (2, "cb85c652b1ce3575"),
    ("claude_code__6c2214d7_agent-afc096d", 16000): (2, "02d5c07890e2c83b"),
    ("claude_code__6c2214d7_agent-afc096d", 32000): (1, "ba65799b5521ced2"),
    ("claude_code__8463c716-a2ea-4c14-9efa-87158ebd9f20", 16000): (16, "ac5140e3ce62ccf5"),
    ("claude_code__8463c716-a2ea-4c14-9efa-87158ebd9f20", 32000): (7, "e75d3cb66c7f7a0e"),
    ("claude_code__ae4a77f8-aedd-4bc1-888f-c94edc91af04", 16000): (11, "817d3e0970ec3502"),
    ("claude_code__ae4a77f8-aedd-4bc1-888f-c94edc91af04", 32000): (5, "01d6cbe8fd2a1d9e"),
    ("claude_code__fa812bfe-b295-4cca-9c2f-fdf01028cb46", 16000): (13, "d1ca585bc4edb095"),
    ("claude_code__fa812bfe-b295-4cca-9c2f-fdf01028cb46", 32000): (6, "c4a707caf7a2344a"),
    ("claude_code__fa812bfe_agent-a93ccab", 16000): (2, "36813d7a213c419d"),
    ("claude_code__fa812bfe_agent-aa84377", 16000): (2, "4a12cc633d697b60"),
    ("claude_code__fa812bfe_agent-aa84377", 32000): (1, "28bdc77ee279f521"),
    ("mini_swe_agent__django__django-11138", 16000): (8, "903a4a489026c372"),
    ("mini_swe_agent__django__django-11138", 32000): (3, "2b30f21280f08def"),
    ("mini_swe_agent__django__django-15629", 16000): (2, "0aaa64cf40aecfdc"),
    ("mini_swe_agent__django__django-15629", 32000): (1, "66f680fd4684bf55"),
    ("mini_swe_agent__django__django-15957", 16000): (3, "0ede33f0ef29d239"),
    ("mini_swe_agent__django__django-15957", 32000): (1, "8e0e3875e8ab431c"),
    ("mini_swe_agent__django__django-16560", 16000): (4, "b48b1f22dc646ce6"),
    ("mini_swe_agent__django__django-16560", 32000): (1, "685dd00cfe70516e"),
    ("mini_swe_agent__matplotlib__matplotlib-22719", 16000): (2, "373181c6e3685132"),
    ("mini_swe_agent__psf__requests-1142", 16000): (3, "e82b59e482fe0344"),
    ("mini_swe_agent__psf__requests-1142", 32000): (1, "6c2fe4eaab2d9ef8"),
    ("mini_swe_agent__pylint-dev__pylint-6528", 16000): (9, "c9d22a8fe6ef9ef6"),
    ("mini_swe_agent__pylint-dev__pylint-6528", 32000): (3, "8c96ee1135f07570"),
    ("mini_swe_agent__pytest-dev__pytest-7490", 16000): (9, "76cbe9e30d333189"),
    ("mini_swe_agent__pytest-dev__pytest-7490", 32000): (2, "d006827cbc1d253d"),
    ("mini_swe_agent__sphinx-doc__sphinx-9229", 16000): (7, "e357acdc265238ff"),
    ("mini_swe_agent__sphinx-doc__sphinx-9229", 32000): (2, "d0bb31c785dd048f"),
    ("mini_swe_agent__sphinx-doc__sphinx-9258", 16000): (7, "452e4698e71cc4bb"),
    ("mini_swe_agent__sphinx-doc__sphinx-9258", 32000): (3, "91e372fa599de617"),
    ("mini_swe_agent__sympy__sympy-13031", 16000): (3, "b05ed3e0012d74f4"),
    ("mini_swe_agent__sympy__sympy-13031", 32000): (1, "1cfbb8e9f210e644"),
    ("mini_swe_agent__sympy__sympy-13091", 16000): (8, "0cfc5f81c881099a"),
    ("mini_swe_agent__sympy__sympy-13091", 32000): (3, "def064fa24dcccb0"),
    ("mini_swe_agent__sympy__sympy-14248", 16000): (4, "3edffa7e9513f623"),
    ("mini_swe_agent__sympy__sympy-14248", 32000): (2, "454bf3ca3a743f24"),
    ("mini_swe_agent__sympy__sympy-19040", 16000): (5, "77a6d6569edd0ccd"),
    ("mini_swe_agent__sympy__sympy-19040", 32000): (2, "311cb458f7b1c584"),
    ("swe_agent__ctf_web__i_got_id_demo", 16000): (1, "dedafc39bc7a0ab6"),
    (
        "swe_agent__gpt4__swe-bench-dev-easy_first_only__default__t-0.00__p-0.95__c-3.00__install-1__pydicom__pydicom-1458",
        16000,
    ): (1, "17205de22aab48e7"),
}


def _path(name: str) -> Path:
    found = [p for p in corpus_files() if p.stem == name]
    if not found:
        pytest.skip(f"{name}.jsonl is not in $CTXLAB_CORPUS/norm: the digests pin that corpus")
    return found[0]


@requires_corpus
@pytest.mark.parametrize(("name", "window"), sorted(PINNED))
async def test_summaries_as_written_before(name: str, window: int) -> None:
    assert (
        await summaries_digest(_path(name), window, extractive_summarizer) == PINNED[name, window]
    )


@requires_corpus
async def test_a_changed_summarizer_fails_the_digest() -> None:
    """The control: one character more in one field of every summary is seen."""

    async def changed(request: SummaryRequest) -> dict[str, str]:
        answer = await extractive_summarizer(request)
        return {**answer, "next_steps": answer["next_steps"] + "."}

    name, window = max(PINNED, key=lambda key: PINNED[key][0])
    written, digest = await summaries_digest(_path(name), window, changed)
    assert written == PINNED[name, window][0]
    assert digest != PINNED[name, window][1]


@requires_corpus
async def test_a_changed_rule_fails_the_digest(monkeypatch: pytest.MonkeyPatch) -> None:
    """The control on a rule of the summarizer (the values it lists per line), not its output."""
    monkeypatch.setattr(handover, "_VALUES_PER_LINE", 11)
    changed = [
        key
        for key in PINNED
        if await summaries_digest(_path(key[0]), key[1], extractive_summarizer) != PINNED[key]
    ]
    assert len(changed) >= len(PINNED) // 2
