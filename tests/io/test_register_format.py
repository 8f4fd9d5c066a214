"""A format registered from outside ctxlab — with `register_format`, or by an installed
package's ``ctxlab.formats`` entry point (a dist-info with entry_points.txt on sys.path) — is
detected, loaded, censused, fuzzed and listed by `sessions`, with no change to ctxlab: the
format of `tests.io.outside_format`, the worked example of docs/howto/own-format.md."""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import ctxlab
from ctxlab import (
    FormatCase,
    SessionFormat,
    check_contract,
    detect_format,
    load,
    register_format,
    sessions,
)
from ctxlab.exceptions import CtxlabError, UsageError
from ctxlab.io import _registry
from tests.fuzz.contract import FUZZ, holds
from tests.fuzz.mutations import mutated_file
from tests.io.contracts import contract
from tests.io.outside_format import TINYLOG
from tests.io.shown import added_up

LINES = [
    {"tinylog": 1, "who": "user", "say": "Which files are in the repository?"},
    {"tinylog": 1, "who": "bot", "say": "README.md and setup.py."},
    {"tinylog": 1, "who": "note", "say": "the user left"},
    {"tinylog": 1, "who": "user", "say": "Thanks."},
]


def _write(folder: Path, name: str = "chat.tiny") -> Path:
    path = folder / name
    path.write_text("".join(json.dumps(line) + "\n" for line in LINES))
    return path


@pytest.fixture
def registered() -> Iterator[SessionFormat]:
    register_format(TINYLOG)
    yield TINYLOG
    _registry.forget_format(TINYLOG.name)


def test_a_registered_format_is_named_detected_and_loaded(
    registered: SessionFormat, tmp_path: Path
) -> None:
    assert "tinylog" in ctxlab.FORMATS  # the same FORMATS, read from the registry
    assert detect_format(LINES[0]) == "tinylog"
    transcript = load(_write(tmp_path))
    assert transcript.meta["source"] == "tinylog"
    assert [m.content[0].text for m in transcript.messages] == [
        "Which files are in the repository?",
        "README.md and setup.py.",
        "Thanks.",
    ]
    census = added_up(transcript)
    assert census.read == {"user": 2, "bot": 1, "note": 1}
    assert sum(census.skipped.values()) == 1  # the note: said, not dropped


def test_it_is_listed_by_sessions_by_its_own_ending(
    registered: SessionFormat, tmp_path: Path
) -> None:
    _write(tmp_path)
    (tmp_path / "notes.txt").write_text("not a session")
    frame = sessions(tmp_path, workers=1, progress=False)
    assert list(frame["format"]) == ["tinylog"]
    assert list(frame["messages"]) == [3]
    assert frame["problem"].isna().all()


def test_unregistered_it_is_neither_detected_nor_listed(tmp_path: Path) -> None:
    assert "tinylog" not in ctxlab.FORMATS
    with pytest.raises(CtxlabError, match="cannot tell the format"):
        detect_format(LINES[0])
    _write(tmp_path)
    assert len(sessions(tmp_path, workers=1, progress=False)) == 0


def test_a_folder_read_before_the_format_was_registered_is_read_again(tmp_path: Path) -> None:
    # `sessions` keeps a folder's table while no file changed; registering a format changes
    # what the same files are, so the kept table must not be the answer. (No ending of its
    # own: the endings asked for stay the same.)
    in_jsonl = SessionFormat(**{**TINYLOG.__dict__, "suffixes": ()})
    _write(tmp_path, "chat.jsonl")
    before = sessions(tmp_path, workers=1, progress=False)
    assert before["problem"].notna().all()  # not a session of any format ctxlab knows
    register_format(in_jsonl)
    try:
        after = sessions(tmp_path, workers=1, progress=False)
    finally:
        _registry.forget_format(in_jsonl.name)
    assert list(after["format"]) == ["tinylog"] and after["problem"].isna().all()
    again = sessions(tmp_path, workers=1, progress=False)  # forgotten: not a session again
    assert again["problem"].notna().all()


