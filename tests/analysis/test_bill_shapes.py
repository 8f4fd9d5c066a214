"""The recorded requests sized in the provider's tokens from their bills' totals: the tokens up
to each request's end are its billed input; what a request shares with the one before keeps
its size; a bill smaller than the shared prefix takes the prefix as changed (read only up to
the fixed part, and the request after reads what the changed one wrote); a bill larger than
the parts a request shows adds a part the file does not show."""

from __future__ import annotations

from pathlib import Path

from ctxlab import load
from ctxlab.analysis import cache_check
from ctxlab.analysis._bill_shapes import CHANGED, GREW, _share, _sized, _Sizing
from ctxlab.analysis._cost import RequestShape
from tests.analysis.claude_code_sessions import Turn, usages, write_session


def _shape(keys: list[str], tokens: list[int], fixed: int = 1) -> RequestShape:
    return RequestShape(keys, tokens, (fixed - 1, len(keys) - 1), fixed=fixed)


def test_new_parts_share_what_the_bill_adds_in_proportion_to_their_counts() -> None:
    sizing = _Sizing()
    keys, sizes, note = _sized(_shape(["u", "a", "b"], [5_000, 100, 300]), 9_000, 1.0, sizing, 0)
    # The fixed part at its size (the unrecorded part would be; here a counted one at ratio
    # 1.0), the rest 4,000 tokens at 1 : 3.
    assert (keys, sizes, note) == (["u", "a", "b"], [5_000, 1_000, 3_000], "")
    sizing.keys, sizing.sizes = keys, sizes
    keys, sizes, _ = _sized(
        _shape(["u", "a", "b", "c"], [5_000, 100, 300, 50]), 9_500, 1.0, sizing, 1
    )
    assert sizes == [5_000, 1_000, 3_000, 500] and sum(sizes) == 9_500


def test_a_bill_below_the_shared_prefix_changes_it_and_the_next_request_reads_the_change() -> None:
    sizing = _Sizing()
    sizing.keys, sizing.sizes = ["u", "a", "b"], [5_000, 1_000, 3_000]
    keys, sizes, note = _sized(
        _shape(["u", "a", "b", "c"], [5_000, 100, 300, 50]), 8_000, 1.0, sizing, 7
    )
    assert note == CHANGED
    assert keys == ["u", "a@changed7", "b@changed7", "c@changed7"]
    assert sizes[0] == 5_000 and sum(sizes) == 8_000
    sizing.keys, sizing.sizes = keys, sizes
    # The request after goes by the new keys: it shares all of the changed one.
    keys, sizes, note = _sized(
        _shape(["u", "a", "b", "c", "d"], [5_000, 100, 300, 50, 10]), 8_400, 1.0, sizing, 8
    )
    assert keys[:4] == ["u", "a@changed7", "b@changed7", "c@changed7"] and note == ""
    assert sizes[:4] == sizing.sizes and sizes[4] == 400


def test_a_bill_above_the_parts_a_request_shows_adds_one_the_file_does_not() -> None:
    sizing = _Sizing()
    sizing.keys, sizing.sizes = ["u", "a"], [5_000, 1_000]
    keys, sizes, note = _sized(_shape(["u", "a"], [5_000, 100]), 6_250, 1.0, sizing, 3)
    assert (keys, sizes, note) == (["u", "a", "unseen@3"], [5_000, 1_000, 250], GREW)


def test_shares_are_whole_tokens_that_add_up_exactly() -> None:
    assert _share(10, [1.0, 1.0, 1.0]) == [3, 4, 3]
    assert _share(7, [0.0, 0.0]) == [4, 3]
    assert sum(_share(1_000_003, [0.1, 2.7, 33.3, 0.0001])) == 1_000_003


def test_a_shrunk_bill_in_a_session_reads_only_the_fixed_part_then_all_again(
    tmp_path: Path,
) -> None:
    turns = [Turn(0, 20_000), Turn(10, 3_000), Turn(10, 2_000), Turn(10, 1_000)]
    recorded = usages(turns)
    # The third request billed 6,000 less than the second: content the file keeps was not sent.
    recorded[2] = {**recorded[2], "input_tokens": 1, "cache_read_input_tokens": 0}
    recorded[2]["cache_creation_input_tokens"] = 18_999
    recorded[2]["cache_creation"] = {"ephemeral_5m_input_tokens": 18_999}
    recorded[3] = {**recorded[3], "cache_read_input_tokens": 18_999}
    recorded[3]["cache_creation_input_tokens"] = 1_000
    recorded[3]["cache_creation"] = {"ephemeral_5m_input_tokens": 1_000}
    frame = cache_check(load(write_session(tmp_path / "shrunk.jsonl", turns, recorded=recorded)))
    assert list(frame["note"]) == ["", "", CHANGED, ""]
    fixed = frame.at[2, "modelled_read"]
    assert 0 < fixed < 19_000  # the fixed part only
    assert frame.at[3, "modelled_read"] == 19_000  # all the changed request wrote
    assert bool(frame.at[3, "agrees"])
