"""What the importers' documentation promises, each checked on the value a user reads: Codex MCP
content items are the result's text, a Gemini ``$set`` of the messages replaces them, aider's
"sent" holds the cache's reads and writes, an Inspect ``.eval`` log's samples come in the log's
order, a Vercel AI SDK 5.x error output is an error, `sessions()` fills ``started``, a repeated
tool-call id is renamed with its results re-pointed, and an OTel trace that extends an earlier
conversation continues it. Where the inputs are many, a property over generated files, checked
against a count made from the file itself (read = used + skipped)."""

from __future__ import annotations

import json
import random
import shutil
import zipfile
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import sessions
from ctxlab.exceptions import MessageFormatError
from ctxlab.io import load
from ctxlab.messages import ProviderUsage, find_tool_pair_problems
from tests.io.otlp import otlp_body, otlp_span
from tests.io.shown import added_up

FIXTURES = Path(__file__).parents[1] / "fixtures"
FAST = settings(max_examples=40, deadline=None)
words = st.text(alphabet="abcdefghij XYZ0123456789", min_size=1, max_size=12).filter(
    lambda t: t.strip() != ""
)


def _results(transcript: Any) -> dict[str, Any]:
    return {r.tool_use_id: r for m in transcript.messages for r in getattr(m, "tool_results", ())}


# --- Codex: an MCP tool's content items --------------------------------------------------------


