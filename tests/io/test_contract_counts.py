"""The contracts' counting (`tests.io.contracts.count`) on small values whose counts are plain
to see: a contract is only as good as the count it is held to."""

from __future__ import annotations

import json
from pathlib import Path

from tests.io.contracts import count as c

DOC = {
    "items": [
        {"kind": "a", "n": 1, "tags": ["x", "y"], "deep": {"kind": "a", "n": 9}},
        {"kind": "b", "n": 2, "tags": [], "flag": False},
        {"kind": "a", "n": 1, "flag": True},
    ],
    "rows": [{"id": "r1", "v": 10}, {"id": "r2", "v": 20}],
}


def test_find_walks_paths_wildcards_and_any_depth() -> None:
    assert c.Count(c.Find("items.*"))(DOC) == 3
    assert c.Count(c.Find("items.*", where={"kind": "a"}))(DOC) == 2
    assert c.Count(c.Find("**", where={"kind": "a"}))(DOC) == 3  # the nested one too
    assert c.Count(c.Find("items.1"))(DOC) == 1 and c.Count(c.Find("items.7"))(DOC) == 0
    assert c.Count(c.Find("items.*", where={"kind": ("a", "b")}))(DOC) == 3
    assert c.Count(c.Find("items.*.deep.n"))(DOC) == 1
    assert c.Count(c.Find("missing.*"))(DOC) == 0


def test_where_tests_presence_and_truth() -> None:
    items = "items.*"
    assert c.Count(c.Find(items, where={"flag": c.PRESENT}))(DOC) == 2
    assert c.Count(c.Find(items, where={"flag": c.ABSENT}))(DOC) == 1
    assert c.Count(c.Find(items, where={"flag": c.TRUTHY}))(DOC) == 1
    assert c.Count(c.Find(items, where={"flag": c.FALSY}))(DOC) == 2
    assert c.Count(c.Find(items, where={"deep.kind": "a"}))(DOC) == 1


def test_of_and_first_pick_the_top_level_values(tmp_path: Path) -> None:
    lines = tmp_path / "x.jsonl"
    lines.write_text('{"t": 1, "xs": [1, 2]}\n\n{"t": 2, "xs": [3]}\n{"t": 1, "xs": []}\n')
    assert (
        c.Count(c.Find())(lines) == 3 and c.Lines()(lines) == 3 and c.Lines(blank=True)(lines) == 4
    )
    assert c.Count(c.Find("xs.*", of={"t": 1}))(lines) == 2
    assert c.Count(c.Find("xs.*", first=True))(lines) == 2
    assert c.Length(c.Find(of={"t": 2}), "xs")(lines) == 1


def test_unique_lengths_fields_and_totals() -> None:
    assert c.Count(c.Find("items.*"), unique="n")(DOC) == 2
    assert c.Length(c.Find("items.*"), "tags")(DOC) == 2
    assert c.Field(c.Find("items.*"), "n")(DOC) == [1, 2, 1]
    assert c.Field(c.Find("items.*"), "n", unique="kind")(DOC) == [1, 2]
    assert c.Field(c.Find("items.*"), "kind", new_of="n")(DOC) == ["a", "b", "a"]
    assert c.Field(c.Find("rows.*"), "v", new_of="missing")(DOC) == [10]  # the same (absent) twice
    assert c.Total(c.Count(c.Find("items.*")), c.Count(c.Find("rows.*")), plus=-1)(DOC) == 4
    assert c.Total()(DOC) == 0


def test_either_and_first_of_take_the_first_that_finds() -> None:
    assert c.Count(c.Either(c.Find("none.*"), c.Find("rows.*"), c.Find("items.*")))(DOC) == 2
    assert c.Count(c.Either(c.Find("none.*")))(DOC) == 0
    assert c.FirstOf(c.Field(c.Find("none.*"), "v"), c.Field(c.Find("rows.*"), "v"))(DOC) == [
        10,
        20,
    ]


def test_lookup_joins_two_finds() -> None:
    keys = c.Field(c.Find("items.*", where={"kind": "b"}), "n")
    doc = {**DOC, "rows": [{"id": 2, "v": 20}, {"id": 1, "v": 10}]}
    assert c.Lookup(keys, c.Find("rows.*"), key="id", value="v")(doc) == [20]


def test_in_force_replaces_rewinds_and_expands(tmp_path: Path) -> None:
    log = [
        {"head": True, "msgs": [{"id": "a", "v": 1}]},
        {"id": "b", "v": 2},
        {"id": "a", "v": 3},  # replaces a, in a's place
        {"id": "c", "v": 4},
        {"id": "d", "v": 5},
        {"back": "c"},  # drops c and d
        {"id": "e", "v": 6},
    ]
    found = c.InForce(key="id", rewind="back", expand="msgs")(log)
    assert [(r["id"], r["v"]) for r in found] == [("a", 3), ("b", 2), ("e", 6)]
    lines = tmp_path / "log.jsonl"
    lines.write_text("".join(json.dumps(record) + "\n" for record in log))
    in_force = c.Find(where={"v": (3, 6)}, log=c.InForce(key="id", rewind="back", expand="msgs"))
    assert c.Field(in_force, "id")(lines) == ["a", "e"]


def test_files_matched_and_sections(tmp_path: Path) -> None:
    session = tmp_path / "session" / "s1.json"
    for name in ("session/s1.json", "msg/s1/m1.json", "msg/s1/m2.json", "part/m1/p.json"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}")
    assert c.Files("msg/{stem}/*.json", root="..")(session) == 2
    assert c.Files("part/{stem}/*.json", root="..", stems="msg/s1/*.json")(session) == 1
    text = tmp_path / "t.md"
    text.write_text("intro\n# H one\n```\n# not\n```\n<x>\n# in x</x>\n# H two\nTok 5 in\nTok 7\n")
    assert c.Sections(r"^# H", fences=("```",), skip=("<x>", "</x>"))(text) == 3  # and the intro
    assert c.Matched(r"^Tok (\d+)")(text) == [5, 7]
    assert c.Matched(r"^Tok (\d+)", after="# H two", before="Tok 7")(text) == [5]
