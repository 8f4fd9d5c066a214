"""Offloading large tool output: files never overwrite each other or other content; without a workspace the newest output is truncated, never pruned."""

from __future__ import annotations

from pathlib import Path

import pytest


async def test_offloaded_outputs_never_overwrite_each_other(tmp_path: Path) -> None:
    from ctxlab import ContextConfig, WorkingState, WorkspaceOffloader
    from tests.helpers import prepared, tool_turn

    long_prefix = "p" * 130
    ids = ["call:1", "call/1", long_prefix + "a", long_prefix + "b"]
    outputs = {tid: f"output of {tid} " + "z" * 90_000 for tid in ids}
    messages: list = [{"role": "user", "content": "go"}]
    conversation = WorkingState.of(messages).conversation
    for tid in ids:
        conversation = (*conversation, *tool_turn(tid, outputs[tid]))
    offloader = WorkspaceOffloader(tmp_path)
    truncation = ContextConfig(tool_result_limit=500, tool_result_eviction={"enabled": False})
    for config in (ContextConfig(), truncation):  # eviction by characters, truncation by tokens
        prep = await prepared(
            conversation, context_window=1_000_000, config=config, offloader=offloader
        )
        paths = [t.detail for t in prep.manifest.transforms if t.detail.startswith(str(tmp_path))]
        assert len(paths) == len(set(paths)) == 4
        for transform in prep.manifest.transforms:
            if transform.detail:
                assert Path(transform.detail).read_text() == outputs[transform.target]
    # The same id in another session, with other output: a new file; the old ones stay as they were.
    first = {p: p.read_text() for p in tmp_path.rglob("*.txt")}
    again = (conversation[0], *tool_turn("call:1", "other output " + "q" * 90_000))
    await prepared(again, context_window=1_000_000, offloader=offloader)
    assert {p: p.read_text() for p in first} == first  # every earlier file as it was
    assert len(sorted(tmp_path.rglob("*.txt"))) == len(first) + 1


def test_the_offloader_never_replaces_a_file_with_other_content(tmp_path: Path) -> None:
    from ctxlab import WorkspaceOffloader

    offloader = WorkspaceOffloader(tmp_path)
    first = offloader.write("out/a.txt", b"one")
    assert offloader.write("out/a.txt", b"one") == first  # the same output: reused
    second = offloader.write("out/a.txt", b"two")
    assert second != first and Path(first).read_bytes() == b"one"
    assert Path(second).read_bytes() == b"two" and second.endswith("a-1.txt")


@pytest.mark.parametrize("chars", [105_000, 210_000])
async def test_without_a_workspace_the_newest_large_output_is_truncated_never_pruned(
    chars: int, tiktoken_counter: object
) -> None:
    from ctxlab import WorkingState, extractive_summarizer, prepare
    from ctxlab.pipeline import TRUNCATION_MARKER
    from tests.helpers import session, tool_turn

    output = "".join(f"row {i}: " + "w" * 70 + "\n" for i in range(chars // 78))
    messages = (*session(6, output_chars=2000), *tool_turn("big", output))
    prep = await prepare(
        WorkingState(conversation=tuple(messages)),
        context_window=32_000,
        counter=tiktoken_counter,  # type: ignore[arg-type]
        summarizer=extractive_summarizer,
    )
    newest = prep.state.conversation[-1].content[0].text  # type: ignore[union-attr]
    assert "pruned" not in newest
    if TRUNCATION_MARKER in newest:
        assert newest.endswith(
            f"{TRUNCATION_MARKER}\n<system-reminder>The remaining content has been omitted for "
            "limited context.</system-reminder>"
        )
        assert newest.startswith("row 0: ") and len(newest) > 20_000  # the head, up to the limit
    else:
        assert newest == output
    assert prep.manifest.estimated_input_tokens <= prep.manifest.input_limit


def test_an_offload_name_is_unique_to_the_id_and_the_content() -> None:
    from ctxlab.pipeline._offload import offload_name

    first, second = offload_name("call_1", b"first output"), offload_name("call_1", b"other")
    assert first != second  # one id, two outputs: two names, neither overwrites the other
    assert first.startswith("call_1-") and second.startswith("call_1-")
    assert offload_name("call_1", b"first output") == first  # the same output: the same file
    # Ids that clean to the same text still get their own names.
    assert offload_name("call:1", b"x") != offload_name("call/1", b"x")
