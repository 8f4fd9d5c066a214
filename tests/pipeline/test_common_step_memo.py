"""A memo whose scan the common step moved on in place (i67-step) gives what a fresh memo gives:
after a common step that failed validation (its scan already moved on to the refused
conversation), then retried with the old conversation or a repaired one; and when two sessions
share one memo, or a memo is copied at a fork and each copy goes its own way (review i67-rev2).
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from ctxlab import (
    ApproximateCounter,
    AssistantMessage,
    ContextConfig,
    InvalidToolPairs,
    TokenCache,
    ToolUseBlock,
    UserMessage,
    WorkingState,
    prepare,
)
from ctxlab.pipeline import PreparationMemo
from tests.helpers import session, tool_result
from tests.pipeline.test_properties import run

CACHE = TokenCache(ApproximateCounter())
CONFIG = ContextConfig()
MESSAGES = session(10, output_chars=200)


def _prepared(conversation: list[Any], memo: PreparationMemo) -> Any:
    state = WorkingState(conversation=tuple(conversation))
    return run(prepare(state, context_window=200_000, counter=CACHE, config=CONFIG, memo=memo))


def _figures(conversation: list[Any], memo: PreparationMemo) -> tuple[Any, ...]:
    done = _prepared(conversation, memo)
    manifest = done.manifest
    return (done.request, manifest.items, manifest.transforms, manifest.estimated_input_tokens)


def _fresh(conversation: list[Any]) -> tuple[Any, ...]:
    return _figures(conversation, PreparationMemo())


def test_a_failed_common_step_then_a_retry_give_what_a_fresh_memo_gives() -> None:
    memo = PreparationMemo()
    for end in (3, 5):
        _prepared(MESSAGES[:end], memo)
    assert memo.last is not None
    scan = memo.scan
    call = ToolUseBlock(id="open", name="bash", input={"cmd": "ls"})
    refused = [*MESSAGES[:5], AssistantMessage(content=(call,))]
    with pytest.raises(InvalidToolPairs):
        _prepared(refused, memo)
    # The common step moved the scan on before validation refused the step: the memo keeps it
    # (a whole scan of the refused conversation, as the full path keeps its own) but no last
    # step, so the next step is prepared in full.
    assert memo.scan is scan and scan.conversation == tuple(refused)
    assert memo.last is None
    repaired = [*refused, tool_result("open", "a.py b.py")]
    for conversation in (MESSAGES[:5], MESSAGES[:7], refused[:5], repaired, MESSAGES[:9]):
        assert _figures(conversation, memo) == _fresh(conversation)


def test_one_memo_shared_by_two_sessions_gives_what_a_memo_each_gives() -> None:
    # Each step of one session finds the memo left by the other's (the same config, the same
    # caller: only the conversation tells them apart).
    memo = PreparationMemo()
    other = session(10, output_chars=200, task="Fix src/other.py")
    for end in (1, 3, 5, 7, 9):
        for conversation in (MESSAGES[:end], other[:end]):
            assert _figures(conversation, memo) == _fresh(conversation)


@pytest.mark.parametrize("copier", [copy.copy, copy.deepcopy], ids=["copy", "deepcopy"])
def test_a_memo_copied_at_a_fork_gives_each_branch_what_a_fresh_memo_gives(copier: Any) -> None:
    memo = PreparationMemo()
    for end in (1, 3):
        _prepared(MESSAGES[:end], memo)
    branch, scan = copier(memo), memo.scan
    other = [
        *MESSAGES[:3],
        UserMessage(content="a branch of its own"),
        AssistantMessage(content="ok"),
    ]
    for end in (5, 7):
        assert _figures(MESSAGES[:end], memo) == _fresh(MESSAGES[:end])
        longer = [*other, UserMessage(content=f"turn {end}")]
        assert _figures(longer, branch) == _fresh(longer)
        other = [*longer, AssistantMessage(content="ok")]
    # Every step of ``memo`` after the fork was a common one (its scan moved on in place), and
    # so was the branch's second (its own scan since its first, a full one).
    assert memo.scan is scan and branch.scan is not scan
    assert branch.last is not None and branch.last.scan is branch.scan
