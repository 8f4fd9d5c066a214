"""ATIF trajectories: the Agent Trajectory Interchange Format, v1.0 to v1.7.

ATIF is Harbor's trajectory format (harbor-framework/harbor, formerly laude-institute/harbor:
``rfcs/0001-trajectory-format.md`` and the pydantic models of
``src/harbor/models/trajectories/`` — ``trajectory.py``, ``step.py``, ``tool_call.py``,
``observation.py``, ``observation_result.py``, ``metrics.py``, ``final_metrics.py``,
``agent.py``, ``content.py``; read at v1.7, whose additions are ``llm_call_count``,
``trajectory_id`` and embedded ``subagent_trajectories``). Harbor's agents, NVIDIA NeMo Gym and
Phoenix write it. A trajectory is one JSON document:

- ``agent``: the agent's name, version, default model and ``tool_definitions`` (OpenAI-style
  function definitions: the tools offered);
- ``steps``, numbered from 1, each from a ``source``: ``system`` (the System prompt, or a
  system event later on), ``user`` (a user turn) or ``agent`` (one model call, or
  ``llm_call_count`` of them, its ``metrics`` their usage; 0 is a deterministic dispatch that
  no model wrote). An agent step's ``message`` is its reply, ``reasoning_content`` its
  reasoning (a thinking block), ``tool_calls`` its calls, and its ``observation.results`` the
  results (``source_call_id`` names the call; a result without one is the environment's
  feedback, read as a user turn);
- ``metrics.prompt_tokens`` counts all input, of which ``cached_tokens`` were read from the
  cache (ATIF records no cache writes): the usage is kept with the cache apart, as ctxlab does;
- ``final_metrics``: the trajectory's totals — set aside (the steps carry the bill);
- ``subagent_trajectories`` (v1.7): whole trajectories of subagents, each a conversation of its
  own — set aside here, counted in the census with the steps they hold.

``is_copied_context`` steps (v1.5: copied from an earlier trajectory after a summary) are what
the model was sent: kept, and counted in ``meta["copied_context_steps"]``. A message's image
parts point at files beside the trajectory: left out, counted. ctxlab's own export
(`ctxlab.io.to_atif`) writes its compactions under ``extra["ctxlab"]``; they are read back into
``meta["compactions"]``. The census counts a step a record.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._build import ConversationBuilder, as_mapping, image_block, tool_result
from ctxlab.messages import ProviderUsage
from ctxlab.messages._usage import token_count

__all__ = ["EXTENSION", "VERSIONS", "from_atif", "is_atif"]

VERSIONS = tuple(f"ATIF-v1.{minor}" for minor in range(8))
"""The ``schema_version`` values read (Harbor's ``Trajectory.schema_version`` at v1.7)."""

_IMAGE_FILE = "image part (a file beside the trajectory)"

EXTENSION = "ctxlab"
"""The key under ATIF's ``extra`` objects where ctxlab writes what ATIF has no field for."""


def is_atif(value: Mapping[str, Any]) -> bool:
    """An ATIF trajectory: a ``schema_version`` of ATIF's, an ``agent`` object and ``steps``."""
    version = value.get("schema_version")
    return (
        isinstance(version, str)
        and version.startswith("ATIF-v")
        and isinstance(value.get("agent"), Mapping)
        and isinstance(value.get("steps"), list)
    )


def from_atif(
    document: Mapping[str, Any], where: str, episode: int = 0
) -> tuple[ConversationBuilder, str, dict[str, Any]]:
    """The conversation, System text and notes of an ATIF trajectory (``episode`` 0), or of
    its ``episode``-th embedded subagent trajectory (v1.7's ``subagent_trajectories``)."""
    version = document.get("schema_version")
    if version not in VERSIONS:
        msg = (
            f"{where}: ATIF schema_version {version!r} is not one ctxlab reads "
            f"({VERSIONS[0]} to {VERSIONS[-1]}); convert the file to one of them, or report "
            "the version"
        )
        raise MessageFormatError(msg)
    chosen, apart = _chosen(document, episode, where)
    builder = ConversationBuilder(where, unit="step")
    # The trajectory's totals repeat the steps' usage; the other trajectories of the file are
    # conversations of their own (episode=N opens each).
    builder.set_aside(chosen.get("final_metrics"), "the trajectory's totals (final_metrics)")
    builder.set_aside(apart, "another trajectory of the file (episode=N opens it)")
    notes = _notes(chosen)
    # ctxlab's own records of compactions: token counts of a context, not a bill.
    own = as_mapping(as_mapping(chosen.get("extra")).get(EXTENSION))
    builder.set_aside(own.get("compactions"), "ctxlab's compaction records")
    builder.set_aside(own.get("compaction_events"), "ctxlab's compaction events")
    if episode:
        notes["episode_of"] = "subagent_trajectories"
    system: list[str] = []
    for number, step in enumerate(chosen.get("steps") or ()):
        if not isinstance(step, Mapping):
            msg = f"{where} step {number + 1}: not an object (an ATIF step)"
            raise MessageFormatError(msg)
        builder.record(str(step.get("source") or "step without a source"), raw=step)
        if step.get("is_copied_context") is True:
            notes["copied_context_steps"] = notes.get("copied_context_steps", 0) + 1
        _step(builder, step, system, f"{where} step {number + 1}")
        builder.settle("step with nothing kept")
    return builder, "\n\n".join(system), notes


def _chosen(
    document: Mapping[str, Any], episode: int, where: str
) -> tuple[Mapping[str, Any], list[Any]]:
    """The trajectory ``episode`` names (0: the file's own; N: its N-th embedded subagent) and
    the file's other trajectories."""
    subagents = document.get("subagent_trajectories")
    subagents = subagents if isinstance(subagents, list) else []
    if not 0 <= episode <= len(subagents):
        msg = (
            f"{where}: no trajectory {episode}: the file holds {len(subagents) + 1} (episode=0, "
            f"the trajectory itself, to episode={len(subagents)}, its subagents)"
        )
        raise MessageFormatError(msg)
    if episode == 0:
        return document, subagents
    chosen = subagents[episode - 1]
    if not isinstance(chosen, Mapping) or not isinstance(chosen.get("steps"), list):
        msg = f"{where}: subagent trajectory {episode} is not an ATIF trajectory with steps"
        raise MessageFormatError(msg)
    own = {k: v for k, v in document.items() if k != "subagent_trajectories"}
    return chosen, [own] + [s for n, s in enumerate(subagents, 1) if n != episode]


def _notes(document: Mapping[str, Any]) -> dict[str, Any]:
    agent = as_mapping(document.get("agent"))
    notes: dict[str, Any] = {"atif_version": document.get("schema_version")}
    models = [agent.get("model_name")] + [
        step.get("model_name") for step in document.get("steps") or () if isinstance(step, Mapping)
    ]
    named = list(dict.fromkeys(m for m in models if isinstance(m, str) and m))
    if named:
        notes["models"] = named
    for key, value in (
        ("agent", agent.get("name")),
        ("agent_version", agent.get("version")),
        ("session_id", document.get("session_id")),
        ("trajectory_id", document.get("trajectory_id")),
    ):
        if isinstance(value, str) and value:
            notes[key] = value
    subagents = document.get("subagent_trajectories")
    if isinstance(subagents, list) and subagents:
        notes["subagent_trajectories"] = len(subagents)
    own = as_mapping(as_mapping(document.get("extra")).get(EXTENSION))
    for key in ("compactions", "compaction_events"):
        if isinstance(own.get(key), list):
            notes[key] = [dict(c) for c in own[key] if isinstance(c, Mapping)]
    return notes


def _step(
    builder: ConversationBuilder, step: Mapping[str, Any], system: list[str], where: str
) -> None:
    source = step.get("source")
    blocks, files = _message(step.get("message"))
    builder.leave_out(_IMAGE_FILE, files)
    own = as_mapping(as_mapping(step.get("extra")).get(EXTENSION))
    if source == "agent":
        _agent(builder, step, blocks, own, where)
    elif source == "user":
        builder.add("user", blocks)
        _observation(builder, step, {}, own)
    elif source == "system":
        if not builder.turns and _texts(blocks):
            system.append("\n\n".join(_texts(blocks)))  # the System prompt: before any turn
            builder.leave_out("image of a System step", len(blocks) - len(_texts(blocks)))
            builder.use()
        elif blocks:
            # A system event during the session: the model saw it as a message of its own.
            builder.notes["system_steps_as_user"] = builder.notes.get("system_steps_as_user", 0) + 1
            builder.add("user", blocks)
        _observation(builder, step, {}, own)
    else:
        builder.skip(f"step of source {source!r} (ATIF knows system, user and agent)")


def _agent(
    builder: ConversationBuilder,
    step: Mapping[str, Any],
    message: list[dict[str, Any]],
    own: Mapping[str, Any],
    where: str,
) -> None:
    redacted = own.get("redacted_thinking")
    blocks: list[dict[str, Any]] = [
        {"type": "redacted_thinking", "data": data}
        for data in (redacted if isinstance(redacted, list) else ())
        if isinstance(data, str) and data
    ]
    reasoning = step.get("reasoning_content")
    if isinstance(reasoning, str) and reasoning.strip():
        # ctxlab's export keeps each thinking block's signature (ATIF has no field for it).
        signatures = own.get("signatures")
        signature = signatures[0] if isinstance(signatures, list) and signatures else ""
        blocks.append({"type": "thinking", "thinking": reasoning, "signature": str(signature)})
    blocks += message
    calls: dict[str, str] = {}
    listed = step.get("tool_calls")
    if listed is not None and not isinstance(listed, list):
        builder.leave_out("tool_calls that is not a list")
        listed = None
    for index, call in enumerate(listed or ()):
        call = as_mapping(call)
        call_id = str(call.get("tool_call_id") or f"{where} call {index + 1}")
        calls[call_id] = call_id
        blocks.append(
            {
                "type": "tool_use",
                "id": call_id,
                "name": str(call.get("function_name") or "tool"),
                "input": _arguments(call.get("arguments")),
            }
        )
    usage = _usage(step.get("metrics"))
    if builder.add("assistant", blocks, usage):
        # A step's ISO 8601 timestamp dates its reply (several steps merged: the first's).
        builder.reply_time(step.get("timestamp"), "iso")
    elif usage is None:
        builder.skip("agent step with no reply (no message, reasoning or call)")
    if step.get("llm_call_count") == 0 and blocks:
        # v1.7: a deterministic dispatch, no model wrote it (no bill: it has no metrics).
        builder.notes["dispatch_steps"] = builder.notes.get("dispatch_steps", 0) + 1
    _observation(builder, step, calls, own)


def _observation(
    builder: ConversationBuilder,
    step: Mapping[str, Any],
    calls: Mapping[str, str],
    own: Mapping[str, Any],
) -> None:
    results = as_mapping(step.get("observation")).get("results")
    listed = own.get("errors")
    errors: list[Any] = listed if isinstance(listed, list) else []
    for result in results if isinstance(results, list) else ():
        result = as_mapping(result)
        blocks, files = _message(result.get("content"))
        builder.leave_out(_IMAGE_FILE, files)
        refs = result.get("subagent_trajectory_ref")
        if refs:
            builder.notes["subagent_refs"] = builder.notes.get("subagent_refs", 0) + len(
                refs if isinstance(refs, list) else [refs]
            )
        call = result.get("source_call_id")
        if isinstance(call, str) and call in calls:
            answer = tool_result(call, "\n".join(_texts(blocks)), is_error=call in errors, empty="")
            if isinstance(result.get("content"), list):
                answer["content"] = blocks  # ContentParts (v1.6): the result's own parts
            builder.add("user", [answer])
        elif blocks:
            builder.add("user", blocks)  # the environment's feedback to no call of this step
        else:
            builder.leave_out("empty observation result")


def _message(value: Any) -> tuple[list[dict[str, Any]], int]:
    """A message's blocks (its text parts, or the string; its images that carry their bytes or
    a link: a ``data:`` URL or ``http(s)`` path) and how many image parts it has that point at
    a file beside the trajectory (string, or ContentPart list: v1.6)."""
    if isinstance(value, str):
        return ([{"type": "text", "text": value}] if value.strip() else []), 0
    if not isinstance(value, list):
        text = "" if value is None else json.dumps(value, ensure_ascii=False)
        return ([{"type": "text", "text": text}] if text else []), 0
    blocks: list[dict[str, Any]] = []
    files = 0
    for part in value:
        part = as_mapping(part)
        if part.get("type") == "text" and isinstance(part.get("text"), str):
            if part["text"].strip():
                blocks.append({"type": "text", "text": part["text"]})
        elif part.get("type") == "image":
            path = as_mapping(part.get("source")).get("path")
            if isinstance(path, str) and path.startswith(("data:", "http://", "https://")):
                blocks.append(image_block(path))
            else:
                files += 1
    return blocks, files


def _texts(blocks: list[dict[str, Any]]) -> list[str]:
    return [b["text"] for b in blocks if b["type"] == "text"]


def _arguments(value: Any) -> dict[str, Any]:
    if isinstance(value, Mapping):
        return dict(value)
    if isinstance(value, str):
        try:
            decoded = json.loads(value)
        except ValueError:
            return {"input": value}
        return dict(decoded) if isinstance(decoded, Mapping) else {"input": decoded}
    return {} if value is None else {"input": value}


def _usage(value: Any) -> ProviderUsage | None:
    """ATIF's ``prompt_tokens`` includes ``cached_tokens`` (cache reads) and the cache writes,
    which the RFC asks producers to record as ``metrics.extra.cache_creation_input_tokens``."""
    metrics = as_mapping(value)
    if not any(k in metrics for k in ("prompt_tokens", "completion_tokens", "cached_tokens")):
        return None
    extra = as_mapping(metrics.get("extra"))
    read = token_count(metrics.get("cached_tokens"), "cached_tokens")
    write = token_count(extra.get("cache_creation_input_tokens"), "cache_creation_input_tokens")
    hour = as_mapping(extra.get(EXTENSION)).get("cache_creation_1h_input_tokens")
    total = token_count(metrics.get("prompt_tokens"), "prompt_tokens")
    return ProviderUsage(
        max(total - read - write, 0),  # inconsistent counts leave 0, never a negative input
        token_count(metrics.get("completion_tokens"), "completion_tokens"),
        read,
        write,
        token_count(hour, "cache_creation_1h_input_tokens"),
    )
