"""A result the pipeline cut is not cut again under the same limit: its head is kept byte for
byte even when its notice names a path long enough to put the block over the limit (a fork's
run names its copy of the file; a replay offloads into another folder). Cut under a smaller
limit, it is cut further (the latest turn at compaction)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab.messages import ToolResultBlock, UserMessage
from ctxlab.pipeline._results import TRUNCATION_MARKER, truncate_results, truncation_notice
from ctxlab.tokens import TokenCache, default_counter

_lines = st.lists(
    st.text(alphabet="abcdefghij klmnop{}()=:;,.0123456789", min_size=0, max_size=60),
    min_size=30,
    max_size=120,
)


def _one(text: str) -> tuple[UserMessage]:
    return (UserMessage(content=(ToolResultBlock(tool_use_id="call_1", content=text),)),)


def _text(conversation: tuple[UserMessage, ...]) -> str:
    (block,) = conversation[0].tool_results
    return block.text


@settings(max_examples=60, database=None, deadline=None)
@given(lines=_lines, limit=st.integers(min_value=120, max_value=400), deep=st.integers(0, 12))
def test_a_cut_result_under_a_longer_path_is_not_cut_again(
    lines: list[str], limit: int, deep: int
) -> None:
    cache = TokenCache(default_counter())
    text = "\n".join(lines)
    cut, _ = truncate_results(_one(text), limit, None, cache)
    first = _text(cut)
    if TRUNCATION_MARKER not in first:
        return  # short enough to be kept whole
    head = first[: first.rfind(TRUNCATION_MARKER)]
    # The same head, now naming a file deep in another folder (as a fork's run names its copy).
    path = "/" + "/".join(f"run-{n}/workspace-{n * 7}" for n in range(deep + 1)) + "/out.txt"
    moved = head + truncation_notice(path)
    again, transforms = truncate_results(_one(moved), limit, None, cache)
    assert _text(again) == moved
    assert transforms == []


def test_a_cut_result_under_a_smaller_limit_is_cut_further() -> None:
    cache = TokenCache(default_counter())
    text = "\n".join(f"line {n}: some output of a command" for n in range(200))
    cut, _ = truncate_results(_one(text), 400, None, cache)
    smaller, (transform,) = truncate_results(cut, 200, None, cache)
    first, second = _text(cut), _text(smaller)
    notice = first[first.rfind(TRUNCATION_MARKER) :]
    assert second.endswith(notice) and len(second) < len(first)
    assert first.startswith(second[: second.rfind(TRUNCATION_MARKER)].rstrip("\n"))
    assert transform.kind == "tool_result_truncation"
    assert cache.block(smaller[0].tool_results[0]) <= 200
