"""No text, however hostile (surrogates, control characters), breaks serialization."""

from __future__ import annotations


def test_no_text_can_break_serialization() -> None:
    from ctxlab.messages import ToolResultBlock, ToolUseBlock, UserMessage

    for text in ("x\ud800y", "caf\udce9", "\udfff", "ok"):
        message = UserMessage(content=text)
        message.model_dump_json()
        ToolResultBlock(tool_use_id=text, content=text).model_dump_json()
        ToolUseBlock(id="a", name="t", input={"k": [text, {text: text}]}).model_dump_json()
