"""What the retention extractor promises, on the items it finds (found by a mutation run of
`retention/_extract`): a command given as a list of words or under a later key, a command beside
a path argument, an editor's sub-command not a command; identifiers of four characters and
more; the values inside a list argument; an error line of up to 400 characters; a file's
strongest action kept whichever comes last; a created file among the edits; an instruction
that repeats the task not counted twice."""

from __future__ import annotations

from typing import Any

from ctxlab.messages import AssistantMessage, ToolResultBlock, ToolUseBlock, UserMessage
from ctxlab.retention._extract import Inventory, inventory
from tests.helpers import Message


def _span(*calls: tuple[str, dict[str, Any]], output: str = "ok") -> list[Message]:
    messages: list[Message] = [UserMessage(content="Fix the parser.")]
    for n, (name, arguments) in enumerate(calls):
        use = ToolUseBlock(id=f"c{n}", name=name, input=arguments)
        messages.append(AssistantMessage(content=(use,)))
        result = ToolResultBlock(tool_use_id=f"c{n}", content=output)
        messages.append(UserMessage(content=(result,)))
    return messages


def test_a_command_as_words_or_under_a_later_key_is_one_command() -> None:
    found = inventory(_span(("bash", {"command": ["pytest", "-x", "tests/"]})))
    assert found.of("commands") == ("pytest -x tests/",)
    found = inventory(_span(("shell", {"command": "  ", "cmd": "make test"})))
    assert found.of("commands") == ("make test",)
    found = inventory(_span(("shell", {"command": ["pytest", 3]})))  # not all words: not one
    assert found.of("commands") == ()


def test_a_command_beside_a_path_is_a_command_and_an_editors_word_is_not() -> None:
    found = inventory(_span(("run", {"command": "make lint", "path": "src"})))
    assert found.of("commands") == ("make lint",)
    viewed = inventory(_span(("str_replace_editor", {"command": "view", "path": "src/a.py"})))
    assert viewed.of("commands") == () and viewed.of("files") == ("src/a.py",)
    # The word alone, with no path, is what the agent ran.
    assert inventory(_span(("bash", {"command": "view"}))).of("commands") == ("view",)


def test_identifiers_count_from_four_characters() -> None:
    said: list[Message] = [
        UserMessage(content="Fix it."),
        AssistantMessage(content="Renaming a_bc and x_y in load_data."),
    ]
    numbers = inventory(said).of("numbers")
    assert "a_bc" in numbers and "load_data" in numbers and "x_y" not in numbers


def test_values_inside_a_list_argument_are_the_agents() -> None:
    found = inventory(_span(("lookup", {"names": ["load_user_data", ["parse_header_v2"]]})))
    assert {"load_user_data", "parse_header_v2"} <= set(found.of("numbers"))
    # File contents it writes are not values it chose, a list of them neither.
    written = inventory(_span(("write", {"edits": ["secret_helper_name"]})))
    assert "secret_helper_name" not in written.of("numbers")


def test_an_error_line_is_an_outcome_up_to_400_characters() -> None:
    head = "ValueError: "
    fits = head + "x" * (400 - len(head))
    found = inventory(_span(("bash", {"command": "python run.py"}), output=f"{fits}\n"))
    assert found.of("outcomes") == (fits,)
    longer = fits + "y"
    found = inventory(_span(("bash", {"command": "python run.py"}), output=f"{longer}\n"))
    assert found.of("outcomes") == ()


def test_a_files_strongest_action_is_kept_whichever_comes_last() -> None:
    shell = inventory(
        _span(
            ("bash", {"command": "sed -i 's/a/b/' src/a.py"}), ("bash", {"command": "cat src/a.py"})
        )
    )
    assert shell.actions == {"src/a.py": "edited"} and shell.of("edits") == ("src/a.py",)
    editor = inventory(
        _span(
            ("str_replace_editor", {"command": "str_replace", "path": "src/b.py", "old_str": "a"}),
            ("str_replace_editor", {"command": "view", "path": "src/b.py"}),
        )
    )
    assert editor.actions == {"src/b.py": "edited"}


def test_a_created_file_is_an_edit() -> None:
    created = inventory(
        _span(("str_replace_editor", {"command": "create", "path": "src/new.py", "file_text": "x"}))
    )
    assert created.actions == {"src/new.py": "created"}
    assert created.of("edits") == ("src/new.py",)


def test_an_instruction_that_repeats_the_task_is_not_counted_twice() -> None:
    said: list[Message] = [
        UserMessage(content="Fix the parser."),
        AssistantMessage(content="On it."),
        UserMessage(content="Fix the parser.\nAnd add a test."),
    ]
    found = inventory(said)
    assert found.of("task") == ("Fix the parser.",)
    assert found.of("instructions") == ("And add a test.",)


def test_a_category_without_items_is_empty() -> None:
    assert Inventory().of("files") == () and inventory([]).of("nothing") == ()
