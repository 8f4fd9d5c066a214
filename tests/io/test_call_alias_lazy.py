"""A call's alias (the digest of its name and arguments) is made when asked, not when the walk
finds the call (issue 54 item 4): it is what the eager `call_finding` before the change made
(kept below as the reference, unchanged but for its name), and `unplaced` asks for none when
every call is matched by its id and nothing set aside may be an alias. Made late, it trusts the
readers not to change the records they read: checked on every fixture (i68-rev)."""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from unittest import mock

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import load
from ctxlab.exceptions import CtxlabError
from ctxlab.io import _findings, _load
from ctxlab.io._accounting import account_for as _account_for
from ctxlab.io._accounting import unplaced
from ctxlab.io._files import read_records as _load_records
from ctxlab.io._findings import Finding, _digest, call_finding, call_id, json_in, may_be_alias
from ctxlab.io._inventory import inventory_of, remembered


def _old_call_finding(value: Mapping[str, Any], path: str) -> Finding:
    function = value.get("function")
    named = function if isinstance(function, Mapping) else value
    name = next((named[k] for k in ("name", "toolName", "tool_name") if k in named), None)
    args = next(
        (named[k] for k in ("arguments", "args", "input", "parameters") if k in named), None
    )
    if isinstance(args, str):
        decoded = json_in(args)
        args = decoded if decoded is not None else args
    alias = "call " + _digest({"name": name, "args": args})
    own = call_id(value)
    key = "call " + own.split("__dup")[0] if own is not None else alias
    return Finding("tool call", path, key, alias)


_ARGS = st.one_of(
    st.none(),
    st.dictionaries(st.sampled_from(["c", "path", "n"]), st.integers() | st.text(max_size=4)),
    st.text(max_size=6),
    st.builds(json.dumps, st.dictionaries(st.sampled_from(["c", "d"]), st.integers())),
)
_IDS = st.sampled_from(["toolu_1", "call_2", "c3__dup1", "0123456789abcdef", ""])


@st.composite
def _calls(draw: st.DrawFn) -> dict[str, Any]:
    inner: dict[str, Any] = {}
    for key in draw(st.lists(st.sampled_from(["name", "toolName", "tool_name"]), max_size=2)):
        inner[key] = draw(st.sampled_from(["ls", "cat", 3]))
    for key in draw(st.lists(st.sampled_from(["arguments", "args", "input"]), max_size=2)):
        inner[key] = draw(_ARGS)
    call: dict[str, Any] = {"function": inner} if draw(st.booleans()) else dict(inner)
    for key in draw(st.lists(st.sampled_from(["id", "call_id", "toolUseId"]), max_size=2)):
        call[key] = draw(_IDS)
    return call


@settings(max_examples=400, deadline=None)
@given(_calls())
def test_a_call_is_known_by_what_the_eager_finding_knew_it_by(call: dict[str, Any]) -> None:
    new, old = call_finding(call, "$.x"), _old_call_finding(call, "$.x")
    assert (new.key, new.alias) == (old.key, old.alias)
    assert new == old and hash(new) == hash(old) and repr(new) == repr(old)
    assert may_be_alias(new.alias)


def test_an_alias_is_made_once_and_only_when_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    made: list[Any] = []
    real = _findings._call_alias

    def counted(name: Any, args: Any) -> str:
        made.append(name)
        return real(name, args)

    monkeypatch.setattr(_findings, "_call_alias", counted)
    call = {"id": "toolu_1", "name": "ls", "input": {"c": 1}}
    finding = call_finding(call, "$")
    assert made == [] and finding.key == "call toolu_1"
    assert finding.alias == finding.alias == _old_call_finding(call, "$").alias
    assert made == ["ls"]
    idless = call_finding({"name": "ls", "input": {"c": 1}}, "$")
    assert made == ["ls", "ls"] and idless.key == idless.alias == finding.alias


