"""A branch's copy of a folder never lets a write reach the origin or anything outside the copy:
a user tool that opens paths itself (plain `open()`) writes through each link of the copy into
the copy. A link into the origin's folder (absolute, or relative through ``..``) points to the
same place inside the copy; a link out of it is a file holding the target's content (a regular
file) or is left out (a folder, a missing target), each told in the run's notes."""

from __future__ import annotations

import os
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxlab.fork import fork, run_forward
from ctxlab.fork._workspace import Workspace
from ctxlab.messages import ToolUseBlock
from ctxlab.models import ScriptedModel
from tests.fork.helpers import demo_session, tree_hash


def _origin(tmp_path: Path) -> tuple[Path, Path]:
    """A project whose links point in every way a link can: into it (absolute, relative through
    ``..``, the folder itself, a missing file) and out of it (absolute, relative ``../..``, a
    folder, a missing file)."""
    outside = tmp_path / "outside"
    (outside / "dir").mkdir(parents=True)
    (outside / "secret.txt").write_text("outside\n")
    origin = tmp_path / "origin"
    (origin / "sub").mkdir(parents=True)
    (origin / "data.txt").write_text("origin data\n")
    (origin / "abs_in").symlink_to(origin / "data.txt")  # absolute, into the origin
    (origin / "sub" / "rel_in").symlink_to("../data.txt")  # relative through .., inside
    (origin / "sub" / "home").symlink_to("..", target_is_directory=True)  # the folder itself
    (origin / "sub" / "missing_in").symlink_to("../not-yet.txt")  # missing, inside
    (origin / "abs_out").symlink_to(outside / "secret.txt")  # absolute, out of it
    (origin / "sub" / "rel_out").symlink_to("../../outside/secret.txt")  # relative, out of it
    (origin / "dir_out").symlink_to(outside / "dir", target_is_directory=True)
    (origin / "gone_out").symlink_to(outside / "no-such.txt")  # missing, out of it
    return origin, outside


def _writer(folder: Path) -> list[object]:
    def write(path: str, text: str) -> str:
        """Append text to a file of the project, opening it by itself.

        Args:
            path: The file, relative to the project.
            text: What to append.
        """
        with open(os.path.join(folder, path), "a") as handle:  # plain open(), as a user tool might
            handle.write(text)
        return "ok"

    return [write]


WRITES = ["abs_in", "sub/rel_in", "sub/home/data.txt", "sub/missing_in", "abs_out", "sub/rel_out"]


async def test_a_user_tool_writing_through_each_link_writes_only_into_the_copy(
    tmp_path: Path,
) -> None:
    origin, outside = _origin(tmp_path)
    before = (tree_hash(origin), tree_hash(outside))
    session = await demo_session(tmp_path / "demo")
    calls = [
        ToolUseBlock(id=f"w{i}", name="write", input={"path": p, "text": f"{i}\n"})
        for i, p in enumerate(WRITES)
    ]
    branch = await fork(
        session.agent,
        at=2,
        workspace=origin,
        tools=_writer,
        model=ScriptedModel([*calls, "done"]),
        root=tmp_path / "branches",
    )
    outcomes = await run_forward(branch, runs=1, max_steps=10)
    (run,) = outcomes.runs
    assert run.reply == "done" and run.workspace is not None
    copy = run.workspace
    assert (tree_hash(origin), tree_hash(outside)) == before  # nothing reached either
    assert (copy / "data.txt").read_text() == "origin data\n0\n1\n2\n"
    assert (copy / "not-yet.txt").read_text() == "3\n"
    assert (copy / "abs_out").read_text() == "outside\n4\n"  # a file of its own now
    assert (copy / "sub" / "rel_out").read_text() == "outside\n5\n"
    for link in ("abs_in", "sub/rel_in", "sub/home", "sub/missing_in"):
        assert (copy / link).is_symlink()
        assert not os.path.isabs(os.readlink(copy / link))  # relative: the copy may move
        assert Path(os.path.realpath(copy / link)).is_relative_to(copy.resolve())
    assert not (copy / "dir_out").exists() and not (copy / "dir_out").is_symlink()
    assert not (copy / "gone_out").is_symlink()
    notes = "\n".join(run.notes)
    assert "'abs_out' points out of the copied folder" in notes
    assert "'sub/rel_out' points out of the copied folder" in notes
    assert "'dir_out'" in notes and "left out" in notes and "'gone_out'" in notes


def test_a_filled_folder_is_held_to_the_same(tmp_path: Path) -> None:
    # A function filling the folder may make links too: one out of it is never kept.
    outside = tmp_path / "outside.txt"
    outside.write_text("outside\n")

    def fill(folder: Path) -> None:
        (folder / "mine.txt").write_text("mine\n")
        (folder / "in").symlink_to(folder / "mine.txt")
        (folder / "out").symlink_to(outside)

    notes: list[str] = []
    made = Workspace(fill).make(tmp_path / "w", notes)
    assert os.readlink(made / "in") == "mine.txt"
    assert not (made / "out").is_symlink() and (made / "out").read_text() == "outside\n"
    assert len(notes) == 1 and "'out' points out of the copied folder" in notes[0]


_PARTS = st.sampled_from(["a", "b", "..", ".", "sub", "x.txt"])


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    targets=st.lists(
        st.tuples(st.booleans(), st.lists(_PARTS, min_size=1, max_size=5)), min_size=1, max_size=6
    )
)
def test_no_link_of_any_copy_resolves_out_of_it(
    tmp_path_factory: object, targets: list[tuple[bool, list[str]]]
) -> None:
    # Links of any shape (absolute or relative, through .., to links, to nothing, in loops):
    # after the copy, every link left resolves inside the copy.
    base = Path(tmp_path_factory.mktemp("links"))  # type: ignore[attr-defined]
    origin = base / "origin"
    (origin / "sub").mkdir(parents=True)
    (origin / "x.txt").write_text("x\n")
    for i, (absolute, parts) in enumerate(targets):
        target = os.path.join(*parts)
        where = origin / ("sub" if i % 2 else "") / f"l{i}"
        where.symlink_to(os.path.join(origin, target) if absolute else target)
    made = Workspace(origin).make(base / "copy")
    for path in made.rglob("*"):
        if path.is_symlink():
            assert Path(os.path.realpath(path)).is_relative_to(made.resolve()), path
