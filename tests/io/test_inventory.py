"""The inventory: what a file holds, found by field names alone, each thing counted once however
often the file repeats it — and set against what a reader placed, so that a loss is named by
kind and JSON path (`ctxlab.io._inventory`, `ctxlab.io._accounting`)."""

from __future__ import annotations

import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from ctxlab import load
from ctxlab.io import Census
from ctxlab.io._accounting import unplaced
from ctxlab.io._build import ConversationBuilder
from ctxlab.io._inventory import inventory_of
from tests.strategies import SETTINGS, json_value


def _counts(*values: object) -> dict[str, int]:
    return inventory_of(values).counts()


def test_usage_is_an_object_counting_tokens_not_a_limit_or_a_budget() -> None:
    assert _counts({"usage": {"input_tokens": 5, "output_tokens": 1}}) == {"usage": 1}
    assert _counts({"usageMetadata": {"promptTokenCount": 5}}) == {"usage": 1}
    # Gemini CLI's counts under "tokens" with plain names; a count under a usage key.
    assert _counts({"tokens": {"input": 9, "output": 2}}) == {"usage": 1}
    assert _counts({"data": {"outputTokens": 7, "messageId": "m"}}) == {"usage": 1}
    # Limits, budgets and windows bound a request; they are not what it cost.
    assert _counts({"max_tokens": 4096, "kwargs": {"max_completion_tokens": 10}}) == {}
    assert _counts({"thinking": {"type": "enabled", "budget_tokens": 2048}}) == {}
    assert _counts({"info": {"model_context_window": 200_000}}) == {}
    # A usage's parts are the usage (cache details inside it count once).
    nested = {"usage": {"input_tokens": 5, "cache_creation": {"ephemeral_5m_input_tokens": 3}}}
    assert _counts(nested) == {"usage": 1}
    # Codex: a report's two usages (the request's and the session's so far) are two fields.
    codex = {"info": {"last_token_usage": {"input_tokens": 1}, "total_token_usage": {"a": 2}}}
    assert _counts(codex) == {"usage": 2}
    # No number, no usage; a boolean is not a count.
    assert _counts({"usage": {"input_tokens": None, "cached": True}}) == {}


def test_a_response_written_over_several_records_is_one_usage_and_one_reply() -> None:
    # Claude Code writes a line per block of a response, each with the response's usage.
    lines = [
        {"type": "assistant", "requestId": "r1", "message": {"id": "m1", "role": "assistant",
         "content": [{"type": "text", "text": "a"}], "usage": {"input_tokens": 9}}},
        {"type": "assistant", "requestId": "r1", "message": {"id": "m1", "role": "assistant",
         "content": [{"type": "tool_use", "id": "t1", "name": "ls", "input": {}}],
         "usage": {"input_tokens": 9, "output_tokens": 4}}},
    ]  # fmt: skip
    assert _counts(*lines) == {"usage": 1, "tool call": 1, "reply": 1}
    # Without ids, a report repeated word for word is one; two reports are two.
    same = {"type": "token_count", "info": {"last_token_usage": {"input_tokens": 3}}}
    other = {"type": "token_count", "info": {"last_token_usage": {"input_tokens": 4}}}
    assert _counts(same, same, other) == {"usage": 2}


def test_tool_calls_in_every_shape_counted_once_by_id_or_by_name_and_arguments() -> None:
    openai = {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "ls", "arguments": "{}"}},
            {"id": "c2", "type": "function", "function": {"name": "cat", "arguments": "{}"}},
        ],
    }
    anthropic = {"type": "tool_use", "id": "c1", "name": "ls", "input": {}}  # c1 again
    gemini = {"parts": [{"functionCall": {"name": "grep", "args": {"q": "x"}}}]}
    responses = {"type": "function_call", "call_id": "c3", "name": "x", "arguments": "{}"}
    vercel = {"type": "tool-call", "toolCallId": "c4", "toolName": "y", "input": {}}
    # Continue keeps a call's state with the call in OpenAI's shape under "toolCall".
    continued = {"toolCallStates": [{"toolCallId": "c5", "toolCall": {"id": "c5",
                 "type": "function", "function": {"name": "edit", "arguments": "{}"}}}]}  # fmt: skip
    found = inventory_of([openai, anthropic, gemini, responses, vercel, continued])
    assert found.counts()["tool call"] == 6
    # A tool's schema is not a call.
    schema = {"tools": [{"type": "function", "function": {"name": "ls", "parameters": {}}}]}
    assert _counts(schema) == {}
    # An id-less call is known by its name and arguments, JSON text or not.
    text_args = {"function_call": {"name": "ls", "arguments": '{"a": 1}'}}
    dict_args = {"type": "tool_use", "name": "ls", "input": {"a": 1}}
    assert _counts(text_args, dict_args) == {"tool call": 1}


def test_reasoning_by_key_by_type_and_by_mark_each_text_once() -> None:
    values = [
        {"type": "thinking", "thinking": "Let me see.", "signature": "sig"},
        {"reasoningText": "Check the cache."},
        {"parts": [{"text": "Weighing it.", "thought": True}, {"text": "The answer."}]},
        {"type": "reasoning", "summary": [{"type": "summary_text", "text": "Plan  it."}]},
        {"type": "agent_reasoning", "text": "Plan it."},  # the summary again, as an event
        {"thoughts": [{"subject": "Scope", "description": "Only the parser."}]},
        {"type": "redacted_thinking", "data": "ENCRYPTED"},
    ]
    assert _counts(*values) == {"reasoning": 6}
    # A reasoning setting is not reasoning.
    assert _counts({"reasoning": {"effort": "high", "summary": "auto"}}) == {}


