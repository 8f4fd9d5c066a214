"""Files that crashed an importer with an error of Python's own: span start times no clock
reads (``1e400``, NaN, the year 10000) in OpenTelemetry, Jaeger, Langfuse and Agents SDK traces;
JSON-string arguments and attributes nested past Python's recursion; Phoenix attributes nested a
thousand levels; damaged and bombing ``.eval`` zips; a compaction's ``preTokens`` NaN or
infinite. Each is a `MessageFormatError` naming the file and the problem — or loads, where the
odd part is one field whose figure is left unknown — and memory stays bounded."""

from __future__ import annotations

import json
import math
import re
import tracemalloc
import zipfile
from pathlib import Path
from typing import Any

import pytest

import ctxlab
from ctxlab import ApproximateCounter, ContextConfig, load
from ctxlab.exceptions import MessageFormatError
from ctxlab.io.formats.inspect import parse as _inspect
from tests.hostile import says

FIXTURES = Path(__file__).parents[1] / "fixtures"
NOT_TIMES = ["1e400", "NaN", "-Infinity", "-5", "9" * 30, '"yesterday"', '"10000-01-01T00:00:00Z"']


def _otlp(start: str) -> str:
    return (
        '{"resourceSpans": [{"scopeSpans": [{"spans": [{"traceId": "t", "name": "chat", '
        f'"startTimeUnixNano": {start}, "attributes": ['
        '{"key": "gen_ai.prompt.0.role", "value": {"stringValue": "user"}}, '
        '{"key": "gen_ai.prompt.0.content", "value": {"stringValue": "hi"}}, '
        '{"key": "gen_ai.completion.0.role", "value": {"stringValue": "assistant"}}, '
        '{"key": "gen_ai.completion.0.content", "value": {"stringValue": "yo"}}]}]}]}]}'
    )


def _jaeger(start: str) -> str:
    return (
        '{"data": [{"traceID": "t", "spans": [{"traceID": "t", "operationName": "chat", '
        f'"startTime": {start}, "tags": ['
        '{"key": "gen_ai.prompt.0.role", "value": "user"}, '
        '{"key": "gen_ai.prompt.0.content", "value": "hi"}]}]}]}'
    )


def _langfuse(start: str) -> str:
    observation = (
        '{"id": "o1", "traceId": "t", "type": "GENERATION", "name": "chat", '
        f'"startTime": {start}, "input": [{{"role": "user", "content": "hi"}}], '
        '"output": {"role": "assistant", "content": "yo"}}'
    )
    return f'{{"data": [{observation}]}}'


def _agents(start: str) -> str:
    text = (FIXTURES / "openai_agents" / "chat_trace.json").read_text()
    return re.sub(r'"started_at": "[^"]*"', f'"started_at": {start}', text)


@pytest.mark.parametrize("make", [_otlp, _jaeger, _langfuse, _agents])
@pytest.mark.parametrize("start", NOT_TIMES)
def test_a_start_time_no_clock_reads_is_named(tmp_path: Path, make: Any, start: str) -> None:
    path = tmp_path / "trace.json"
    path.write_text(make(start))
    with pytest.raises(MessageFormatError) as caught:
        load(path)
    says(str(caught.value), str(path), "start time", "not a time")


@pytest.mark.parametrize("make", [_otlp, _jaeger, _langfuse])
def test_the_same_traces_with_a_real_start_time_load(tmp_path: Path, make: Any) -> None:
    path = tmp_path / "trace.json"
    path.write_text(make('"1767225600000000000"' if make is _otlp else "1767225600000000"))
    assert [m.role for m in load(path).messages][:1] == ["user"]


DEEP = "[" * 100_000 + "]" * 100_000


def test_tool_arguments_nested_past_recursion_are_kept_as_text(tmp_path: Path) -> None:
    messages = [
        {"role": "user", "content": "hi"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "f", "arguments": DEEP}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "ok"},
    ]
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(messages))
    use = load(path).messages[1].tool_uses[0]  # type: ignore[union-attr]
    assert use.input == {"_raw_arguments": DEEP}


def test_an_otel_attribute_nested_past_recursion_is_text_not_a_crash(tmp_path: Path) -> None:
    span = json.loads(_otlp('"1"'))
    attributes = span["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"]
    attributes.append({"key": "gen_ai.input.messages", "value": {"stringValue": DEEP}})
    attributes.append(
        {"key": "gen_ai.completion.0.tool_calls.0.arguments", "value": {"stringValue": DEEP}}
    )
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(span))
    try:
        transcript = load(path)
    except MessageFormatError as exc:
        says(str(exc), str(path))
    else:
        assert transcript.messages


