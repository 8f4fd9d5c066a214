"""Reproductions: files `load` accepts that the Lab, the what-if lab or a fork could not run
(issue 50). Each opens now, showing what the file holds."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ipywidgets")

from ctxlab import ApproximateCounter, ContextConfig, WhatIf, load, sessions
from ctxlab.analysis import recorded_requests
from ctxlab.exceptions import MessageFormatError, UsageError
from ctxlab.fork import fork, run_forward
from ctxlab.messages import DocumentBlock, ToolSchema
from ctxlab.models import MemorylessModel
from ctxlab.tokens import PDF_PAGE_TOKENS, TokenCache
from ctxlab.widgets import Lab, WhatIfLab
from tests.hostile import says


def _line(number: int, role: str, content: Any, **extra: Any) -> dict[str, Any]:
    message: dict[str, Any] = {"role": role, "content": content}
    if role == "assistant":
        message.update(
            id=f"msg_{number}",
            type="message",
            model="claude-sonnet-4-5",
            usage={
                "input_tokens": 10,
                "output_tokens": 5,
                "cache_read_input_tokens": 300,
                "cache_creation_input_tokens": 20,
            },
        )
    return {
        "parentUuid": f"u{number - 1}",
        "isSidechain": False,
        "userType": "external",
        "sessionId": "s1",
        "version": "2.0.1",
        "type": role,
        "message": message,
        "uuid": f"u{number}",
        "timestamp": f"2025-10-01T00:00:0{number}Z",
        **extra,
    }


@pytest.fixture
def reply_first(tmp_path: Path) -> Path:
    """A Claude Code session continued after a compaction: its boundary, then a reply with
    thinking (its summary is not in the file), then the user and a reply."""
    lines = [
        {
            "type": "system",
            "subtype": "compact_boundary",
            "content": "Conversation compacted",
            "compactMetadata": {"trigger": "auto", "preTokens": 1000},
            "isSidechain": False,
            "uuid": "u0",
            "sessionId": "s1",
            "timestamp": "2025-10-01T00:00:00Z",
        },
        _line(
            1,
            "assistant",
            [
                {"type": "thinking", "thinking": "Where was I?", "signature": "sig"},
                {"type": "text", "text": "Picking up."},
            ],
        ),
        _line(2, "user", "Go on with the tests."),
        _line(3, "assistant", [{"type": "text", "text": "Done."}]),
    ]
    path = tmp_path / "continued.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


async def test_a_session_that_opens_with_a_reply_after_its_compaction_opens(
    reply_first: Path, tmp_path: Path
) -> None:
    # Was: pydantic's ValidationError ("Input tag 'thinking' … UserMessage") from Lab.open,
    # WhatIfLab.open and fork — the compaction's summary, placed on the opening reply, was
    # made a user message of the reply's blocks.
    transcript = load(reply_first)
    assert transcript.meta["compactions"][0]["summary_index"] == 0  # the reply
    lab = await Lab.open(reply_first, context_window=200_000)
    steps = lab.steps
    # One request (the opening reply was never requested): the user's words, marked with the
    # compaction the file recorded before it, billed 10 + 300 + 20.
    assert list(steps["recorded_compaction"]) == ["auto"]
    assert list(steps["usage_total_input"]) == [330]
    sent = [i.content_hash for i in lab.log.manifests[0].items if i.placement == "conversation"]
    assert sent == [transcript.messages[1].content_hash]
    replayed = await Lab.open(reply_first, context_window=200_000, view="replayed")
    assert len(replayed.steps) == 1 and replayed.steps["validation"][0] == "passed"
    what = await WhatIfLab.open(transcript, context_window=200_000)
    assert [len(run.prepared) for run in what.what.runs.values()] == [1, 1, 1]
    branch = await fork(reply_first, at=0, model=MemorylessModel(), root=tmp_path / "b")
    assert branch.point.state.conversation == (transcript.messages[1],)  # what request 0 held
    outcomes = await run_forward(branch, prompt="Go on.", max_steps=2)
    assert outcomes.frame()["error"].isna().all()


def _ctxlab_file(path: Path, meta: dict[str, Any], *messages: dict[str, Any]) -> Path:
    """A session in ctxlab's own format (read as written: its meta is the file's)."""
    lines = [{"type": "meta", **meta}, *messages]
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    return path


async def test_a_file_whose_models_are_no_list_opens_and_names_no_model(tmp_path: Path) -> None:
    # Was: TypeError ('int' object is not iterable) from Lab.open's header, ('int' object is
    # not subscriptable) from WhatIfLab.open's price — each consumer read meta["models"] its
    # own way; now `Transcript.models`, once.
    path = _ctxlab_file(
        tmp_path / "session.jsonl",
        {"models": 3, "usage": {"1": [100, 5, 0, 0]}},
        {"role": "user", "content": "Fix a.py"},
        {"role": "assistant", "content": "Done."},
    )
    lab = await Lab.open(path, context_window=32_000)
    assert "model not recorded" in lab.header.value
    assert list(lab.steps["usage_total_input"]) == [100]
    transcript = load(path)
    what = await WhatIfLab.open(transcript, context_window=32_000)
    assert [len(run.prepared) for run in what.what.runs.values()] == [1, 1, 1]
    assert transcript.models == ()
    # A list names the models it holds, and only its names.
    named = _ctxlab_file(tmp_path / "named.jsonl", {"models": ["gpt-5", 7, "", None]})
    assert load(named).models == ("gpt-5",)


async def test_a_document_whose_parts_are_no_list_opens_and_counts_as_a_page(
    tmp_path: Path,
) -> None:
    # Was: TypeError ('int' object is not iterable) from DocumentBlock.text, in every entry
    # point (the token count reads it).
    document = {"type": "document", "source": {"type": "content", "content": 5}, "title": "a"}
    path = _ctxlab_file(
        tmp_path / "session.jsonl",
        {},
        {"role": "user", "content": [document, {"type": "text", "text": "Read it."}]},
        {"role": "assistant", "content": "Read."},
    )
    transcript = load(path)
    (block, _) = transcript.messages[0].content
    assert isinstance(block, DocumentBlock) and block.text == ""
    cache = TokenCache(ApproximateCounter())
    # No text to read: sized as a document the provider reads, one page, and its title.
    assert cache.block(block) == PDF_PAGE_TOKENS + cache.text("a")
    lab = await Lab.open(path, context_window=32_000, view="replayed")
    assert list(lab.steps["validation"]) == ["passed"]
    # Parts in a list still read as their texts.
    listed = DocumentBlock(
        source={"type": "content", "content": [{"type": "text", "text": "x"}, 4]}
    )
    assert listed.text == "x"


CODEX = Path(__file__).parents[1] / "fixtures" / "codex" / "rollout-0.58.0-usage-before.jsonl"


async def test_the_what_if_and_a_fork_open_what_the_lab_opens(tmp_path: Path) -> None:
    # Was: WhatIfLab.open(path) and WhatIfLab.open(a sessions() row) raised AttributeError
    # ('PosixPath' object has no attribute ...), fork(row) a MessageFormatError about "the
    # truth value of a Series"; Lab.open took all three. Each takes them now, read one way.
    transcript = load(CODEX)
    expected = len(recorded_requests(transcript))
    (row,) = [r for _, r in sessions(CODEX.parent).iterrows() if Path(r["path"]) == CODEX]
    for source in (CODEX, str(CODEX), row):
        lab = await WhatIfLab.open(source, context_window=200_000)
        assert lab.what.transcript.messages == transcript.messages
        assert [len(run.prepared) for run in lab.what.runs.values()] == [expected] * 3
    branch = await fork(row, at=1, model=MemorylessModel(), root=tmp_path / "b")
    assert branch.point.state.conversation == recorded_requests(transcript)[1].messages
    for taker, call in (
        ("WhatIfLab.open", lambda: WhatIfLab.open(7, context_window=200_000)),  # type: ignore[arg-type]
        ("fork", lambda: fork(7, at=0, model=MemorylessModel())),
    ):
        with pytest.raises(UsageError) as raised:
            await call()
        says(str(raised.value), taker, "a Transcript, a path or a row of ctxlab.sessions()")
    # The analysis itself takes a transcript, and says how to make one.
    with pytest.raises(UsageError) as refused:
        WhatIf(CODEX, {"a": ContextConfig()}, context_window=200_000)  # type: ignore[arg-type]
    says(str(refused.value), "Transcript, got PosixPath", "ctxlab.load(path)")


async def test_a_system_prompt_and_a_tool_schema_with_lone_surrogates_open(
    tmp_path: Path,
) -> None:
    # JSON may carry a lone "\udae8"; blocks replaced them on the way in, the System text and
    # the tool schemas did not. Was: UnicodeEncodeError from the counter in Lab.open (both
    # views) and fork, from the cost model in the what-if and the manifest in replay.
    def session(name: str, odd: str) -> Path:
        schema = {"type": "object", "properties": {f"p{odd}": {"type": "string"}}}
        return _ctxlab_file(
            tmp_path / name,
            {
                "system": f"Be {odd} brief.",
                "tools": [{"name": f"Re{odd}ad", "input_schema": schema}],
            },
            {"role": "user", "content": "Fix a.py"},
            {"role": "assistant", "content": "Done."},
        )

    path = session("odd.jsonl", "\udae8")
    # Counted as the same session with U+FFFD written in their place.
    control = session("control.jsonl", "\ufffd")
    for view in ("recorded", "replayed"):
        labs = [await Lab.open(p, context_window=32_000, view=view) for p in (path, control)]  # type: ignore[arg-type]
        odd, same = ({i.id: i.tokens for i in lab.log.manifests[0].items} for lab in labs)
        assert odd == same and odd["system/system_prompt"] > 0 and "tool/Re\ufffdad" in odd
    transcript = load(path)
    (tool,) = transcript.tools
    assert (tool.name, list(tool.input_schema["properties"])) == ("Re\ufffdad", ["p\ufffd"])
    what = await WhatIfLab.open(transcript, context_window=32_000)
    assert [len(run.prepared) for run in what.what.runs.values()] == [1, 1, 1]
    # A schema nested past what any schema needs is refused, naming the tool.
    deep: dict[str, Any] = {}
    for _ in range(200):
        deep = {"items": deep}
    with pytest.raises(MessageFormatError) as refused:
        ToolSchema("nested", "", deep)
    says(str(refused.value), "tool 'nested'", "nested more than 100 levels")


async def test_a_bill_of_two_to_the_fortieth_tokens_opens_and_is_drawn_exactly(
    tmp_path: Path,
) -> None:
    # ctxlab reads counts up to 2⁴⁰ (`MAX_TOKENS`); the plot's columns were int32. Was:
    # OverflowError ("Python integer 1099511628295 out of bounds for int32") from Lab.open in
    # both views (found by the generated Claude Code sessions).
    huge = {"input_tokens": 5, "output_tokens": 1, "cache_read_input_tokens": 2**40}
    lines = [_line(1, "user", "Fix a.py"), _line(2, "assistant", [{"type": "text", "text": "ok"}])]
    lines[1]["message"]["usage"] = huge
    path = tmp_path / "session.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines) + "\n")
    lab = await Lab.open(path, context_window=32_000)
    assert list(lab.steps["usage_total_input"]) == [2**40 + 5]
    total = lab.steps["total"][0]
    assert total > 2**40 and list(lab.budget.trace("total")["y"]) == [total]
    # Replayed, the part the file does not hold (sized from that bill) leaves no room: the
    # request is shown, over budget, drawn at its size.
    lab = await Lab.open(path, context_window=32_000, view="replayed")
    assert list(lab.steps["validation"]) == ["budget_exceeded"]
    assert list(lab.budget.trace("total")["y"]) == [lab.steps["total"][0]] != [0]
