"""Cline/Roo/Kilo tasks written here message by message, each rule of ``ctxlab/io/formats/cline/parse.py`` by
the value a user reads: which histories are recognised, when Roo's ``tokensIn`` holds the cache,
which reply each request's usage goes to and by what rule, the census's kinds and skips by file,
the metrics a reply carries, and Roo's condense summaries as recorded compactions."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import load
from ctxlab.exceptions import MessageFormatError
from ctxlab.io import detect_format
from ctxlab.io.formats.cline.parse import is_cline_history
from ctxlab.messages import ProviderUsage
from tests.io.shown import added_up

NOVEMBER_2025 = 1_761_955_200_000
"""Roo Code 3.29.5 on: ``tokensIn`` includes the cache for every protocol."""
H = "api_conversation_history.json"
U = "ui_messages.json"


def _task(
    tmp_path: Path, history: list[Any], ui: list[Any] | None, extension: str = "plain"
) -> Path:
    task = tmp_path / extension / "tasks" / "t1"
    task.mkdir(parents=True)
    (task / H).write_text(json.dumps(history))
    if ui is not None:
        (task / U).write_text(json.dumps(ui))
    return task


def _request(ts: int = 1, after: Any = None, **info: Any) -> dict[str, Any]:
    message = {"ts": ts, "type": "say", "say": "api_req_started", "text": json.dumps(info)}
    if after is not None:
        message["conversationHistoryIndex"] = after
    return message


def _user(text: str = "go", **extra: Any) -> dict[str, Any]:
    return {"role": "user", "content": text, "ts": 1, **extra}


def _reply(text: str = "ok", **extra: Any) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}], "ts": 2, **extra}


def _metrics(prompt: Any, completion: Any, cached: Any = None) -> dict[str, Any]:
    tokens = {"prompt": prompt, "completion": completion}
    if cached is not None:
        tokens["cached"] = cached
    return {"metrics": {"tokens": tokens}}


# Which histories are Cline's.


def test_a_history_is_recognised_by_the_fields_only_these_tools_write() -> None:
    plain = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
    assert not is_cline_history(plain)  # Anthropic messages alone are not a task
    assert is_cline_history([{**plain[0], "ts": 1}, plain[1]])
    assert is_cline_history([{**plain[0], "condenseParent": "c1"}, plain[1]])
    # A role-less reasoning item (Roo) marks it too; a role-less item of another kind refuses it.
    assert is_cline_history([*plain, {"type": "reasoning", "text": "hm"}])
    assert not is_cline_history([*plain, {"type": "note", "text": "hm"}])
    assert not is_cline_history([{"type": "reasoning", "text": "hm"}])  # no message at all
    assert not is_cline_history([{"role": "user", "content": "hi", "ts": 1}, "junk"])
    assert not is_cline_history([{"role": "system", "content": "hi", "ts": 1}])
    # A message is a message whatever else it holds.
    assert is_cline_history([{"role": "assistant", "type": "reasoning", "content": "x", "ts": 1}])
    for value in (None, [], {"role": "user", "ts": 1, "content": "x"}, "ts"):
        assert not is_cline_history(value)
    assert detect_format([{**plain[0], "ts": 1}, plain[1]]) == "cline"


def test_only_the_first_fifty_items_are_looked_at() -> None:
    long = [_user(f"u{i}") if i % 2 == 0 else _reply(f"r{i}") for i in range(60)]
    assert is_cline_history(long)
    # What comes after the first fifty items does not count.
    assert is_cline_history([*long[:50], {"role": "system", "content": "later"}])
    assert is_cline_history([*long[:50], "junk"])


# Usage: Cline's tokensIn leaves the cache out; Roo's holds it since November 2025 or for openai.


def _one_request(tmp_path: Path, extension: str, history_extra: dict[str, Any], **request: Any):
    history = [_user(**history_extra), _reply()]
    task = _task(tmp_path, history, [_request(**request)], extension)
    return load(task)


@pytest.mark.parametrize(
    ("extension", "ts", "protocol", "inside"),
    [
        ("saoudrizwan.claude-dev", NOVEMBER_2025 + 5, None, False),  # Cline: always apart
        ("rooveterinaryinc.roo-cline", NOVEMBER_2025, None, True),  # from that instant on
        ("rooveterinaryinc.roo-cline", NOVEMBER_2025 - 1, None, False),
        ("rooveterinaryinc.roo-cline", NOVEMBER_2025 - 1, "openai", True),
        ("rooveterinaryinc.roo-cline", NOVEMBER_2025 - 1, "anthropic", False),
        ("kilocode.kilo-code", NOVEMBER_2025 + 1, None, True),  # Kilo is Roo's fork
        ("kilocode.kilo-code", NOVEMBER_2025 - 1, None, False),
    ],
)
def test_whether_tokens_in_holds_the_cache(
    tmp_path: Path, extension: str, ts: int, protocol: str | None, inside: bool
) -> None:
    info: dict[str, Any] = {"tokensIn": 1000, "tokensOut": 7, "cacheReads": 300, "cacheWrites": 200}
    if protocol is not None:
        info["apiProtocol"] = protocol
    transcript = _one_request(tmp_path, extension, {}, ts=ts, **info)
    expected = ProviderUsage(500 if inside else 1000, 7, 300, 200)
    assert transcript.usage == {1: expected}


def test_a_task_outside_the_tools_folders_is_roo_by_what_it_holds(tmp_path: Path) -> None:
    info = {"tokensIn": 1000, "tokensOut": 7, "cacheReads": 300, "cacheWrites": 200}
    late = NOVEMBER_2025 + 1
    # Nothing of Roo's: Cline's reading, the cache apart.
    cline = _one_request(tmp_path / "a", "plain", {}, ts=late, **info)
    assert cline.usage[1] == ProviderUsage(1000, 7, 300, 200) and cline.meta["app"] == "cline"
    # A request naming its protocol is Roo's.
    roo = _one_request(tmp_path / "b", "plain", {}, ts=late, apiProtocol="anthropic", **info)
    assert roo.usage[1] == ProviderUsage(500, 7, 300, 200) and roo.meta["app"] == "roo"
    # So is a history carrying Roo's condense marks.
    marked = _one_request(tmp_path / "c", "plain", {"condenseParent": "c1"}, ts=late, **info)
    assert marked.usage[1] == ProviderUsage(500, 7, 300, 200) and marked.meta["app"] == "roo"
    # The extension's folder names the app.
    kilo = _one_request(tmp_path / "d", "kilocode.kilo-code", {}, ts=1, **info)
    assert kilo.meta["app"] == "kilo"


def test_a_count_a_request_left_out_is_zero(tmp_path: Path) -> None:
    transcript = _one_request(tmp_path, "plain", {}, tokensOut=9)
    assert transcript.usage == {1: ProviderUsage(0, 9, 0, 0)}


def test_a_requests_timestamp_or_index_that_is_no_number_is_ignored(tmp_path: Path) -> None:
    info = {"tokensIn": 1000, "tokensOut": 7, "cacheReads": 300, "cacheWrites": 200}
    history = [_user(), _reply()]
    ui = [{**_request(after="0", **info), "ts": "soon"}]
    transcript = load(_task(tmp_path, history, ui, "rooveterinaryinc.roo-cline"))
    # No time: read as before November 2025 (the cache apart); no index: placed by order.
    assert transcript.usage == {1: ProviderUsage(1000, 7, 300, 200)}
    assert transcript.meta["usage_aligned_by"] == {"order": 1}


# Which reply a request's usage goes to.


def test_a_replys_own_metrics_take_the_request_of_the_same_counts(tmp_path: Path) -> None:
    history = [
        _user(),
        _reply("a"),  # no metrics: placed by the request's index
        _user("more"),
        _reply("b", **_metrics(40, 5, 900)),
        _user("again"),
        _reply("c", **_metrics(40, 6)),  # same prompt, other completion: no request matches
    ]
    ui = [
        _request(after=0, tokensIn=10, tokensOut=1, cacheReads=0, cacheWrites=0),
        _request(after=2, tokensIn=40, tokensOut=5, cacheReads=600, cacheWrites=300),
        _request(after=4, tokensIn=40, tokensOut=7, cacheReads=1, cacheWrites=1),
    ]
    transcript = load(_task(tmp_path, history, ui, "saoudrizwan.claude-dev"))
    assert transcript.usage[3] == ProviderUsage(40, 5, 600, 300)  # the request's split
    assert transcript.usage[5] == ProviderUsage(40, 6, 0, 0)  # the metrics alone
    assert transcript.usage[1] == ProviderUsage(10, 1, 0, 0)
    assert transcript.meta["usage_aligned_by"] == {
        "reply metrics": 2,
        "conversationHistoryIndex": 1,
    }
    census = added_up(transcript)
    assert census.usage_lost == {"api request usage not matched to a reply": 1}


def test_the_history_index_places_a_request_on_the_next_reply_after_it(tmp_path: Path) -> None:
    history = [_user(), _reply("a"), _user("b"), _reply("c"), _user("d"), _reply("e")]
    ui = [
        # The index is the last history message before the request's prompt: a reply at that
        # index came before it.
        _request(after=1, tokensIn=30, tokensOut=3),
        _request(after=4, tokensIn=50, tokensOut=5),
    ]
    transcript = load(_task(tmp_path, history, ui))
    assert transcript.usage == {3: ProviderUsage(30, 3), 5: ProviderUsage(50, 5)}
    assert transcript.meta["usage_aligned_by"] == {"conversationHistoryIndex": 2}
    census = transcript.census
    assert census is not None and census.usage_lost == {}


def test_roos_cache_inside_holds_whichever_rule_placed_the_usage(tmp_path: Path) -> None:
    late = NOVEMBER_2025 + 1
    info = {"tokensIn": 1000, "tokensOut": 7, "cacheReads": 300, "cacheWrites": 200}
    history = [_user(), _reply("a", **_metrics(1000, 7, 500)), _user("b"), _reply("c")]
    ui = [_request(ts=late, **info), _request(ts=late, after=2, **{**info, "tokensOut": 8})]
    transcript = load(_task(tmp_path, history, ui, "rooveterinaryinc.roo-cline"))
    assert transcript.usage == {
        1: ProviderUsage(500, 7, 300, 200),
        3: ProviderUsage(500, 8, 300, 200),
    }


def test_requests_as_many_as_the_open_replies_are_placed_in_order(tmp_path: Path) -> None:
    history = [_user(), _reply("a"), _user("b"), _reply("c")]
    ui = [_request(tokensIn=30, tokensOut=3), _request(tokensIn=50, tokensOut=5)]
    transcript = load(_task(tmp_path, history, ui))
    assert transcript.usage == {1: ProviderUsage(30, 3), 3: ProviderUsage(50, 5)}
    assert transcript.meta["usage_aligned_by"] == {"order": 2}


def test_usage_placed_and_lost_in_one_task_each_counted_once(tmp_path: Path) -> None:
    history = [_user(), _reply("a", **_metrics(30, 3)), _user("b"), _reply("c", **_metrics(40, 4))]
    history += [_user("d"), _reply("e"), _user("f"), _reply("g")]
    ui = [
        _request(tokensIn=30, tokensOut=3),
        _request(tokensIn=40, tokensOut=4),
        _request(tokensIn=50, tokensOut=5),  # two open replies, one request: never guessed
    ]
    transcript = load(_task(tmp_path, history, ui))
    assert transcript.usage == {1: ProviderUsage(30, 3), 3: ProviderUsage(40, 4)}
    census = added_up(transcript)
    assert census.usage_lost == {"api request usage not matched to a reply": 1}


def test_a_task_without_usage_says_nothing_of_its_alignment(tmp_path: Path) -> None:
    transcript = load(_task(tmp_path, [_user(), _reply()], [_request(tokensIn=0)]))
    assert transcript.usage == {} and "usage_aligned_by" not in transcript.meta
    assert transcript.meta["skipped"] == {"api request without usage": 1}


@pytest.mark.parametrize(
    ("tokens", "usage"),
    [
        ((0, 5, 100), ProviderUsage(0, 5, 100, 0)),  # a prompt all cached
        ((7, 5, None), ProviderUsage(7, 5, 0, 0)),  # no cached count
        ((7, 5, "lots"), ProviderUsage(7, 5, 0, 0)),
        ((7, 5, -3), ProviderUsage(7, 5, 0, 0)),
        ((-1, 5, 0), None),  # not a count: no metrics
        ((True, 5, 0), None),
        ((7, "5", 0), None),
    ],
)
def test_a_replys_metrics_read_as_counts(
    tmp_path: Path, tokens: tuple[Any, Any, Any], usage: ProviderUsage | None
) -> None:
    history = [_user(), _reply(**_metrics(*tokens))]
    transcript = load(_task(tmp_path, history, None))
    assert transcript.usage == ({} if usage is None else {1: usage})


def test_a_reply_without_metrics_does_not_end_the_search(tmp_path: Path) -> None:
    history = [_user(), _reply("a"), _user("b"), _reply("c", **_metrics(9, 2, 4))]
    transcript = load(_task(tmp_path, history, None))
    assert transcript.usage == {3: ProviderUsage(9, 2, 4, 0)}


# The census by file.


def test_the_census_names_each_record_by_its_file_and_kind(tmp_path: Path) -> None:
    history = [
        _user(),
        {"type": "reasoning", "text": "hm"},
        {"type": "note"},
        "junk",
        _reply(),
    ]
    ui = [
        {"ts": 1, "type": "say", "say": "task", "text": "go"},
        {"ts": 1, "type": "ask", "ask": "tool", "text": "{}"},
        {"ts": 1, "type": "say", "say": "api_req_started", "text": "not json"},
        {"ts": 1, "type": "say", "say": "api_req_started", "text": 5},
        _request(tokensIn=3, tokensOut=1),
        {"ts": 1, "type": "other", "other": "x"},
        {"ts": 1, "type": "say", "say": 4},
        {"ts": 1},
        "junk",
    ]
    transcript = load(_task(tmp_path, history, ui))
    census = added_up(transcript)
    assert census.read == {
        f"{H}: user message": 1,
        f"{H}: assistant message": 1,
        f"{H}: reasoning item": 1,
        f"{H}: item without a role": 2,
        f"{U}: say:task": 1,
        f"{U}: ask:tool": 1,
        f"{U}: say:api_req_started": 3,
        f"{U}: other": 1,
        f"{U}: say": 1,
        f"{U}: None": 1,
        f"{U}: unreadable": 1,
    }
    assert transcript.meta["skipped"] == {
        "reasoning item": 1,
        "history item without a role": 2,
        "ui message say:task": 1,
        "ui message ask:tool": 1,
        "unreadable api_req_started": 2,
        "ui message other": 1,
        "ui message say": 1,
        "ui message None": 1,
        "ui message unreadable": 1,
    }
    assert transcript.usage == {1: ProviderUsage(3, 1)}  # the reply, the items set apart


@pytest.mark.parametrize("part", [H, U])
def test_a_file_that_holds_no_list_is_refused_naming_it(tmp_path: Path, part: str) -> None:
    task = _task(tmp_path, [_user(), _reply()], [])
    (task / part).write_text(json.dumps({"messages": []}))
    with pytest.raises(MessageFormatError) as raised:
        load(task)
    # Named by the task's history file, the one a listing shows.
    assert str(raised.value) == f"{task / H}: {part} holds a list of messages, got dict"


def test_a_bad_message_is_refused_naming_its_task(tmp_path: Path) -> None:
    task = _task(tmp_path, [_user(), {"role": "assistant", "content": 5}], [])
    with pytest.raises(MessageFormatError) as raised:
        load(task)
    assert str(raised.value).startswith(f"{task / H} message 1: 'content' must be")


# Roo's condense summaries.


def test_roos_condense_summaries_are_recorded_compactions(tmp_path: Path) -> None:
    long = "## Summary " + "x" * 300
    history = [
        _user(condenseParent="c1"),
        {"role": "assistant", "content": "done", "ts": 2, "condenseParent": "c1"},
        {"role": "assistant", "content": "  ", "ts": 2, "truncationParent": "t1"},
        _user(long, isSummary=True, condenseId="c1"),
        _reply("more"),
        {
            "role": "user",
            "content": ["junk", {"type": "image"}, {"type": "text", "text": "## Second"}],
            "isSummary": True,
        },
        {"role": "user", "content": [], "isSummary": True},
        _reply("end", truncationParent="t2"),
    ]
    transcript = load(_task(tmp_path, history, None))
    fields = ("kind", "trigger", "replies_before", "summary_head")
    assert [{k: c[k] for k in fields} for c in transcript.meta["compactions"]] == [
        {"kind": "compact", "trigger": "unknown", "replies_before": 1, "summary_head": long[:200]},
        {"kind": "compact", "trigger": "unknown", "replies_before": 2, "summary_head": "## Second"},
        {"kind": "compact", "trigger": "unknown", "replies_before": 2, "summary_head": ""},
    ]
    assert transcript.meta["hidden_from_later_requests"] == 4
    assert transcript.meta["app"] == "roo"


def _loaded(history: list[Any], ui: list[Any]) -> Any:
    with tempfile.TemporaryDirectory() as folder:
        return load(_task(Path(folder), history, ui))


@settings(database=None, max_examples=60, deadline=None)
@given(
    st.lists(st.booleans(), min_size=1, max_size=8),
    st.lists(st.integers(0, 5000), min_size=1, max_size=8),
)
def test_requests_in_order_bill_the_replies_in_order(
    has_text: list[bool], tokens: list[int]
) -> None:
    # As many billed requests as replies and no index or metrics: the i-th request bills the
    # i-th reply, whatever the replies hold; one request more or fewer and none is placed.
    n = min(len(has_text), len(tokens))
    history: list[Any] = []
    for i in range(n):
        history += [_user(f"u{i}"), _reply(f"r{i}" if has_text[i] else "…")]
    ui = [_request(tokensIn=t + 1, tokensOut=i) for i, t in enumerate(tokens[:n])]
    transcript = _loaded(history, ui)
    assert transcript.usage == {2 * i + 1: ProviderUsage(tokens[i] + 1, i) for i in range(n)}
    fewer = _loaded(history, ui[1:]) if n > 1 else None
    assert fewer is None or fewer.usage == {}