@FUZZ
@given(data=st.data())
def test_a_hostile_variant_of_its_file_loads_or_is_refused(
    data: st.DataObject, tmp_path_factory: Any
) -> None:
    register_format(TINYLOG, replace=True)
    try:
        seed = _write(tmp_path_factory.mktemp("seed"))
        path = tmp_path_factory.mktemp("v") / seed.name
        path.write_bytes(data.draw(mutated_file(seed), label="variant"))
        for format in ("tinylog", None):
            loaded = holds(lambda f=format: _loaded(path, f), watched=[path.parent])
            census = loaded.census if loaded is not None else None
            assert loaded is None or (census is not None and census.adds_up)
    finally:
        _registry.forget_format(TINYLOG.name)


def _loaded(path: Path, format: str | None) -> Any:
    try:
        return load(path, format=format)
    except CtxlabError as exc:
        assert path.name in str(exc)  # which file: a user listing a folder must know
        raise


def _installed(folder: Path, monkeypatch: pytest.MonkeyPatch, package: str, entry: str) -> None:
    # A package installed in ``folder`` (its dist-info on sys.path) declaring one entry point
    # of the group, the entry points read again as in a fresh interpreter.
    info = folder / f"{package.replace('-', '_')}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[ctxlab.formats]\n{entry}\n")
    monkeypatch.syspath_prepend(str(folder))
    monkeypatch.setitem(_registry._state, "entry_points", False)


