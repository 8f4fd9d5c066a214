"""Inspect AI evaluation logs: ``.eval`` (a zip) and ``.json`` (`ctxlab.io.formats.inspect.parse` says what
is read and where it was learned); ``episode`` picks a sample."""

from __future__ import annotations

import zipfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._format import SessionFormat
from ctxlab.io._readers import built_transcript
from ctxlab.io._transcript import Transcript
from ctxlab.io.formats.inspect.parse import (
    from_inspect_sample,
    inspect_samples,
    is_inspect_log,
    read_eval_zip,
)
from ctxlab.util._jsonl import check_regular_file


def _read(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    if not isinstance(data, Mapping):
        msg = f"{where}: an Inspect log is a JSON object (or an .eval zip)"
        raise MessageFormatError(msg)
    samples = inspect_samples(data, where)
    if not 0 <= episode < len(samples):
        msg = f"{where}: no sample {episode} (the log holds {len(samples)}, from 0)"
        raise MessageFormatError(msg)
    builder, system, notes = from_inspect_sample(samples[episode], f"{where} sample {episode}")
    others = [s for n, s in enumerate(samples) if n != episode]
    builder.record("other sample", len(others), raw=others)
    builder.skip("another sample (episode=N opens it)")
    spec = data["eval"] if isinstance(data.get("eval"), Mapping) else {}
    # The run's settings (a mock model's scripted outputs among them) and its totals.
    builder.set_aside(spec, "the run's settings")
    builder.set_aside(data.get("stats"), "the run's totals")
    notes.update({k: spec[k] for k in ("task", "model") if isinstance(spec.get(k), str)})
    notes.setdefault("models", [spec["model"]] if isinstance(spec.get("model"), str) else [])
    notes["samples"] = len(samples)
    return built_transcript(name, builder, {**meta, **notes}, system, ())


def _eval_zip(
    path: Path, forced: bool, name: str | None, episode: int
) -> tuple[Transcript, list[Any] | None] | None:
    # An ``.eval`` log is a zip of its header and samples, read as the JSON log it holds.
    if path.suffix != ".eval" or path.is_dir():
        return None
    check_regular_file(path)  # before any open: a FIFO would block it
    if not zipfile.is_zipfile(path):
        return None
    log = read_eval_zip(path, episode)
    meta: dict[str, Any] = {"source": "inspect"}
    return _read(log, str(path), name or path.stem, episode, meta), [log]


FORMAT = SessionFormat(
    name="inspect",
    tool="Inspect AI logs (.eval zips and .json), 2025–2026",
    learned_from="UKGovernmentBEIS/inspect_ai inspect_ai/log/_log.py, model/_chat_message.py, "
    "log/_recorders/eval.py",
    priority=60,
    never="other tools' JSON: a log's eval spec with its samples or results",
    document=is_inspect_log,
    read=_read,
    place=_eval_zip,
    episodes=True,
    census="samples, each sample's messages and events",
    suffixes=(".eval",),
)
