"""Cline, Roo Code and Kilo Code task folders (``tests/fixtures/cline``, hand-made from the tools'
own types by ``make_fixture.py``): the whole API history with each request's usage from the UI
log — checked against counts and usage read from the raw files here, by the test's own reading
— loaded from the folder or either file, listed once by `sessions`, and hostile variants
refused with a typed error or loaded with their losses counted."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import ctxlab
from ctxlab import load
from ctxlab.analysis._recorded import recorded_compactions
from ctxlab.exceptions import MessageFormatError
from ctxlab.messages import ProviderUsage
from tests.io.mutate import cut, loads_or_refuses, mutated
from tests.io.shown import added_up
from tests.strategies import SETTINGS

ROOT = Path(__file__).parents[1] / "fixtures" / "cline"
CLINE = ROOT / "saoudrizwan.claude-dev" / "tasks" / "1770000000000"
ROO = ROOT / "rooveterinaryinc.roo-cline" / "tasks" / "0199aa10-roo-task"
KILO = ROOT / "kilocode.kilo-code" / "tasks" / "1754000000000"


def _raw(task: Path) -> tuple[list[Any], list[Any]]:
    return (
        json.loads((task / "api_conversation_history.json").read_text()),
        json.loads((task / "ui_messages.json").read_text()),
    )


def _billed(ui: list[Any]) -> list[dict[str, Any]]:
    """The test's own reading of the UI log: the requests that recorded tokens, in order."""
    infos = [json.loads(m["text"]) for m in ui if m.get("say") == "api_req_started"]
    return [i for i in infos if i.get("tokensIn") or i.get("tokensOut")]


def _check_counts(task: Path) -> ctxlab.Transcript:
    history, ui = _raw(task)
    transcript = load(task)
    assert transcript.meta["source"] == "cline" and transcript.name == task.name
    messages = [m for m in history if m.get("role") in ("user", "assistant")]

    def raw(kind: str, key: str) -> list[str]:
        """The blocks of this kind in the history, in order, by their id's key."""
        blocks = [b for m in messages if isinstance(m["content"], list) for b in m["content"]]
        return [b[key] for b in blocks if b["type"] == kind]

    raw_calls, raw_results = raw("tool_use", "id"), raw("tool_result", "tool_use_id")
    uses = [b.id for m in transcript.messages if m.role == "assistant" for b in m.tool_uses]
    results = [
        b.tool_use_id for m in transcript.messages if m.role == "user" for b in m.tool_results
    ]
    assert uses == raw_calls
    synthesized = transcript.meta.get("synthesized_results", 0)
    assert len(results) == len(raw_results) + synthesized
    replies = sum(m["role"] == "assistant" for m in messages)
    assert sum(m.role == "assistant" for m in transcript.messages) == replies
    # Every line of the UI log is a request whose usage was used, or a counted skip.
    skipped = transcript.meta.get("skipped", {})
    ui_skips = sum(n for k, n in skipped.items() if k.startswith("ui message"))
    unbilled = skipped.get("api request without usage", 0)
    assert len(ui) == ui_skips + unbilled + len(transcript.usage)
    reasoning = sum("role" not in m for m in history)
    assert skipped.get("reasoning item", 0) == reasoning
    return transcript


def _usage_as_recorded(task: Path, cache_inside: bool) -> ctxlab.Transcript:
    """The task loaded whole (`_check_counts`), each request's usage as its UI log records it,
    read here: tokensIn with the cache reads and writes inside it where ``cache_inside``."""
    transcript = _check_counts(task)
    _, ui = _raw(task)
    expected = []
    for i in _billed(ui):
        fresh = i["tokensIn"] - (i["cacheReads"] + i["cacheWrites"] if cache_inside else 0)
        expected.append(ProviderUsage(fresh, i["tokensOut"], i["cacheReads"], i["cacheWrites"]))
    assert [transcript.usage[k] for k in sorted(transcript.usage)] == expected
    return transcript


def test_a_cline_task_loads_whole_with_each_requests_usage() -> None:
    # Cline's tokensIn leaves the cache out: the four counts as recorded, request by request.
    transcript = _usage_as_recorded(CLINE, cache_inside=False)
    assert transcript.meta["usage_aligned_by"] == {
        "reply metrics": 4,
        "conversationHistoryIndex": 1,
    }
    assert transcript.meta["models"] == ["claude-sonnet-4-5-20250929"]
    # The reply interrupted by the user keeps its text and its bill.
    interrupted = transcript.messages[5]
    assert interrupted.content[0].text.endswith("[Response interrupted by user]")  # type: ignore[union-attr]
    assert transcript.usage[5].output_tokens == 20
    assert transcript.meta["repairs"] == [
        "added an error result for unanswered tool_use 'toolu_04'"
    ]