@pytest.fixture
def plugin(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """The tinylog format installed as a package in ``tmp_path`` (named by its entry point),
    forgotten after the test."""
    _installed(
        tmp_path, monkeypatch, "tinylog-plugin", "tinylog_plugin = tests.io.outside_format:plugged"
    )
    yield "tinylog_plugin"
    _registry.forget_format("tinylog_plugin")


def test_a_format_of_an_installed_package_comes_by_its_entry_point(
    plugin: str, tmp_path: Path
) -> None:
    assert plugin in ctxlab.FORMATS
    transcript = load(_write(tmp_path))
    assert transcript.meta["source"] == plugin
    assert len(transcript.messages) == 3
    frame = sessions(tmp_path, workers=1, progress=False)
    assert list(frame["format"]) == [plugin]


def test_a_broken_entry_point_is_said_and_the_others_still_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _installed(tmp_path, monkeypatch, "broken", "broken = no_such_module:FORMAT")
    with pytest.warns(UserWarning, match="'broken'.*could not be loaded"):
        names = tuple(ctxlab.FORMATS)
    assert "broken" not in names and "codex" in names


@pytest.mark.parametrize(
    ("bad", "said"),
    [
        ("tinylog", "takes a ctxlab.SessionFormat"),
        (SessionFormat(name="Tiny Log", read=TINYLOG.read), "lowercase letters"),
        (SessionFormat(name="tinylog"), "reads nothing"),
        (SessionFormat(name="codex", read=TINYLOG.read), "already registered"),
        (SessionFormat(name="tinylog", read=TINYLOG.read, priority=1.5), "whole number"),  # type: ignore[arg-type]
    ],
)
def test_what_cannot_be_registered_is_refused_saying_why(bad: Any, said: str) -> None:
    with pytest.raises(UsageError, match=said):
        register_format(bad)
    assert "tinylog" not in ctxlab.FORMATS
    assert ctxlab.FORMATS[1] == "claude_code"


def test_replace_reads_a_format_of_ctxlab_the_users_way(tmp_path: Path) -> None:
    codex = _registry.format_named("codex")
    assert codex is not None
    mine = SessionFormat(**{**TINYLOG.__dict__, "name": "codex"})
    register_format(mine, replace=True)
    try:
        assert load(_write(tmp_path)).meta["source"] == "codex"
    finally:
        register_format(codex, replace=True)
    assert _registry.format_named("codex") is codex


def test_the_docs_example_is_the_format_tested_here() -> None:
    page = (Path(__file__).parents[2] / "docs" / "howto" / "own-format.md").read_text()
    module = (Path(__file__).parent / "outside_format.py").read_text()
    code = page.split("```python\n")[1].split("```")[0]
    assert len(code.strip().splitlines()) < 40
    start = module.index("ROLES = ")
    assert module[start : module.index("\n\n\nTINYLOG")] in code


def test_formats_adds_like_the_tuple_it_was() -> None:
    # `FORMATS` was a tuple; user code that extends it with its own names keeps working.
    names = tuple(ctxlab.FORMATS)
    assert (*names, "mine") == ctxlab.FORMATS + ("mine",)  # noqa: RUF005 (the point)
    assert ("mine", *names) == ["mine"] + ctxlab.FORMATS  # noqa: RUF005
    assert names + names == ctxlab.FORMATS + ctxlab.FORMATS
    with pytest.raises(TypeError):
        ctxlab.FORMATS + "mine"  # type: ignore[operator]


def test_spawned_workers_are_given_the_formats_registered_here(
    registered: SessionFormat, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Where worker processes are spawned (macOS, Windows) they start with ctxlab's formats only:
    # `sessions` gives them the ones registered in this process, or every file would be refused.
    from ctxlab.io import _folder

    monkeypatch.setattr(_folder, "_CONTEXT", multiprocessing.get_context("spawn"))
    for n in range(_folder._PARALLEL_FROM):
        _write(tmp_path, f"chat-{n:02d}.tiny")
    frame = sessions(tmp_path, workers=2, progress=False)
    assert len(frame) == _folder._PARALLEL_FROM
    assert set(frame["format"]) == {"tinylog"} and frame["problem"].isna().all()
    assert set(frame["messages"]) == {3}


def test_a_format_defined_in_a_notebook_is_read_in_this_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A notebook's functions cannot be imported by a spawned process: its files are read here.
    import types

    from ctxlab.io import _folder

    def read(*args: Any) -> Any:
        return TINYLOG.read(*args)  # type: ignore[misc]

    read.__module__ = "__main__"
    monkeypatch.setitem(sys.modules, "__main__", types.ModuleType("__main__"))  # no __file__
    monkeypatch.setattr(_folder, "_CONTEXT", multiprocessing.get_context("spawn"))
    mine = dataclasses.replace(TINYLOG, read=read)
    assert not _folder._importable(mine)
    register_format(mine)
    try:
        for n in range(_folder._PARALLEL_FROM):
            _write(tmp_path, f"chat-{n:02d}.tiny")
        assert _folder._pool(2) is None
        frame = sessions(tmp_path, workers=2, progress=False)
    finally:
        _registry.forget_format(mine.name)
    assert len(frame) == _folder._PARALLEL_FROM and set(frame["format"]) == {"tinylog"}


def test_a_format_from_an_installed_package_brings_its_own_contract(plugin: str) -> None:
    # The declaration carries its cases (a fixture and what the census counts, as data): the
    # contract suite's `contract` finds them and `check_contract` holds them, no change to ctxlab.
    assert contract(plugin) == TINYLOG.contract
    assert check_contract(plugin) == []
    wrong = dataclasses.replace(TINYLOG.contract[0], records=3, calls=1)
    assert check_contract(plugin, [wrong]) == [
        "tinylog_plugin run.tiny: records read: the census says 4, the contract 3",
        "tinylog_plugin run.tiny: tool calls: the census says 0, the contract 1",
    ]


def test_a_registered_format_without_a_contract_is_named(tmp_path: Path) -> None:
    bare = SessionFormat(**{**TINYLOG.__dict__, "contract": ()})
    register_format(bare)
    try:
        assert contract("tinylog") is None  # the suite's test fails naming it
        with pytest.raises(UsageError, match="format 'tinylog' has no contract: give its"):
            check_contract("tinylog")
    finally:
        _registry.forget_format("tinylog")
    with pytest.raises(UsageError, match="'tinylog' is not registered"):
        check_contract(TINYLOG)


def test_a_cases_tables_by_kind_and_reason_are_each_checked_by_name(
    registered: SessionFormat, tmp_path: Path
) -> None:
    # A case may bring its census's unit and tables (records read by kind, skipped, usage
    # lost by reason): each must equal the load's; a table not given is not checked.
    read = {"user": 2, "bot": 1, "note": 1}
    skipped = {"not a turn of the conversation": 1}
    good = FormatCase(_write(tmp_path), records=4, label="chat", unit="line", read=read)
    assert check_contract("tinylog", [good]) == []
    full = dataclasses.replace(good, skipped=skipped, usage_lost={})
    assert check_contract("tinylog", [full]) == []
    wrong = dataclasses.replace(
        full,
        unit="record",
        read={**read, "note": 2},
        skipped={},
        usage_lost={"no reply": 1},
    )
    assert check_contract("tinylog", [wrong]) == [
        "tinylog chat: unit: the census counts in 'line', the contract 'record'",
        "tinylog chat: records read by kind: the load says {'user': 2, 'bot': 1, 'note': 1}, "
        "the contract {'user': 2, 'bot': 1, 'note': 2}",
        "tinylog chat: skipped by reason: the load says {'not a turn of the conversation': 1}, "
        "the contract {}",
        "tinylog chat: usage lost by reason: the load says {}, the contract {'no reply': 1}",
    ]


def test_a_case_that_does_not_load_as_its_format_is_said_by_name(
    registered: SessionFormat, tmp_path: Path
) -> None:
    good = FormatCase(_write(tmp_path), records=4, label="chat")
    assert check_contract("tinylog", [good]) == []
    other = tmp_path / "notes.tiny"
    other.write_text(json.dumps({"tinylog": 1, "who": "note", "say": "nothing said"}) + "\n")
    said = check_contract("tinylog", [good, FormatCase(other, records=1)])
    assert len(said) == 1 and said[0].startswith("tinylog notes.tiny: does not load as tinylog")


class _Turn:
    """An object of a user's own library (not JSON): what ``plain`` turns into a record."""

    def __init__(self, who: str, say: str) -> None:
        self.who, self.say = who, say


def _plain_turns(items: Any) -> Any:
    if not isinstance(items[0], _Turn):
        return None
    return [{"tinylog": 1, "who": item.who, "say": item.say} for item in items]


def test_a_registered_format_brings_its_objects_and_its_thresholds() -> None:
    from ctxlab.analysis import documented_threshold
    from ctxlab.io._compaction_thresholds import ToolThreshold, thresholds

    half = ToolThreshold("tinylog", ((1,), (2,)), "half the window", "my_harness", lambda w: w // 2)
    register_format(dataclasses.replace(TINYLOG, plain=_plain_turns, thresholds=(half,)))
    try:
        transcript = load([_Turn("user", "Hello?"), _Turn("bot", "Hi.")], format="tinylog")
        assert transcript.meta["source"] == "tinylog"
        assert [m.content[0].text for m in transcript.messages] == ["Hello?", "Hi."]
        assert documented_threshold("tinylog", "1.4", 200_000) == (100_000, half)
        assert documented_threshold("tinylog", "2.0", 200_000) is None  # outside its versions
        assert half in thresholds()
    finally:
        _registry.forget_format("tinylog")
    assert documented_threshold("tinylog", "1.4", 200_000) is None
    # ctxlab's own rows, from their formats' modules: Codex fires at 90 % of the window.
    assert documented_threshold("codex", "0.60.0", 200_000)[0] == 180_000  # type: ignore[index]


def test_a_case_of_decoded_data_is_not_asked_to_be_detected(registered: SessionFormat) -> None:
    # Data has no file to be known by: read with format= only, unless the case asks.
    data = [dict(line) for line in LINES]
    assert check_contract("tinylog", [FormatCase(data, records=4, label="data")]) == []
    said = check_contract("tinylog", [FormatCase(data, records=4, label="data", detected=True)])
    assert len(said) == 1 and said[0].startswith("tinylog data: not found as tinylog")


def test_a_declaration_not_the_one_registered_is_not_checked_as_it(
    registered: SessionFormat,
) -> None:
    # check_contract(declaration) loads with the registered reader: a declaration of the same
    # name that is not the registered one (edited, not registered again) is refused, not
    # passed with the registered one's cases in place of its own.
    wrong = dataclasses.replace(registered.contract[0], records=3)
    edited = dataclasses.replace(registered, contract=(wrong,))
    with pytest.raises(UsageError, match="register_format\\(it, replace=True\\)"):
        check_contract(edited)
    assert check_contract(registered) == []