def test_calls_matched_by_id_make_no_alias(monkeypatch: pytest.MonkeyPatch) -> None:
    # A Claude Code load: every call has an id, the transcript holds them all, what is set
    # aside is known by ids — no alias is asked for; one id-less call left over asks for them.
    calls = [{"type": "tool_use", "id": f"toolu_{n}", "name": "ls", "input": {"n": n}} for n in range(3)]  # fmt: skip
    aside_call = {"type": "tool_use", "id": "toolu_9", "name": "cat", "input": {}}

    def refused(name: Any, args: Any) -> str:
        raise AssertionError("an alias was made")

    held = inventory_of([{"message": {"content": [*calls, aside_call]}}])
    placed = inventory_of(calls)
    aside = {"tool call": ["call toolu_9"]}
    monkeypatch.setattr(_findings, "_call_alias", refused)
    assert unplaced(held, placed, aside, {}) == {}
    monkeypatch.undo()
    idless = {"type": "tool_use", "name": "ls", "input": {"n": 0}}  # (placed's toolu_0, by alias)
    held = inventory_of([{"message": {"content": [*calls, idless, {**idless, "input": {"n": 7}}]}}])  # fmt: skip
    assert unplaced(held, placed, aside, {}) == {"tool call at $.message.content[]": 1}


def test_a_key_set_aside_in_the_shape_of_an_alias_asks_for_aliases() -> None:
    call = {"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {}}
    alias = call_finding(call, "$").alias
    held = inventory_of([call])
    assert unplaced(held, inventory_of([]), {"tool call": [alias]}, {}) == {}
    assert unplaced(held, inventory_of([]), {"tool call": ["call other"]}, {}) == {
        "tool call at $": 1
    }
    assert not may_be_alias("call toolu_1") and not may_be_alias("call " + "0" * 15 + "G")


def test_a_document_element_walked_before_keeps_its_calls_aliases() -> None:
    # A list document whose element a reader set aside (tau-bench's other episodes): its kept
    # findings are placed under ``$[]`` with their aliases, as a fresh walk finds them.
    call = {"type": "tool_use", "id": "toolu_1", "name": "ls", "input": {"c": 1}}
    document = [{"messages": [call]}, {"messages": []}]
    with remembered():
        inventory_of([document[0]], read=True)
        whole = inventory_of([document], last=True)
    fresh = inventory_of([document])
    assert [repr(f) for f in whole.findings["tool call"].values()] == [
        repr(f) for f in fresh.findings["tool call"].values()
    ]
    assert whole.findings["tool call"]["call toolu_1"].alias == call_finding(call, "$").alias


_FIXTURES = Path(__file__).parent.parent / "fixtures"


def test_the_readers_leave_the_records_as_read_until_the_census_asks(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A call's alias is made from its arguments when `unplaced` asks, after the reader has read
    # the records (`Finding.alias`): a reader that changed a call it set aside would change its
    # alias since i68-sess. Every fixture read from its records is checked when its census is
    # taken (`account_for`) against a copy made as the records were read (i68-rev).
    taken: list[tuple[Any, Any, Any]] = []
    changed: list[str] = []
    checked: list[str] = []

    def read_records(path: Path) -> Any:
        read = _load_records(path)
        taken.append((read, copy.deepcopy(read.records), copy.deepcopy(read.document)))
        return read

    def account_for(transcript: Any, values: Any) -> Any:
        while taken:
            read, records, document = taken.pop()
            checked.append(name)
            if read.records != records or read.document != document:
                changed.append(name)
        return _account_for(transcript, values)

    monkeypatch.setattr(_load, "read_records", read_records)
    monkeypatch.setattr(_load, "account_for", account_for)
    for path in sorted(p for p in _FIXTURES.rglob("*") if p.is_file()):
        name = str(path.relative_to(_FIXTURES))
        taken.clear()
        with contextlib.suppress(CtxlabError):  # (not a session file: a figure, a digest)
            load(path)
    assert changed == []
    assert {n.split("/")[0] for n in checked} >= {"claude_code", "codex", "openai_responses"}
    assert len(checked) >= 40  # (the fixtures read from their records: 49 of them)


def test_a_finding_leaves_a_comparison_with_another_type_to_it_as_the_dataclass_did() -> None:
    # The dataclass's ``==`` answered NotImplemented for another type, so the other side was
    # asked (`unittest.mock.ANY` matches anything); i68-sess's own ``==`` answered False.
    finding = call_finding({"id": "toolu_1", "name": "ls", "input": {}}, "$")
    assert finding == mock.ANY and [finding] == [mock.ANY]
    assert finding != "call toolu_1" and finding != ("tool call", "$", "call toolu_1")
    assert finding.__eq__(object()) is NotImplemented
