"""Tool-result truncation as docs/concepts/pipeline.md promises it: a result at the limit is kept
whole and one token over is cut; a cut result, its marker and the longest offload path included,
fits the limit (exact counts, generated texts, limits and folders; the tail is allowed the
notice of a 121-character path so that a result is cut alike in every folder — a longer path
costs its extra tokens; a limit below the notice's own size keeps the notice alone); an offload that fails keeps the head
with no pointer to a missing file; a result cut before and cut again under a smaller limit keeps
its notice and the file it names."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import ContextConfig, WorkingState, prepare
from ctxlab.exceptions import OffloadError
from ctxlab.messages import ToolResultBlock, UserMessage
from ctxlab.pipeline import TRUNCATION_MARKER, WorkspaceOffloader
from ctxlab.pipeline._results import truncation_notice
from ctxlab.tokens import ApproximateCounter, TokenCache, default_counter
from tests.helpers import tool_turn

WINDOW = 200_000


def _result(prep: object) -> ToolResultBlock:
    block = prep.state.conversation[-1].content[0]  # type: ignore[attr-defined]
    assert isinstance(block, ToolResultBlock)
    return block


async def _prepared(output: str, limit: int, counter: object, **options: object) -> object:
    messages = [UserMessage(content="go"), *tool_turn("call_7", output)]
    return await prepare(
        WorkingState(conversation=tuple(messages)),
        context_window=WINDOW,
        counter=counter,  # type: ignore[arg-type]
        config=ContextConfig(tool_result_limit=limit),
        **options,  # type: ignore[arg-type]
    )


async def test_a_result_at_the_limit_is_whole_and_one_over_is_cut() -> None:
    counter = ApproximateCounter()
    output = "\n".join(f"row {n}: " + "abc " * 30 for n in range(60))
    size = TokenCache(counter).block(ToolResultBlock(tool_use_id="call_7", content=output))
    whole = await _prepared(output, size, counter)
    assert _result(whole).text == output
    assert whole.manifest.transforms == ()  # type: ignore[attr-defined]
    cut = await _prepared(output, size - 1, counter)
    assert _result(cut).text != output and TRUNCATION_MARKER in _result(cut).text
    (transform,) = cut.manifest.transforms  # type: ignore[attr-defined]
    assert (transform.kind, transform.tokens_before) == ("tool_result_truncation", size)


_words = st.text(alphabet="abcdefghij klmnop\n{}[]()=:;,.0123456789éß", min_size=1, max_size=12)


@settings(max_examples=40, database=None, deadline=None)
@given(
    words=st.lists(_words, min_size=200, max_size=900),
    limit=st.integers(60, 1_500),
    folder=st.text(alphabet="abcxyz_-", min_size=1, max_size=60),
)
async def test_a_cut_result_fits_its_limit_with_the_longest_pointer(
    tmp_path_factory: object, words: list[str], limit: int, folder: str
) -> None:
    # Exact counts: the marker, the newline joining it and the path it names all count.
    output = " ".join(words)
    root = tmp_path_factory.mktemp("w") / folder  # type: ignore[attr-defined]
    counter = default_counter()
    prep = await _prepared(output, limit, counter, offloader=WorkspaceOffloader(root))
    result = _result(prep)
    cache = TokenCache(counter)
    if cache.block(ToolResultBlock(tool_use_id="call_7", content=output)) <= limit:
        assert result.text == output
        return
    (kept,) = [t for t in prep.manifest.transforms if t.kind == "tool_result_truncation"]  # type: ignore[attr-defined]
    assert kept.tokens_after == cache.block(result)
    assert Path(kept.detail).read_text() == output
    notice = result.text[result.text.rfind(TRUNCATION_MARKER) :]
    # The tail is allowed the notice of a 121-character path, whatever path it names (a result
    # is cut alike in every folder): a longer path costs its extra tokens beyond the limit.
    sample = counter.count_text(truncation_notice("/" + "x" * 120))
    over = max(counter.count_text(notice) - sample, 0)
    if sample + 2 + 8 <= limit:  # room for the notice and the block's framing
        assert cache.block(result) <= limit + over
        assert output.startswith(result.text[: -len(notice)].rstrip("\n"))
    else:
        assert result.text == notice  # below the notice's own size: the notice alone


class _Full:
    def write(self, relative_path: str, data: bytes) -> str:
        raise OffloadError("disk full")


async def test_a_failed_offload_keeps_the_head_and_names_no_file() -> None:
    output = "\n".join(f"line {n} of the build log" for n in range(800))
    prep = await _prepared(output, 200, ApproximateCounter(), offloader=_Full())
    text = _result(prep).text
    assert text.startswith("line 0 of the build log")
    assert text.endswith(
        f"{TRUNCATION_MARKER}\n<system-reminder>The remaining content has been omitted for "
        "limited context.</system-reminder>"
    )
    kinds = [(t.kind, t.detail) for t in prep.manifest.transforms]  # type: ignore[attr-defined]
    assert kinds == [("offload_failed", "disk full"), ("tool_result_truncation", "")]


async def test_a_result_cut_again_keeps_its_notice_and_file(tmp_path: Path) -> None:
    counter = ApproximateCounter()
    output = "\n".join(f"row {n}: " + "value " * 12 for n in range(600))
    first = await _prepared(output, 800, counter, offloader=WorkspaceOffloader(tmp_path))
    once = _result(first).text
    cut = once.rfind(TRUNCATION_MARKER)
    notice = once[cut:]
    (path,) = (tmp_path / "context_offload").glob("tool_result-call_7-*.txt")
    assert str(path) in notice
    # The same conversation under a smaller limit: the head is cut further, the notice and
    # the file it points to are the ones written the first time (nothing written again).
    again = await prepare(
        first.state,  # type: ignore[attr-defined]
        context_window=WINDOW,
        counter=counter,
        config=ContextConfig(tool_result_limit=300),
        offloader=WorkspaceOffloader(tmp_path),
    )
    twice = _result(again).text
    assert twice.endswith(notice)
    assert once.startswith(twice[: twice.rfind(TRUNCATION_MARKER)].rstrip("\n"))
    assert len(twice) < len(once)
    sample = counter.count_text(truncation_notice("/" + "x" * 120))
    over = max(counter.count_text(notice) - sample, 0)
    assert TokenCache(counter).block(_result(again)) <= 300 + over
    assert list((tmp_path / "context_offload").iterdir()) == [path]
    assert path.read_text() == output
