from __future__ import annotations

import json

import pytest

from ctxlab import (
    AssistantMessage,
    HintBlock,
    MessageFormatError,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
    messages_from_anthropic,
    messages_to_anthropic,
)
from ctxlab.messages import (
    MESSAGES_ADAPTER,
    ImageBlock,
    dump_messages,
    find_tool_pair_problems,
    parse_messages,
)

ANTHROPIC = [
    {"role": "user", "content": [{"type": "text", "text": "List the files"}]},
    {
        "role": "assistant",
        "content": [
            {"type": "text", "text": "Listing."},
            {"type": "tool_use", "id": "t1", "name": "bash", "input": {"cmd": "ls", "n": [1, 2]}},
            {"type": "tool_use", "id": "t2", "name": "read", "input": {}},
        ],
    },
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t1", "content": "a.py\nb.py"},
            {
                "type": "tool_result",
                "tool_use_id": "t2",
                "is_error": True,
                "content": [
                    {"type": "text", "text": "no such file"},
                    {
                        "type": "image",
                        "source": {"type": "base64", "media_type": "image/png", "data": "iVBO"},
                    },
                ],
            },
            {"type": "image", "source": {"type": "url", "url": "https://example.com/x.png"}},
            {"type": "text", "text": "<system-reminder>be brief</system-reminder>"},
        ],
    },
]


def test_anthropic_round_trip_is_lossless() -> None:
    messages = messages_from_anthropic(ANTHROPIC)
    assert messages_to_anthropic(messages) == ANTHROPIC
    assert isinstance(messages[2].content[3], HintBlock)
    assert messages[2].content[3].hint == "be brief"
    assert messages_from_anthropic(messages_to_anthropic(messages)) == messages


def test_json_round_trip_through_type_adapter() -> None:
    messages = messages_from_anthropic(ANTHROPIC)
    text = json.dumps(dump_messages(messages))
    assert parse_messages(json.loads(text)) == messages
    assert MESSAGES_ADAPTER.validate_json(MESSAGES_ADAPTER.dump_json(messages)) == messages


def test_string_content_shorthand() -> None:
    (message,) = messages_from_anthropic([{"role": "user", "content": "hi"}])
    assert message == UserMessage(content=(TextBlock(text="hi"),))
    assert UserMessage(content="hi") == message


def test_content_hash_is_stable_and_content_sensitive() -> None:
    a = ToolUseBlock(id="x", name="bash", input={"cmd": "ls"})
    b = ToolUseBlock(id="x", name="bash", input={"cmd": "ls"})
    c = ToolUseBlock(id="x", name="bash", input={"cmd": "pwd"})
    assert a.content_hash == b.content_hash != c.content_hash
    changed = a.evolve(input={"cmd": "pwd"})
    assert changed.content_hash == c.content_hash
    # Pinned: counts kept on disk (`CountStore`) are keyed by these hashes, so a version that
    # hashed otherwise would silently count every stored session again.
    assert a.content_hash == "3ecc5512c3dd0cba"
    assert TextBlock(text='héllo "w"\n').content_hash == "c6af216279f091d0"


def test_a_copy_with_changes_is_hashed_as_its_new_content() -> None:
    # pydantic's model_copy copies the instance dict, where cached hashes live: a copy with an
    # update must not carry the old content's (they key token counts and manifest ids).
    block = ToolUseBlock(id="x", name="bash", input={"cmd": "ls"})
    message = UserMessage(content=(ToolResultBlock(tool_use_id="x", content="a.py"),))
    old_block, old_message = block.content_hash, message.content_hash
    assert len(message.tool_results) == 1  # cached, as every derived property
    copied = block.model_copy(update={"input": {"cmd": "pwd"}})
    assert (
        copied.content_hash == ToolUseBlock(id="x", name="bash", input={"cmd": "pwd"}).content_hash
    )
    assert copied.content_hash != old_block
    other = message.model_copy(update={"content": (TextBlock(text="Read a.py"),)})
    assert other.content_hash == UserMessage(content="Read a.py").content_hash != old_message
    assert other.tool_results == ()  # every cached property, not the hash alone
    # Without changes the copy is the same content: its hash is kept, and right.
    assert message.model_copy().__dict__["content_hash"] == old_message


@pytest.mark.parametrize(
    ("payload", "fragment"),
    [
        ([{"role": "robot", "content": "x"}], "message 0"),
        ([{"role": "user"}], "no 'content'"),
        # (thinking in a user turn is carried as a provider block: `NOT_IN_ROLE`)
        (
            [{"role": "user", "content": [{"type": "tool_use", "id": "t", "name": "x"}]}],
            "'tool_use'",
        ),
        ([{"role": "assistant", "content": [{"type": "tool_use", "name": "x"}]}], "id"),
        ([{"role": "user", "content": ["just a string"]}], "expected a content block"),
    ],
)
def test_malformed_messages_raise_clear_errors(payload: list, fragment: str) -> None:
    with pytest.raises(MessageFormatError, match=fragment):
        messages_from_anthropic(payload)


def test_parse_messages_names_index_and_field() -> None:
    with pytest.raises(MessageFormatError) as info:
        parse_messages([{"role": "user", "content": "ok"}, {"role": "assistant", "content": 3}])
    assert "message 1" in str(info.value)
    assert "content" in str(info.value)


def test_tool_pair_problems() -> None:
    use = AssistantMessage(content=(ToolUseBlock(id="a", name="t"), ToolUseBlock(id="b", name="t")))
    only_a = UserMessage(content=(ToolResultBlock(tool_use_id="a", content="ok"),))
    orphan = UserMessage(content=(ToolResultBlock(tool_use_id="zzz", content="?"),))
    problems = find_tool_pair_problems([UserMessage(content="go"), use, only_a])
    assert [(p.kind, p.tool_use_id) for p in problems] == [("missing_result", "b")]
    problems = find_tool_pair_problems([UserMessage(content="go"), orphan])
    assert [(p.kind, p.tool_use_id) for p in problems] == [("orphan_result", "zzz")]
    assert "has no tool_use" in str(problems[0])
    assert find_tool_pair_problems([UserMessage(content="go"), use], allow_unfinished=True) == []
    assert find_tool_pair_problems([UserMessage(content="go"), use])


def test_image_count_and_result_text() -> None:
    (_, _, user) = messages_from_anthropic(ANTHROPIC)
    assert isinstance(user, UserMessage)
    assert user.image_count == 2
    result = user.tool_results[1]
    assert result.text == "no such file"
    assert isinstance(result.images[0], ImageBlock)