def test_roo_codes_total_input_and_its_condense_summary() -> None:
    # Roo 3.29.5 on: tokensIn is the whole input, the cache inside it.
    transcript = _usage_as_recorded(ROO, cache_inside=True)
    assert transcript.meta["app"] == "roo" and transcript.meta["hidden_from_later_requests"] == 5
    (compaction,) = recorded_compactions(transcript)
    summary = transcript.messages[compaction.index].content[compaction.block]
    assert summary.text.startswith("## Conversation Summary")  # type: ignore[union-attr]


def test_kilo_codes_anthropic_protocol_before_november_2025() -> None:
    transcript = _usage_as_recorded(KILO, cache_inside=False)
    assert transcript.meta["app"] == "kilo"


def test_the_folder_and_either_file_load_the_same_task() -> None:
    whole = load(CLINE)
    for path in (CLINE / "api_conversation_history.json", CLINE / "ui_messages.json"):
        same = load(path)
        assert same.messages == whole.messages and same.usage == whole.usage
        assert same.name == whole.name


def test_usage_that_cannot_be_placed_is_counted_not_guessed(tmp_path: Path) -> None:
    task = tmp_path / "t1"
    shutil.copytree(ROO, task)
    ui = json.loads((task / "ui_messages.json").read_text())
    first = next(i for i, m in enumerate(ui) if "tokensIn" in m.get("text", ""))
    del ui[first]  # one request fewer than replies, and no index to place the others by
    (task / "ui_messages.json").write_text(json.dumps(ui))
    transcript = load(task)
    assert transcript.usage == {}
    census = added_up(transcript)
    assert census.usage_lost == {"api request usage not matched to a reply": 4}


def test_without_its_ui_log_a_task_says_its_usage_is_unknown(tmp_path: Path) -> None:
    task = tmp_path / "t2"
    task.mkdir()
    shutil.copy(CLINE / "api_conversation_history.json", task)
    transcript = load(task)
    assert "usage_missing" in transcript.meta
    # The replies' own metrics remain: the cache split unknown, all of it read as cache reads.
    assert transcript.usage[1] == ProviderUsage(12, 85, 14_200, 0)
    assert len(transcript.usage) == 4


def test_the_history_as_data_is_recognised() -> None:
    history, _ = _raw(CLINE)
    assert ctxlab.io.detect_format(history) == "cline"
    assert load(history).meta["source"] == "cline"


def test_a_ui_log_alone_and_a_folder_without_a_task_name_what_to_do(tmp_path: Path) -> None:
    lonely = tmp_path / "ui_messages.json"
    shutil.copy(CLINE / "ui_messages.json", lonely)
    with pytest.raises(MessageFormatError, match=r"api_conversation_history\.json beside it"):
        load(lonely)
    with pytest.raises(MessageFormatError, match="not a Cline/Roo/Kilo task folder"):
        load(tmp_path, format="cline")


def test_sessions_lists_each_task_once(tmp_path: Path) -> None:
    shutil.copytree(ROOT, tmp_path / "tasks", ignore=shutil.ignore_patterns("*.py"))
    frame = ctxlab.sessions(tmp_path, progress=False, workers=1)
    assert sorted(frame["name"]) == sorted(p.name for p in (CLINE, ROO, KILO))
    assert set(frame["format"]) == {"cline"} and frame["problem"].isna().all()
    assert all(p.endswith("api_conversation_history.json") for p in frame["path"])


@SETTINGS
@given(st.data(), st.sampled_from(["api_conversation_history.json", "ui_messages.json"]))
def test_a_mutated_task_loads_or_raises_a_typed_error(
    tmp_path_factory: pytest.TempPathFactory, data: st.DataObject, part: str
) -> None:
    task = tmp_path_factory.mktemp("task")
    for name in ("api_conversation_history.json", "ui_messages.json"):
        shutil.copy(CLINE / name, task)
    document = json.loads((CLINE / part).read_text())
    if data.draw(st.booleans()):
        (task / part).write_text(json.dumps(data.draw(mutated(document))))
    else:
        (task / part).write_text(data.draw(cut(json.dumps(document))))
    loads_or_refuses(lambda: load(task))
