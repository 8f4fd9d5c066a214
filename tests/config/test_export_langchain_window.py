"""LangChain export at a window too small for its kept tail (review of stop 64): LangChain's
``SummarizationMiddleware`` refuses a kept tail of 0 tokens, which ``int(reserve_ratio ×
window)`` is below a tenth of a token's share — the error named the model ("model must be the
LangChain chat model") though the model was fine. It now names the window, the tail and the
smallest window that exports. The control: at that smallest window the export holds a tail of
one token."""

from __future__ import annotations

import pytest

from ctxlab import ContextConfig
from ctxlab.exceptions import UsageError

pytest.importorskip("langchain.agents")

from langchain_core.messages import AIMessage

from tests.integrations.test_langchain import _Model


def _model() -> _Model:
    return _Model(
        messages=iter([AIMessage(content="s")]), sent=[], profile={"max_input_tokens": 200_000}
    )


@pytest.mark.parametrize("window", [1, 2, 9])
def test_a_window_too_small_for_the_tail_is_named(window: int) -> None:
    with pytest.raises(UsageError) as caught:
        ContextConfig().export("langchain", model=_model(), context_window=window)
    message = str(caught.value)
    assert f"context_window={window}" in message
    assert "reserve_ratio=0.1" in message and "at least 10 tokens" in message
    assert "model must be" not in message


def test_the_control_the_smallest_window_exports_a_one_token_tail() -> None:
    exported = ContextConfig().export("langchain", model=_model(), context_window=10)
    (summarizing,) = exported.value
    assert summarizing.keep == ("tokens", 1)
    other = ContextConfig(reserve_ratio=0.3)  # another ratio: another smallest window
    with pytest.raises(UsageError, match="at least 4 tokens"):
        other.export("langchain", model=_model(), context_window=3)
    kept = other.export("langchain", model=_model(), context_window=4).value[0].keep
    assert kept == ("tokens", 1)
