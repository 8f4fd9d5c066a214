"""LangChain's token trigger, read and written one token exact (issue 56 item 5): LangChain's
``SummarizationMiddleware`` summarizes *at* its count (langchain 1.x ``summarization.py``,
``_should_summarize``: a clause fails only while ``total_tokens < threshold``), ctxlab above its
line (`compaction_due`: ``total > trigger``). Differential, in the library: at the boundary
counts T - 1, T and T + 1, the imported config compacts exactly where the middleware it was read
from summarizes, and the exported middleware summarizes exactly where its config compacts; with a
window, the count exported is the lower of ctxlab's lines there, one more."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import ContextConfig
from ctxlab.manifest import Thresholds
from ctxlab.pipeline._compaction import compaction_due

pytest.importorskip("langchain.agents")

from langchain.agents.middleware import SummarizationMiddleware
from langchain_core.messages import AIMessage, HumanMessage

from tests.integrations.test_langchain import _Model

MESSAGES = [HumanMessage(content="Fix the parser."), AIMessage(content="On it.")]
"""Too few to pass a message trigger, and no reported usage: only the token count decides."""


def _middleware(trigger: Any) -> SummarizationMiddleware:
    model = _Model(
        messages=iter([AIMessage(content="s")]), sent=[], profile={"max_input_tokens": 200_000}
    )
    return SummarizationMiddleware(
        model, trigger=trigger, keep=("messages", 1), trim_tokens_to_summarize=None
    )


def _langchain_fires(middleware: SummarizationMiddleware, total: int) -> bool:
    return bool(middleware._should_summarize(list(MESSAGES), total))


def _ctxlab_fires(config: ContextConfig, total: int, window: int) -> bool:
    line = Thresholds.compute(config, window).trigger_tokens
    return compaction_due(config.compaction, len(MESSAGES), total, line)


WINDOW = 1_000_000  # the share of the window is far above every count below


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 400_000))
def test_an_imported_token_trigger_fires_at_langchains_count(threshold: int) -> None:
    middleware = _middleware(("tokens", threshold))
    config = ContextConfig.from_([middleware], "langchain")
    for total in (threshold - 1, threshold, threshold + 1):
        assert _ctxlab_fires(config, total, WINDOW) == _langchain_fires(middleware, total), total
    # The boundary itself: LangChain summarizes at T, not at T - 1.
    assert _langchain_fires(middleware, threshold)
    assert threshold == 1 or not _langchain_fires(middleware, threshold - 1)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 400_000))
def test_an_exported_token_trigger_fires_where_ctxlab_compacts(line: int) -> None:
    config = ContextConfig.preset("ctxlab").merge(compaction={"trigger_tokens": line})
    (summarizing,) = config.export("langchain", model=_middleware(("tokens", 1)).model).value
    for total in (line - 1, line, line + 1, line + 2):
        assert _langchain_fires(summarizing, total) == _ctxlab_fires(config, total, WINDOW), total


def _lines(ratio: float, tokens: int | None) -> ContextConfig:
    """ctxlab's preset compacting above ``ratio`` of the window or above ``tokens`` if given
    (the lower line), keeping a tail of 0.1 of the window."""
    return ContextConfig.preset("ctxlab").merge(
        trigger_ratio=ratio, reserve_ratio=0.1, compaction={"trigger_tokens": tokens}
    )


LINES_AND_WINDOWS = st.tuples(
    st.builds(
        _lines, st.sampled_from([0.3, 0.5, 0.7, 0.8, 0.9]), st.none() | st.integers(1_000, 400_000)
    ),
    st.integers(10_000, 1_000_000),
)
"""A config with a share and maybe a count as its trigger, and the window it is exported for."""


@settings(max_examples=30, deadline=None)
@given(LINES_AND_WINDOWS)
def test_an_exported_line_with_a_window_fires_where_ctxlab_compacts_there(
    lines: tuple[ContextConfig, int],
) -> None:
    config, window = lines
    model = _middleware(("tokens", 1)).model
    (summarizing,) = config.export("langchain", model=model, context_window=window).value
    line = Thresholds.compute(config, window).trigger_tokens
    for total in (line - 1, line, line + 1):
        assert _langchain_fires(summarizing, total) == _ctxlab_fires(config, total, window), total


@settings(max_examples=40, deadline=None)
@given(LINES_AND_WINDOWS)
def test_langchains_token_trigger_is_the_lower_line(lines: tuple[ContextConfig, int]) -> None:
    config, window = lines
    model = _middleware(("tokens", 1)).model
    (summarizing,) = config.export("langchain", model=model, context_window=window).value
    # ctxlab's line there (the lower of the share and the count, within the input limit), one
    # more: LangChain summarizes at its count, ctxlab above its line.
    ratio, tokens = config.trigger_ratio, config.compaction.trigger_tokens
    share = min(round(ratio * window), Thresholds.compute(config, window).input_limit)
    line = share if tokens is None else min(tokens, share)
    assert summarizing.trigger == ("tokens", line + 1)
    assert summarizing.keep == ("tokens", int(0.1 * window))


def test_round_trips_keep_langchains_count() -> None:
    middleware = _middleware(("tokens", 150_000))
    config = ContextConfig.from_([middleware], "langchain")
    (again,) = config.export("langchain", model=middleware.model).value
    assert again.trigger == ("tokens", 150_000)
