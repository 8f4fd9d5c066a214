"""Every prepared request and every figure of a replay, pinned by digest (issue 54: preparation
made faster must prepare the same requests): the corpus sessions of ``test_graded_on_demand``
× configs × windows, each replay as a user calls it (the default, extractive summarizer),
digested over every step's request as a provider receives it (`ModelRequest.to_anthropic`), its manifest (every item, count and
transform) and its compaction (the summary's fields). The pins were taken before the speed work
of issue 54's item 3 (``tests/fixtures/prepared_digests.json``); a control replays another
config and must not match its pin. It complements ``test_replay_figures_pinned.py`` (one
long built session) with real sessions of two harnesses and configs that truncate and compact
early.

Regenerate the pins (only with the cause of a change checked and stated) with
``CTXLAB_PIN_DIGESTS=1 pytest tests/analysis/test_prepared_digest.py``.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from ctxlab import ContextConfig, TokenCache, default_counter
from ctxlab.analysis._replay import ReplayStep
from ctxlab.io._transcript import load_transcript
from tests.analysis.pinned_fields import pinned_fields
from tests.analysis.test_graded_on_demand import SESSIONS, _path, _plain
from tests.conftest import requires_corpus
from tests.helpers import replayed

PINS = Path(__file__).parents[1] / "fixtures" / "prepared_digests.json"
CONFIGS = {
    "default": ContextConfig(),
    "early": ContextConfig(trigger_ratio=0.5, reserve_ratio=0.2),
    "tight": ContextConfig(tool_result_limit=2_000, trigger_ratio=0.7),
}
WINDOWS = (10_000, 16_000)


def _step_figures(step: ReplayStep) -> list[Any]:
    request = step.request.to_anthropic() if step.request is not None else None
    compaction = None
    if step.compaction is not None:
        # Every field but the retention (graded on demand: not preparation's figure); those
        # added after the pins only when they hold something (`pinned_fields`).
        compaction = {
            name: _plain(value)
            for name, value in pinned_fields(step.compaction, without=frozenset({"retention"}))
        }
    return [step.index, request, _plain(step.manifest), compaction]


async def digest(name: str, config: ContextConfig, window: int) -> tuple[str, int]:
    """The digest of every step of a replay of corpus session ``name``, and its compactions."""
    transcript = load_transcript(_path(name))
    figures, compactions = [], 0
    counter = TokenCache(default_counter())
    run = replayed(
        transcript, context_window=window, counter=counter, config=config, tools=transcript.tools
    )
    async for step in run:
        figures.append(_step_figures(step))
        compactions += step.compaction is not None
    text = json.dumps(figures, sort_keys=True, default=repr)
    return hashlib.sha256(text.encode()).hexdigest(), compactions


def _cases() -> list[tuple[str, str, int]]:
    return [(s, c, w) for s in SESSIONS for c in CONFIGS for w in WINDOWS]


def _key(name: str, config: str, window: int) -> str:
    return f"{name}|{config}|{window}"


@requires_corpus
@pytest.mark.parametrize(("name", "config", "window"), _cases())
async def test_every_prepared_request_equals_its_pin(name: str, config: str, window: int) -> None:
    found, compactions = await digest(name, CONFIGS[config], window)
    pins = json.loads(PINS.read_text()) if PINS.exists() else {}
    if os.environ.get("CTXLAB_PIN_DIGESTS"):
        pins[_key(name, config, window)] = found
        PINS.write_text(json.dumps(pins, indent=1, sort_keys=True) + "\n")
    assert compactions >= 1  # the summarizer and the compaction path ran
    assert found == pins[_key(name, config, window)]


@requires_corpus
async def test_the_control_another_config_does_not_match_the_pin() -> None:
    # The digest sees a change: a config the pin was not taken with differs from it.
    name = SESSIONS[0]
    found, _ = await digest(name, ContextConfig(trigger_ratio=0.6), WINDOWS[0])
    pins = json.loads(PINS.read_text())
    assert found != pins[_key(name, "default", WINDOWS[0])]
    assert found not in pins.values()