@pytest.mark.parametrize("depth", [900, 5_000])
def test_phoenix_attributes_nested_a_thousand_levels(tmp_path: Path, depth: int) -> None:
    deep = '{"x": ' * depth + "1" + "}" * depth
    span = (
        '{"name": "llm", "context": {"trace_id": "t", "span_id": "s"}, "span_kind": "LLM", '
        '"start_time": "2026-01-01T00:00:00Z", "attributes": {"llm": {"input_messages": '
        '[{"message": {"role": "user", "content": "hi"}}]}, "deep": ' + deep + "}}"
    )
    path = tmp_path / "phoenix.json"
    path.write_text(span)
    if depth > 1_000:  # past what Python's JSON decoder reads: a format error naming it
        with pytest.raises(MessageFormatError) as caught:
            load(path)
        says(str(caught.value), str(path), "nested too deeply")
        return
    # Decoded, and flattened as far as instrumentation nests (the rest kept whole).
    assert [m.role for m in load(path).messages] == ["user"]


def _damaged_eval(tmp_path: Path, entry: str) -> Path:
    source = FIXTURES / "inspect" / "add.eval"
    with zipfile.ZipFile(source) as archive:
        info = archive.getinfo(entry)
        data = bytearray(source.read_bytes())
    start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra) + 8
    for k in range(start, start + 40):
        data[k] ^= 0x5A
    path = tmp_path / "damaged.eval"
    path.write_bytes(bytes(data))
    return path


def test_a_damaged_zstd_eval_is_named(tmp_path: Path) -> None:
    pytest.importorskip("zstandard", reason="the fixture's entries are zstandard-compressed")
    path = _damaged_eval(tmp_path, "samples/1_epoch_1.json")
    with pytest.raises(MessageFormatError) as caught:
        load(path)
    says(str(caught.value), str(path), "damaged", "copy it again")


def _eval_zip(path: Path, samples: dict[str, bytes], method: int = zipfile.ZIP_DEFLATED) -> Path:
    header = json.dumps({"version": 2, "status": "success", "eval": {"task": "t", "model": "m"}})
    with zipfile.ZipFile(path, "w", compression=method) as archive:
        archive.writestr("header.json", header)
        for name, data in samples.items():
            archive.writestr(name, data)
    return path


def test_a_damaged_deflate_eval_is_named(tmp_path: Path) -> None:
    sample = (FIXTURES / "inspect" / "add.json").read_text()
    first = json.dumps(json.loads(sample)["samples"][0]).encode()
    path = _eval_zip(tmp_path / "deflate.eval", {"samples/1_epoch_1.json": first})
    assert load(path).messages  # sound, it loads
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("samples/1_epoch_1.json")
    data = bytearray(path.read_bytes())
    start = info.header_offset + 30 + len(info.filename.encode()) + 4
    for k in range(start, start + 60):
        data[k] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(MessageFormatError) as caught:
        load(path)
    says(str(caught.value), str(path), "damaged", "copy it again")