def _codex_line(kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": "2026-02-10T09:00:00Z", "type": kind, "payload": payload}


@FAST
@given(
    st.lists(
        st.tuples(
            st.lists(
                st.tuples(st.sampled_from(["input_text", "text", "output_text"]), words),
                min_size=1,
                max_size=4,
            ),
            st.sampled_from(["list", "ok", "failed"]),
        ),
        min_size=1,
        max_size=4,
    )
)
def test_codex_mcp_content_items_are_the_results_text(
    calls: list[tuple[list[tuple[str, str]], str]],
) -> None:
    lines = [_codex_line("response_item", {"type": "message", "role": "user", "content": "go"})]
    for n, (items, shape) in enumerate(calls):
        content = [{"type": kind, "text": text} for kind, text in items]
        # An MCP tool's output: its content items, bare or in the {content, success} shape.
        output: Any = content if shape == "list" else {"content": content, "success": shape == "ok"}
        lines += [
            _codex_line(
                "response_item",
                {"type": "function_call", "name": "mcp", "arguments": "{}", "call_id": f"c{n}"},
            ),
            _codex_line(
                "response_item",
                {"type": "function_call_output", "call_id": f"c{n}", "output": output},
            ),
        ]
    transcript = load(lines, format="codex")
    results = _results(transcript)
    for n, (items, shape) in enumerate(calls):
        result = results[f"c{n}"]
        # The text each item carried, in order: never the items' JSON.
        assert result.text == "\n".join(text for _, text in items)
        assert result.is_error is (shape == "failed")
    census = added_up(transcript)
    assert sum(census.read.values()) == len(lines)


# --- Gemini CLI: a $set of the messages replaces them ------------------------------------------


def _gemini_record(id: str, text: str) -> dict[str, Any]:
    kind = "user" if id.startswith("u") else "gemini"
    return {
        "id": id,
        "timestamp": "2026-03-02T10:00:01Z",
        "type": kind,
        "content": [{"text": text}],
    }


def _pairs(tag: str, n: int) -> list[dict[str, Any]]:
    return [
        record
        for k in range(n)
        for record in (
            _gemini_record(f"u{tag}{k}", f"ask {tag}{k}"),
            _gemini_record(f"g{tag}{k}", f"answer {tag}{k}"),
        )
    ]


@FAST
@given(st.integers(1, 4), st.integers(1, 4), st.integers(0, 3))
def test_a_gemini_set_of_the_messages_replaces_them(before: int, replaced: int, after: int) -> None:
    header = {"sessionId": "s", "projectHash": "p", "startTime": "2026-03-02T10:00:00Z"}
    old, new, later = _pairs("old", before), _pairs("new", replaced), _pairs("later", after)
    lines = [header, *old, {"$set": {"messages": new, "lastUpdated": "x"}}, *later]
    transcript = load(lines, format="gemini_cli")
    texts = [m.content[0].text for m in transcript.messages]  # type: ignore[union-attr]
    # Only the messages the $set wrote, then what followed it: none of those it replaced.
    assert texts == [r["content"][0]["text"] for r in (*new, *later)]
    census = added_up(transcript)
    assert census.skipped.get("replaced by a $set of the messages") == len(old)


# --- aider: "sent" counts every prompt token -----------------------------------------------------


def _aider(report: str) -> str:
    return (
        "# aider chat started at 2026-01-20 14:02:11\n\n"
        "#### Add a flag\n\nI'll add it.\n\n"
        f"> Tokens: {report}\n"
    )


@FAST
@given(
    st.integers(0, 50_000), st.integers(0, 50_000), st.integers(0, 50_000), st.integers(0, 9_999)
)
def test_aiders_sent_holds_the_cache_reads_and_writes(
    tmp_path_factory: pytest.TempPathFactory, fresh: int, written: int, hit: int, received: int
) -> None:
    sent = fresh + written + hit
    parts = [f"{sent:,} sent"]
    if written:
        parts.append(f"{written:,} cache write")
    if hit:
        parts.append(f"{hit:,} cache hit")
    report = ", ".join([*parts, f"{received:,} received."])
    path = tmp_path_factory.mktemp("aider") / ".aider.chat.history.md"
    path.write_text(_aider(report))
    transcript = load(path)
    if not (sent or received):  # a report of nothing at all is no bill
        assert transcript.usage == {}
        return
    (usage,) = transcript.usage.values()
    # The uncached input is what was sent less what the cache read and wrote.
    assert usage == ProviderUsage(fresh, received, hit, written)
    assert usage.total_input_tokens == sent


def test_aiders_cache_write_is_not_billed_twice(tmp_path: Path) -> None:
    path = tmp_path / ".aider.chat.history.md"
    path.write_text(_aider("4.2k sent, 1.5k cache write, 2.1k cache hit, 180 received."))
    (usage,) = load(path).usage.values()
    assert usage == ProviderUsage(600, 180, 2_100, 1_500)
    assert usage.total_input_tokens == 4_200


# --- Inspect: an .eval log's samples in the log's order -----------------------------------------


def _eval_log(path: Path, ids: list[int], epochs: int, write_order: list[int]) -> None:
    log = json.loads((FIXTURES / "inspect" / "add.json").read_text())
    template = log.pop("samples")[0]
    entries: list[tuple[str, dict[str, Any]]] = []
    for epoch in range(1, epochs + 1):
        for sample_id in ids:
            sample = json.loads(json.dumps(template))
            sample["id"], sample["epoch"] = sample_id, epoch
            sample["messages"][0]["content"] = f"sample {sample_id} epoch {epoch}"
            entries.append((f"samples/{sample_id}_epoch_{epoch}.json", sample))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", json.dumps(log))
        for k in write_order:
            name, sample = entries[k % len(entries)]
            if name not in archive.namelist():
                archive.writestr(name, json.dumps(sample))
        for name, sample in entries:
            if name not in archive.namelist():
                archive.writestr(name, json.dumps(sample))


@settings(max_examples=15, deadline=None)
@given(
    st.sets(st.integers(1, 30), min_size=2, max_size=5),
    st.integers(1, 2),
    st.randoms(use_true_random=False),
)
def test_inspect_eval_samples_come_in_the_logs_order(
    tmp_path_factory: pytest.TempPathFactory, ids: set[int], epochs: int, rng: random.Random
) -> None:
    path = tmp_path_factory.mktemp("inspect") / "log.eval"
    order = list(range(len(ids) * epochs))
    rng.shuffle(order)  # the zip's own order says nothing
    _eval_log(path, sorted(ids), epochs, order)
    # Inspect names each sample "<id>_epoch_<n>": by id as a number (2 before 10), then epoch.
    expected = sorted(
        ((i, e) for i in ids for e in range(1, epochs + 1)), key=lambda pair: (pair[0], pair[1])
    )
    for episode, (sample_id, epoch) in enumerate(expected):
        transcript = load(path, episode=episode)
        assert transcript.messages[0].content[0].text == f"sample {sample_id} epoch {epoch}"  # type: ignore[union-attr]
        assert transcript.meta["samples"] == len(expected)


def test_inspect_eval_sample_10_comes_after_sample_2(tmp_path: Path) -> None:
    path = tmp_path / "log.eval"
    _eval_log(path, [1, 2, 10], 1, [2, 0, 1])
    first = [load(path, episode=k).messages[0].content[0].text for k in range(3)]  # type: ignore[union-attr]
    assert first == ["sample 1 epoch 1", "sample 2 epoch 1", "sample 10 epoch 1"]


# --- Vercel AI SDK 5.x: error outputs --------------------------------------------------------------


def _vercel(output: dict[str, Any]) -> dict[str, Any]:
    messages = [
        {"role": "user", "content": "Run it."},
        {
            "role": "assistant",
            "content": [
                {"type": "tool-call", "toolCallId": "t1", "toolName": "bash", "input": {"cmd": "x"}}
            ],
        },
        {
            "role": "tool",
            "content": [
                {"type": "tool-result", "toolCallId": "t1", "toolName": "bash", "output": output}
            ],
        },
    ]
    return {
        "name": "ai.streamText.doStream",
        "context": {"trace_id": "0xaa", "span_id": "0x01"},
        "start_time": "2026-01-01T00:00:00Z",
        "attributes": {
            "ai.operationId": "ai.streamText.doStream",
            "ai.prompt.messages": json.dumps(messages),
            "ai.response.text": "Done.",
        },
    }


@pytest.mark.parametrize(
    ("output", "error", "text"),
    [
        ({"type": "error-text", "value": "permission denied"}, True, "permission denied"),
        ({"type": "error-json", "value": {"code": 13}}, True, '{"code": 13}'),
        ({"type": "text", "value": "2 passed"}, False, "2 passed"),
        ({"type": "json", "value": {"ok": True}}, False, '{"ok": true}'),
    ],
)
def test_a_vercel_5x_error_output_is_an_error(
    output: dict[str, Any], error: bool, text: str
) -> None:
    transcript = load([_vercel(output)], format="otel")
    (result,) = _results(transcript).values()
    assert bool(result.is_error) is error
    assert (
        json.loads(result.text) == json.loads(text) if text.startswith("{") else result.text == text
    )


# --- sessions(): the started column -----------------------------------------------------------------


def test_sessions_started_is_when_each_session_began(tmp_path: Path) -> None:
    shutil.copy(FIXTURES / "aider" / ".aider.chat.history.md", tmp_path)
    shutil.copy(FIXTURES / "gemini" / "session-2026-03-02T10-00-4a1c.jsonl", tmp_path)
    chat = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    (tmp_path / "chat.json").write_text(json.dumps(chat))
    frame = sessions(tmp_path, progress=False, workers=1)
    started = dict(zip(frame["format"], frame["started"], strict=True))
    assert set(started) == {"aider", "gemini_cli", "anthropic"}
    # aider's first run header, Gemini's startTime; a plain chat records none.
    assert started["aider"] == "2026-01-20 14:02:11"
    assert started["gemini_cli"] == "2026-03-02T10:00:00Z"
    assert pd.isna(started["anthropic"])


# --- a repeated tool-call id: renamed, its results re-pointed --------------------------------------


@FAST
@given(st.lists(st.sampled_from(["c1", "c2", "c3"]), min_size=1, max_size=8))
def test_a_repeated_tool_call_id_is_renamed_and_its_result_follows(ids: list[str]) -> None:
    messages: list[dict[str, Any]] = [{"role": "user", "content": "go"}]
    for n, call_id in enumerate(ids):
        call = {"id": call_id, "function": {"name": "get", "arguments": json.dumps({"n": n})}}
        messages.append({"role": "assistant", "tool_calls": [call]})
        messages.append({"role": "tool", "tool_call_id": call_id, "content": f"result {n}"})
    messages.append({"role": "assistant", "content": "done"})
    transcript = load(messages, format="openai")
    uses = [u for m in transcript.messages for u in getattr(m, "tool_uses", ())]
    results = _results(transcript)
    # Every call kept, each id once, and each result on the call it answered.
    assert len(uses) == len(ids) and len({u.id for u in uses}) == len(ids)
    for use in uses:
        assert results[use.id].text == f"result {use.input['n']}"
    assert transcript.meta.get("renamed_tool_ids", 0) == len(ids) - len(set(ids))
    assert find_tool_pair_problems(transcript.messages) == []
    assert "repairs" not in transcript.meta


def test_a_repeated_id_gets_a_dup_suffix_and_the_later_result() -> None:
    messages = [
        {"role": "user", "content": "weather twice"},
        {
            "role": "assistant",
            "tool_calls": [{"id": "c1", "function": {"name": "get", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "rain"},
        {
            "role": "assistant",
            "tool_calls": [{"id": "c1", "function": {"name": "get", "arguments": "{}"}}],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "snow"},
    ]
    results = _results(load(messages, format="openai"))
    assert {k: r.text for k, r in results.items()} == {"c1": "rain", "c1__dup2": "snow"}


# --- OTel: a trace that continues an earlier conversation ------------------------------------------


def _otel_span(
    inputs: list[tuple[str, str]], answer: str, start: int, trace: str
) -> dict[str, Any]:
    attributes = {
        "gen_ai.input.messages": [
            {"role": r, "parts": [{"type": "text", "content": t}]} for r, t in inputs
        ],
        "gen_ai.output.messages": [
            {"role": "assistant", "parts": [{"type": "text", "content": answer}]}
        ],
    }
    return otlp_span(attributes, start, trace * 32, span_id=f"{start:016x}")


CONTINUING = [
    pytest.param(
        # Three invocations, each its own trace. The third's first request repeats the first
        # conversation's exchange: it continues that conversation — and so does the rest of its
        # trace, its second request too, though that one sends only its new message.
        [
            ([("user", "hi")], "hello", 1, "c"),
            ([("user", "other chat")], "sure", 2, "d"),
            ([("user", "hi"), ("assistant", "hello"), ("user", "and now?")], "now this", 3, "e"),
            ([("user", "one more")], "last", 4, "e"),
        ],
        [["hi", "hello", "and now?", "now this", "one more", "last"], ["other chat", "sure"]],
        id="the-rest-of-its-trace-joins-it-whole",
    ),
    pytest.param(
        # Two earlier conversations; the later trace extends the second's history, not the first's.
        [
            ([("user", "alpha")], "one", 1, "a"),
            ([("user", "beta")], "two", 2, "b"),
            ([("user", "beta"), ("assistant", "two"), ("user", "more beta")], "three", 3, "f"),
        ],
        [["alpha", "one"], ["beta", "two", "more beta", "three"]],
        id="the-one-whose-history-it-extends",
    ),
]
"""Spans ``(inputs, answer, start, trace)`` of invocations each their own trace, and the texts
of each conversation they load as."""


@pytest.mark.parametrize(("spans", "expected"), CONTINUING)
def test_an_otel_trace_continuing_an_earlier_conversation_joins_it(
    spans: list[tuple[list[tuple[str, str]], str, int, str]], expected: list[list[str]]
) -> None:
    body = otlp_body(*(_otel_span(*span) for span in spans))
    count = load(body).meta["conversations"]
    episodes = [load(body, episode=k) for k in range(count)]
    texts = [[m.content[0].text for m in t.messages] for t in episodes]  # type: ignore[union-attr]
    assert texts == expected


# --- Codex: every output shape, as mutation testing found untested ------------------------------

IMAGE = "data:image/png;base64,iVBORw0KGgo="


@pytest.mark.parametrize(
    ("output", "text", "images", "error"),
    [
        # An MCP tool's image beside its text: both kept.
        (
            [
                {"type": "input_text", "text": "a chart"},
                {"type": "input_image", "image_url": IMAGE},
            ],
            "a chart",
            1,
            False,
        ),
        # Items of no kind Codex writes: the items' JSON, not nothing.
        ([{"type": "audio", "data": "…"}], '[{"type": "audio", "data": "…"}]', 0, False),
        # A failure without content: an empty error, not a placeholder.
        ({"success": False}, "", 0, True),
        # Content that is neither text nor items: its JSON, its characters as they are.
        ({"content": {"größe": 3}, "success": True}, '{"größe": 3}', 0, False),
        (42, "42", 0, False),
    ],
)
def test_codex_outputs_of_every_shape(output: Any, text: str, images: int, error: bool) -> None:
    lines = [
        _codex_line("response_item", {"type": "message", "role": "user", "content": "draw it"}),
        _codex_line(
            "response_item",
            {"type": "function_call", "name": "mcp", "arguments": "{}", "call_id": "c1"},
        ),
        _codex_line(
            "response_item", {"type": "function_call_output", "call_id": "c1", "output": output}
        ),
    ]
    (result,) = _results(load(lines, format="codex")).values()
    assert (result.text, result.is_error) == (text, error)
    assert (
        sum(b.type == "image" for b in result.content if not isinstance(result.content, str))
        == images
    )


def _codex_reply(text: str) -> dict[str, Any]:
    content = [{"type": "output_text", "text": text}]
    return _codex_line(
        "response_item", {"type": "message", "role": "assistant", "content": content}
    )


def test_a_codex_message_whose_content_is_a_string_keeps_its_text() -> None:
    lines = [
        _codex_line("response_item", {"type": "message", "role": "user", "content": "plain words"}),
        _codex_reply("ok"),
    ]
    transcript = load(lines, format="codex")
    assert [m.content[0].text for m in transcript.messages] == ["plain words", "ok"]  # type: ignore[union-attr]


def test_a_line_of_another_format_in_a_rollout_is_counted_not_read() -> None:
    lines: list[Any] = [
        _codex_line("response_item", {"type": "message", "role": "user", "content": "go"}),
        {"type": "response_item", "payload": "not a mapping", "timestamp": "t"},
        {"something": "else"},
        _codex_reply("ok"),
    ]
    transcript = load(lines, format="codex")
    assert len(transcript.messages) == 2
    census = added_up(transcript)
    assert census.read["line of another format"] == 2
    assert census.skipped["not a Codex rollout line"] == 2


# --- Gemini CLI: parts of every shape, and a bad record named (mutation survivors) --------------


def test_a_gemini_records_image_and_string_parts_are_kept() -> None:
    header = {"sessionId": "s", "projectHash": "p", "startTime": "2026-03-02T10:00:00Z"}
    user = {
        "id": "u1",
        "timestamp": "t",
        "type": "user",
        "content": ["look at this", {"inlineData": {"mimeType": "image/png", "data": "iVBORw0K"}}],
    }
    reply = {"id": "g1", "timestamp": "t", "type": "gemini", "content": "A chart."}
    transcript = load([header, user, reply], format="gemini_cli")
    text, image = transcript.messages[0].content
    assert text.text == "look at this"  # type: ignore[union-attr]
    assert image.type == "image"
    source = image.source  # type: ignore[union-attr]
    assert (source.type, source.media_type, source.data) == ("base64", "image/png", "iVBORw0K")
    assert transcript.messages[1].content[0].text == "A chart."  # type: ignore[union-attr]


def test_a_gemini_record_that_is_not_an_object_is_named_by_its_number() -> None:
    header = {"sessionId": "s", "projectHash": "p", "startTime": "2026-03-02T10:00:00Z"}
    with pytest.raises(MessageFormatError, match=r"record 3: not an object"):
        load([header, _gemini_record("u1", "hi"), ["not", "an", "object"]], format="gemini_cli")
