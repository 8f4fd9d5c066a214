"""The grader keeps what it found in each command (a what-if grades the same commands under
config after config): each command's own files and actions, however alike two commands look,
and the same on a second reading."""

from __future__ import annotations

from ctxlab.messages import AssistantMessage, ToolResultBlock, ToolUseBlock, UserMessage
from ctxlab.retention._extract import inventory


def _span(*commands: str) -> list[UserMessage | AssistantMessage]:
    messages: list[UserMessage | AssistantMessage] = [UserMessage(content="Fix the parser.")]
    for n, command in enumerate(commands):
        use = ToolUseBlock(id=f"c{n}", name="bash", input={"command": command})
        messages.append(AssistantMessage(content=(use,)))
        messages.append(UserMessage(content=(ToolResultBlock(tool_use_id=f"c{n}", content="ok"),)))
    return messages


def test_each_command_keeps_its_own_files() -> None:
    for _ in range(2):  # the second time from what was kept
        read = inventory(_span("cat src/alpha.py"))
        assert read.of("files") == ("src/alpha.py",)
        assert read.actions == {"src/alpha.py": "read"}
        other = inventory(_span("cat src/beta.py"))
        assert other.of("files") == ("src/beta.py",)
        edited = inventory(_span("cat src/alpha.py", "sed -i 's/a/b/' src/alpha.py"))
        assert edited.actions == {"src/alpha.py": "edited"}
        assert edited.of("edits") == ("src/alpha.py",)
