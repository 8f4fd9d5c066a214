"""tau-bench result files: a list of episodes, each with its ``traj`` (OpenAI messages)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._format import SessionFormat
from ctxlab.io._readers import built_transcript
from ctxlab.io._transcript import Transcript
from ctxlab.io.formats._chat import from_openai


def _is_tau_bench(value: list[Any]) -> bool:
    return all(isinstance(r, Mapping) and "traj" in r for r in value[:3])


def _read(data: Any, where: str, name: str, episode: int, meta: dict[str, Any]) -> Transcript:
    if not isinstance(data, list) or not 0 <= episode < len(data):
        held = len(data) if isinstance(data, list) else 0
        msg = f"{where}: no episode {episode} (the file holds {held})"
        raise MessageFormatError(msg)
    record = data[episode]
    meta.update({k: record.get(k) for k in ("task_id", "trial", "reward")})
    traj = record.get("traj") if isinstance(record, Mapping) else None
    if not isinstance(traj, list):
        msg = f"{where} episode {episode}: 'traj' must be a list of messages"
        raise MessageFormatError(msg)
    if not traj:
        info = record.get("info") if isinstance(record.get("info"), Mapping) else {}
        why = info.get("error") or info.get("traceback") or "no reason recorded"
        msg = (
            f"{where} episode {episode} (task {record.get('task_id')!r}) recorded no messages: "
            f"the episode errored ({str(why)[:200]}); pick another with episode="
        )
        raise MessageFormatError(msg)
    builder, system = from_openai(traj, f"{where} episode {episode}")
    others = [r for n, r in enumerate(data) if n != episode]
    builder.record("other episode", len(others), raw=others)
    builder.skip("another episode (episode=N opens it)")
    return built_transcript(name, builder, meta, system, ())


FORMAT = SessionFormat(
    name="tau_bench",
    tool="tau-bench (sierra-research/tau-bench) result files",
    learned_from="tau-bench's result files (task_id, reward, info, traj, trial per episode)",
    priority=30,
    never="a list of chat messages: every one of its first records has 'traj'",
    records=_is_tau_bench,
    read=_read,
    episodes=True,
    census="the episode's messages, the other episodes",
)