def test_a_zip_bomb_is_refused_before_it_is_decompressed(tmp_path: Path) -> None:
    path = tmp_path / "bomb.eval"
    size = _inspect.MAX_ENTRY_BYTES + 1
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("header.json", '{"status": "success", "eval": {}, "version": 2}')
        with archive.open("samples/1_epoch_1.json", "w", force_zip64=True) as entry:
            chunk = b" " * (1 << 20)
            for _ in range(size // len(chunk)):
                entry.write(chunk)
            entry.write(b" " * (size % len(chunk)))
    assert path.stat().st_size < 2_000_000  # a bomb: under 2 MB on disk
    tracemalloc.start()
    try:
        with pytest.raises(MessageFormatError) as caught:
            load(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    says(str(caught.value), str(path), f"{size:,} bytes", "zip bomb", "nothing was decompressed")
    assert peak < 50_000_000


def test_an_entry_longer_than_it_declares_stops_at_its_size(tmp_path: Path) -> None:
    # The sizes in the zip's directory lie: the reader stops at the declared size, and the
    # check of the data's CRC names the damage.
    path = _eval_zip(tmp_path / "liar.eval", {"samples/1_epoch_1.json": b"[" + b"1," * 50_000})
    data = path.read_bytes()
    with zipfile.ZipFile(path) as archive:
        info = archive.getinfo("samples/1_epoch_1.json")
    real = info.file_size.to_bytes(4, "little")
    lie = (100).to_bytes(4, "little")
    data = data.replace(real, lie)
    path.write_bytes(data)
    with pytest.raises(MessageFormatError) as caught:
        load(path)
    says(str(caught.value), str(path))


def _claude_code_with_compaction(tmp_path: Path, pre_tokens: Any) -> Path:
    source = FIXTURES / "sessions" / "claude_code_session.jsonl"
    lines = source.read_text().splitlines()
    at = next(i for i, line in enumerate(lines) if '"compact_boundary"' in line)
    record = json.loads(lines[at])
    record["compactMetadata"]["preTokens"] = pre_tokens
    lines[at] = json.dumps(record)  # NaN and Infinity as JavaScript writes them
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("pre_tokens", [math.nan, math.inf, -1, "many", 2**70])
async def test_a_compaction_of_no_size_costs_that_figure_only(
    tmp_path: Path, pre_tokens: Any
) -> None:
    from ctxlab.widgets import Lab

    sound = load(_claude_code_with_compaction(tmp_path, 30_000))
    assert ctxlab.recorded_compactions(sound)[0].pre_tokens == 30_000
    path = _claude_code_with_compaction(tmp_path, pre_tokens)
    transcript = load(path)
    (compaction,) = ctxlab.recorded_compactions(transcript)
    assert compaction.pre_tokens is None
    calibration = ctxlab.calibrate(transcript, ApproximateCounter())
    assert calibration.frame()["billed"].tolist() == (
        ctxlab.calibrate(sound, ApproximateCounter()).frame()["billed"].tolist()
    )
    lab = await Lab.open(path, context_window=200_000, config=ContextConfig())
    assert len(lab.log.manifests) == sum(m.role == "assistant" for m in transcript.messages)


def test_a_copilot_compaction_of_infinite_size(tmp_path: Path) -> None:
    # The session that has a compaction (the other copilot fixture has none).
    events = FIXTURES / "copilot" / "session-state" / "5f0c1a2e-7b7d-4c9e-9a51-3b8e2d6f1c44"
    events = events / "events.jsonl"
    copy = tmp_path / "session-state" / events.parent.name / "events.jsonl"
    copy.parent.mkdir(parents=True)
    text, changed = re.subn(
        r'"preCompactionTokens": *[0-9]+', '"preCompactionTokens": Infinity', events.read_text()
    )
    assert changed == 1
    copy.write_text(text)
    transcript = load(copy)
    compactions = ctxlab.recorded_compactions(transcript)
    assert len(compactions) == 1 and compactions[0].pre_tokens is None
    assert len(ctxlab.calibrate(transcript, ApproximateCounter()).frame()) > 0


def test_attributes_nested_past_recursion_are_flattened_as_far_as_instrumentation_nests() -> None:
    from ctxlab.io.formats.otel.values import FLAT_DEPTH as _FLAT_DEPTH
    from ctxlab.io.formats.otel.values import flat as _flat

    deep: dict[str, Any] = {"leaf": 1}
    for _ in range(5_000):  # built in Python: deeper than any JSON decoder would hand over
        deep = {"x": deep}
    flat = _flat({"llm": {"model_name": "m"}, "deep": deep})
    assert flat["llm.model_name"] == "m"
    (key,) = [k for k in flat if k.startswith("deep")]
    assert key == "deep" + ".x" * _FLAT_DEPTH  # the rest kept whole under its key


@pytest.mark.parametrize(
    "fixture", ["openllmetry/openai_spans.json", "langfuse/langfuse_spans.json"]
)
@pytest.mark.parametrize("clock", ["backwards", "frozen", "jumps"])
def test_a_clock_that_steps_back_crashes_nothing(tmp_path: Path, fixture: str, clock: str) -> None:
    # (How many messages it then reads is the importer census's business: it must not crash.)
    spans = json.loads((FIXTURES / fixture).read_text())
    for k, span in enumerate(spans):
        second = {"backwards": 59 - k, "frozen": 0, "jumps": (k * 37) % 60}[clock]
        span["start_time"] = f"2026-12-01T17:11:{second:02d}.000000Z"
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(spans))
    assert load(path).messages


@pytest.mark.parametrize("value", ["Infinity", "NaN", '"many"', '"9e99"'])
def test_an_otlp_int_value_that_is_no_int(tmp_path: Path, value: str) -> None:
    text = _otlp('"1"').replace(
        "]}]}]}]}",
        f', {{"key": "gen_ai.usage.input_tokens", "value": {{"intValue": {value}}}}}]}}]}}]}}]}}',
    )
    path = tmp_path / "trace.json"
    path.write_text(text)
    with pytest.raises(MessageFormatError) as caught:
        load(path)
    says(str(caught.value), str(path), "gen_ai.usage.input_tokens")


def test_every_error_of_a_file_names_it(tmp_path: Path) -> None:
    path = tmp_path / "which-one.json"
    path.write_text("[null, 1]")  # no format it could be
    with pytest.raises(MessageFormatError) as caught:
        load(path)
    says(str(caught.value), str(path), "cannot tell the format")