def test_replies_by_role_or_type_one_per_message_however_nested() -> None:
    line = {"type": "assistant", "message": {"role": "assistant", "content": "hi"}}
    assert _counts(line) == {"reply": 1}
    assert _counts({"type": "gemini", "content": "hello"}, {"role": "model", "parts": []}) == {
        "reply": 1  # a model message with nothing in it is no reply
    }
    # The same words again in another shape (a request's input repeating the reply): one.
    again = {"role": "assistant", "content": [{"type": "text", "text": "hi"}]}
    assert _counts(line["message"], again) == {"reply": 1}


def test_span_attributes_are_read_as_the_objects_and_json_they_carry() -> None:
    otlp = {"attributes": [
        {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "120"}},
        {"key": "gen_ai.output.messages", "value": {"stringValue": json.dumps(
            [{"role": "assistant", "parts": [{"type": "tool_call", "id": "x", "name": "ls"}]}])}},
    ]}  # fmt: skip
    assert _counts(otlp) == {"usage": 1, "tool call": 1, "reply": 1}
    # A tool's output that happens to be JSON is text, not the session's own records.
    result = {"type": "tool_result", "content": json.dumps({"tool_calls": [{"id": "z"}]})}
    assert _counts(result) == {}


def test_a_file_nested_past_the_limit_is_walked_as_far_as_it_goes_and_says_so() -> None:
    deep: object = {"usage": {"input_tokens": 1}}
    for _ in range(400):
        deep = {"x": deep}
    found = inventory_of([deep, {"usage": {"output_tokens": 2}}])
    assert found.cut and found.counts() == {"usage": 1}


def test_unplaced_names_what_the_transcript_lacks_by_kind_and_path() -> None:
    held = inventory_of([
        {"role": "assistant", "tool_calls": [{"id": "a", "function": {"name": "ls"}},
                                              {"id": "b", "function": {"name": "ls"}}],
         "usage": {"prompt_tokens": 3}},
        {"role": "assistant", "content": "done", "reasoning_content": "Because the list is long."},
    ])  # fmt: skip
    placed = inventory_of(
        [{"role": "assistant", "content": [{"type": "tool_use", "id": "a", "name": "ls"}]}]
    )
    found = unplaced(held, placed, {}, {"usage": 1, "reply": 2})
    assert found == {"tool call at $.tool_calls[]": 1, "reasoning at $.reasoning_content": 1}
    # The reasoning kept as text (some readers keep a thought as the words it is): placed.
    assert unplaced(
        held, placed, {}, {"usage": 1, "reply": 2}, "x Because the list is long. y"
    ) == {"tool call at $.tool_calls[]": 1}
    # Set aside by key: accounted.
    aside = {"tool call": ["call b"], "reasoning": list(held.findings["reasoning"])}
    assert unplaced(held, placed, aside, {"usage": 1, "reply": 2}) == {}
    # Counted kinds: more held than the reader read or kept.
    assert unplaced(held, placed, aside, {"usage": 0, "reply": 1}) == {
        "usage at $.usage": 1,
        "reply at $": 1,
    }


def test_a_skipped_record_sets_aside_what_it_holds_and_a_used_one_must_place_it() -> None:
    call = {"role": "assistant", "tool_calls": [{"id": "q", "function": {"name": "ls"}}]}
    builder = ConversationBuilder("t", unit="line")
    builder.record("user")
    builder.text("user", "hi")
    builder.record("progress", raw=call)
    builder.skip("subagent line")
    builder.record("assistant")
    builder.text("assistant", "ok")
    _, notes, _, _ = builder.finish()
    census = Census.from_meta(notes["census"])
    assert census is not None
    assert census.set_aside == {"tool call: subagent line": 1, "reply: subagent line": 1}
    assert census.aside_keys["tool call"] == ["call q"]
    assert sorted(census.aside_keys) == ["reply", "tool call"]
    assert census.unaccounted == {} and census.adds_up


def test_a_loaded_file_whose_calls_the_reader_drops_is_not_whole(tmp_path: Path) -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "a", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]},
        {"role": "tool", "tool_call_id": "a", "content": "x"},
        {"role": "assistant", "content": "done",
         "response_metadata": {"token_usage": {"prompt_tokens": 5}}},
    ]  # fmt: skip
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(messages))
    census = load(path).census
    assert census is not None and census.adds_up
    assert census.held == {"tool call": 1, "reply": 2, "usage": 1}
    # The chat reader reads a message's own usage, not LangChain's metadata: the inventory
    # says so.
    assert census.unplaced() == {"usage": 1}
    assert not census.whole
    assert census.unplaced_line() == (
        "unaccounted: 1 usage field (at $[].response_metadata.token_usage)"
    )


def test_the_unaccounted_line_names_the_paths_of_findings_not_of_record_kinds() -> None:
    # A record's kind is the file's own word: "entry at $.x" is no finding of the inventory.
    unaccounted = {"entry at $.weird": 9, "usage at $.data": 2, "x": 1}
    census = Census(unit="line", read={}, used={}, skipped={}, unaccounted=unaccounted)
    assert census.unplaced() == {"usage": 2}
    assert census.unplaced_line() == "unaccounted: 2 usage fields (at $.data)"


@SETTINGS
@given(st.lists(json_value, max_size=6))
def test_any_json_is_walked_without_error_and_counted_once(values: list[object]) -> None:
    found = inventory_of(values)
    assert set(found.counts()) <= {"usage", "tool call", "reasoning", "reply"}
    # Walking the same values twice finds nothing new: every finding has a key of its own.
    assert inventory_of(values + values).counts() == found.counts()
