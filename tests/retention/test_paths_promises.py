"""The retention measure's reading of files, each documented promise on its answer: which paths
are the repository root (no item: a summary naming any file under it would "keep" it), what a
tool call did to the file of its path argument, the files a shell command names with what it
did to each, and which of two actions describes a file best."""

from __future__ import annotations

import pytest

from ctxlab.messages import ToolUseBlock
from ctxlab.retention._paths import command_files, path_argument, roots, stronger, tool_action

# --- the repository root ---------------------------------------------------------------------------


@pytest.mark.parametrize("root", [".", "./", "~", "/", ""])
def test_the_current_folder_home_and_the_filesystem_root_are_roots(root: str) -> None:
    assert roots(["src/app.py", root, "docs/index.md"], []) == [root]


def test_a_folder_the_commands_cd_into_is_a_root_with_or_without_its_slash() -> None:
    paths = ["/work/repo", "/other/a.py", "/other/b.py", "/other/c.py"]
    assert roots(paths, ["cd /work/repo/ && pytest -q"]) == ["/work/repo"]
    assert roots(paths, ["(cd '/work/repo'; make)"]) == ["/work/repo"]
    assert roots(paths, ["echo cd /work/repo"]) == []  # not a cd: an argument of echo
    assert roots(paths, ["ls /work/repo"]) == []
    # Every root is named, not only the first.
    assert roots([".", *paths], ["cd /work/repo"]) == [".", "/work/repo"]


@pytest.mark.parametrize(
    ("others", "is_root"),
    [
        (1, True),  # 2 under it, 1 elsewhere
        (2, True),  # 2 under it of the 4 other paths: exactly half
        (3, False),  # 2 of 5: less than half
    ],
)
def test_a_folder_is_a_root_when_at_least_half_the_other_paths_sit_under_it(
    others: int, is_root: bool
) -> None:
    paths = ["/r", "/r/a.py", "/r/b.py", *(f"/x{n}/c.py" for n in range(others))]
    assert roots(paths, []) == (["/r"] if is_root else [])


@pytest.mark.parametrize("root", ["/pytest-dev__pytest__5.4", "/work/v1.2", "/repo.git", "/app.d"])
def test_a_root_is_a_root_whatever_its_name_ends_with(root: str) -> None:
    # SWE-agent's roots end in the version (``/pytest-dev__pytest__5.4``): a folder files sit
    # under, or the commands cd into, is a folder, whatever its last dot says (issue 53).
    paths = [root, f"{root}/src/a.py", f"{root}/b.py"]
    assert roots(paths, []) == [root]
    assert roots([root, "/x/a.py", "/y/b.py", "/z/c.py"], [f"cd {root} && pytest"]) == [root]


def test_a_file_is_no_root() -> None:
    # Nothing under it, no cd into it: a file with an extension stays an item.
    assert roots(["/work/setup.py", "/work/a.py"], ["python /work/setup.py"]) == []


# --- what a tool call did -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "arguments", "action"),
    [
        ("Read", {"file_path": "a.py"}, "read"),
        ("read_file", {"path": "a.py"}, "read"),
        ("Edit", {"file_path": "a.py"}, "edited"),
        ("MultiEdit", {"file_path": "a.py"}, "edited"),
        ("edit_file", {"path": "a.py"}, "edited"),
        ("Write", {"file_path": "a.py"}, "created"),
        ("write_file", {"path": "a.py"}, "created"),
        ("NotebookEdit", {"notebook_path": "a.ipynb"}, "edited"),
        ("apply_patch", {"path": "a.py"}, "edited"),
        ("Bash", {"path": "a.py"}, "read"),  # no action of its own: the file was read
        ("str_replace_based_edit_tool", {"command": "create", "path": "a.py"}, "created"),
        ("str_replace_based_edit_tool", {"command": " str_replace ", "path": "a.py"}, "edited"),
        ("str_replace_based_edit_tool", {"command": "view", "path": "a.py"}, "read"),
    ],
)
def test_a_tool_calls_action_comes_from_its_sub_command_else_its_name(
    name: str, arguments: dict[str, str], action: str
) -> None:
    assert tool_action(ToolUseBlock(id="t", name=name, input=arguments)) == action


def test_the_path_argument_is_the_first_path_key_stripped_never_a_text() -> None:
    def call(**arguments: object) -> ToolUseBlock:
        return ToolUseBlock(id="t", name="Read", input=arguments)

    assert path_argument(call(path=" src/a.py ", file_path="b.py")) == "src/a.py"
    assert path_argument(call(path="   ", file_path="b.py")) == "b.py"
    assert path_argument(call(file_path="line one\nline two")) is None
    assert path_argument(call(file_path=3)) is None


# --- the files a shell command names -------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "files"),
    [
        ("cat src/app.py", (("src/app.py", "read"),)),
        ("python scripts/run.py --fast", (("scripts/run.py", "run"),)),
        ("cd repo && pytest tests/test_app.py", (("tests/test_app.py", "run"),)),
        ("echo done > logs/out.txt", (("logs/out.txt", "edited"),)),
        ("cat <<EOF > notes/plan.md\nplan\nEOF", (("notes/plan.md", "created"),)),
        ("sed -i s/old/new/ src/app.py", (("src/app.py", "edited"),)),
        ("sed -n -i s/old/new/ src/app.py", (("src/app.py", "edited"),)),
        ("sed -n s/old/new/p src/app.py", (("src/app.py", "read"),)),
        # A sed expression is no file, even where it looks like a path with an extension.
        ("sed -i s/v1.2/v1.3/ setup.py", (("setup.py", "edited"),)),
        ("sed y/ab.c/xy.z/ notes.txt", (("notes.txt", "read"),)),
        ("git apply fix.patch && cat src/app.py", (("src/app.py", "edited"),)),
        ("grep -r TODO src/ > /dev/null", ()),
    ],
)
def test_a_commands_files_each_with_what_the_command_did(
    command: str, files: tuple[tuple[str, str], ...]
) -> None:
    assert command_files(command) == files


# --- which action describes a file -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new", "best"),
    [
        (None, "read", "read"),
        ("read", "edited", "edited"),
        ("edited", "read", "edited"),
        ("created", "edited", "created"),
        ("run", "read", "run"),
        ("read", "run", "run"),
        ("edited", "created", "created"),
    ],
)
def test_the_strongest_action_describes_a_file(old: str | None, new: str, best: str) -> None:
    assert stronger(old, new) == best  # type: ignore[arg-type]
