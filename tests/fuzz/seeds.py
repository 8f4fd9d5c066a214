"""Seed files for the importer fuzzing, one or more per format of ``ctxlab.FORMATS``: every real
fixture under ``tests/fixtures`` (its format found by loading it: a fixture a new importer's
author adds is a seed with no change here), and small sessions written here for the formats no
fixture records — each seed a sound session of its format, with a tool call and its result."""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from ctxlab import load
from ctxlab.io import FORMATS
from ctxlab.io._transcript import Transcript
from ctxlab.messages import ProviderUsage
from ctxlab.models import messages_from_anthropic

FIXTURES = Path(__file__).parents[1] / "fixtures"

_CALL = {"id": "call_1", "name": "add", "args": {"a": 2, "b": 3}}


def _openai_chat(
    system: str, user: str, call: tuple[str, str, str], result: str, answer: str
) -> list[dict[str, Any]]:
    """OpenAI chat messages (tau-bench's trajectories are these too): a question, one tool call
    ``(id, name, arguments as JSON)``, its result and the answer."""
    call_id, name, arguments = call
    function = {"name": name, "arguments": arguments}
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": user},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": call_id, "type": "function", "function": function}],
        },
        {"role": "tool", "tool_call_id": call_id, "content": result},
        {"role": "assistant", "content": answer},
    ]


WRITTEN: dict[str, tuple[str, Any]] = {
    "anthropic": (
        "messages.json",
        {
            "system": "Be brief.",
            "messages": [
                {"role": "user", "content": "2 + 3?"},
                {
                    "role": "assistant",
                    "content": [
                        {"type": "tool_use", "id": "toolu_1", "name": "add", "input": _CALL["args"]}
                    ],
                },
                {
                    "role": "user",
                    "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "5"}],
                },
                {"role": "assistant", "content": "5."},
            ],
        },
    ),
    "openai": (
        "chat.json",
        _openai_chat("Be brief.", "2 + 3?", ("call_1", "add", '{"a": 2, "b": 3}'), "5", "5."),
    ),
    "openai_responses": (
        "responses.json",
        [
            {"type": "message", "role": "user", "content": "2 + 3?"},
            {
                "type": "function_call",
                "call_id": "call_1",
                "name": "add",
                "arguments": '{"a": 2, "b": 3}',
            },
            {"type": "function_call_output", "call_id": "call_1", "output": "5"},
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "5."}],
            },
        ],
    ),
    "langchain": (
        "langchain.json",
        [
            {"type": "system", "data": {"content": "Be brief.", "type": "system"}},
            {"type": "human", "data": {"content": "2 + 3?", "type": "human"}},
            {
                "type": "ai",
                "data": {
                    "content": "",
                    "tool_calls": [{**_CALL, "type": "tool_call"}],
                    "usage_metadata": {"input_tokens": 120, "output_tokens": 9},
                },
            },
            {"type": "tool", "data": {"content": "5", "tool_call_id": "call_1"}},
            {"type": "ai", "data": {"content": "5."}},
        ],
    ),
    "pydantic_ai": (
        "pydantic_ai.json",
        [
            {
                "kind": "request",
                "parts": [
                    {"part_kind": "system-prompt", "content": "Be brief."},
                    {"part_kind": "user-prompt", "content": "2 + 3?"},
                ],
            },
            {
                "kind": "response",
                "parts": [
                    {
                        "part_kind": "tool-call",
                        "tool_name": "add",
                        "args": '{"a": 2, "b": 3}',
                        "tool_call_id": "t1",
                    }
                ],
                "usage": {"input_tokens": 50, "output_tokens": 5},
            },
            {
                "kind": "request",
                "parts": [
                    {
                        "part_kind": "tool-return",
                        "tool_name": "add",
                        "content": 5,
                        "tool_call_id": "t1",
                    }
                ],
            },
            {"kind": "response", "parts": [{"part_kind": "text", "content": "5."}]},
        ],
    ),
    "swe_agent": (
        "run.traj",
        {
            "trajectory": [{"action": "ls", "observation": "a.py"}],
            "history": [
                {"role": "system", "content": "You fix bugs.", "agent": "main"},
                {"role": "user", "content": "Fix a.py", "agent": "main"},
                {
                    "role": "assistant",
                    "content": "Listing.",
                    "thought": "Listing.",
                    "action": "ls",
                    "agent": "main",
                },
                {"role": "user", "content": "a.py", "agent": "main", "message_type": "observation"},
                {"role": "assistant", "content": "Done.", "action": "submit", "agent": "main"},
            ],
        },
    ),
    "tau_bench": (
        "tau.json",
        [
            {
                "task_id": 1,
                "reward": 1.0,
                "traj": _openai_chat(
                    "You help customers.",
                    "Where is order 7?",
                    ("c1", "order", '{"id": 7}'),
                    "shipped",
                    "It shipped.",
                ),
            }
        ],
    ),
    "gemini": (
        "contents.json",
        [
            {"role": "user", "parts": [{"text": "2 + 3?"}]},
            {"role": "model", "parts": [{"functionCall": {"name": "add", "args": _CALL["args"]}}]},
            {
                "role": "user",
                "parts": [{"functionResponse": {"name": "add", "response": {"result": 5}}}],
            },
            {"role": "model", "parts": [{"text": "5."}]},
        ],
    ),
}
"""The seeds written here: format → (file name, content)."""


def _ctxlab(folder: Path) -> Path:
    """ctxlab's own seed: the Anthropic seed's session, with usage on both replies."""
    request = WRITTEN["anthropic"][1]
    transcript = Transcript(
        "seed",
        {},
        request["system"],
        tuple(messages_from_anthropic(request["messages"])),
        usage={1: ProviderUsage(120, 9, 100), 3: ProviderUsage(20, 2)},
    )
    return transcript.save(folder / "ctxlab.jsonl")


@cache
def seed_files(folder: Path) -> dict[str, tuple[Path, ...]]:
    """Format → its seed files, written to ``folder`` where they are not fixtures. A format
    with no seed maps to an empty tuple (it is fuzzed on generated data only)."""
    found: dict[str, list[Path]] = {kind: [] for kind in FORMATS}
    for path in sorted(FIXTURES.rglob("*")):
        if not path.is_file() or path.suffix in (".py", ".mjs") or path.name == "README.md":
            continue
        try:
            kind = load(path).meta.get("source")
        except Exception:  # not a session file (a helper of the fixtures)
            continue
        if kind in found:
            found[kind].append(path)
    folder.mkdir(parents=True, exist_ok=True)
    for kind, (name, content) in WRITTEN.items():
        path = folder / name
        path.write_text(json.dumps(content, indent=1))
        assert load(path, format=kind).messages, kind  # a sound seed of its format
        found[kind].append(path)
    found["ctxlab"].append(_ctxlab(folder))
    return {kind: tuple(paths) for kind, paths in found.items()}
