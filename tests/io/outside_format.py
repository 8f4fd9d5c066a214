"""A format of a user's own harness, declared outside ctxlab — the worked example of
docs/howto/own-format.md, as it is there: "tinylog", JSON Lines of ``{"tinylog": 1, "who":
"user"|"bot", "say": text}``, kept in ``*.tiny`` files. `tests.io.test_register_format`
registers it (by `register_format`, and through an entry point) with no change to ctxlab, and
runs the census contract it brings (``contract``: `tests/fixtures/tinylog/run.tiny`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ctxlab import FormatCase, SessionFormat
from ctxlab.io import ConversationBuilder, Transcript, built_transcript

RUN = Path(__file__).parents[1] / "fixtures" / "tinylog" / "run.tiny"

ROLES = {"user": "user", "bot": "assistant"}


def is_tinylog(record: Any) -> bool:
    return record.get("tinylog") == 1 and record.get("who") in ROLES


def read_tinylog(
    data: Any, where: str, name: str, episode: int, meta: dict[str, Any]
) -> Transcript:
    builder = ConversationBuilder(where, unit="line")
    for line in data if isinstance(data, list) else [data]:
        builder.record(str(line.get("who")) if isinstance(line, dict) else "not an object")
        role = ROLES.get(line.get("who")) if isinstance(line, dict) else None
        if role is None or not builder.text(role, str(line.get("say") or "")):
            builder.skip("not a turn of the conversation")
    return built_transcript(name, builder, meta, "", ())


TINYLOG = SessionFormat(
    name="tinylog",
    tool="my harness's tinylog, 1",
    learned_from="my_harness/log.py (write_turn)",
    document=is_tinylog,
    read=read_tinylog,
    suffixes=(".tiny",),
    census="lines",
    contract=(FormatCase(RUN, records=4, calls=0),),
)


def plugged() -> SessionFormat:
    """The same format under another name, as a package's entry point hands it over."""
    return SessionFormat(**{**TINYLOG.__dict__, "name": "tinylog_plugin"})
