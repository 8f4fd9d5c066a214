"""The Messages API's ``context_management`` on `AnthropicModel`'s requests: the parameter and
its beta headers, checked before anything is sent, and what the API reports its edits did."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ctxlab.exceptions import UsageError
from ctxlab.manifest import Transform
from ctxlab.messages._usage import count_or_none

__all__ = [
    "COMPACTION_BETA",
    "CONTEXT_MANAGEMENT_BETA",
    "applied_edits",
    "reported_edits",
    "thinking_on",
    "with_context_management",
]


CONTEXT_MANAGEMENT_BETA = "context-management-2025-06-27"
"""The beta header of the Messages API's ``context_management`` (anthropic 2.14.0)."""
COMPACTION_BETA = "compact-2026-01-12"
"""The beta header the server compaction edit ``compact_20260112`` also needs."""


def thinking_on(parameters: Mapping[str, Any]) -> bool:
    thinking = parameters.get("thinking")
    return isinstance(thinking, Mapping) and thinking.get("type") in ("enabled", "adaptive")


def with_context_management(parameters: dict[str, Any], value: Any) -> dict[str, Any]:
    thinking_edit = "clear_thinking_20251015"
    if hasattr(value, "export"):  # a ContextConfig
        value = value.export("anthropic").value
        if not thinking_on(parameters):
            # Without thinking there is none to clear, and the API refuses the edit.
            value = {"edits": [e for e in value["edits"] if e.get("type") != thinking_edit]}
    if not isinstance(value, Mapping) or not isinstance(value.get("edits"), list):
        msg = f"context_management must be {{'edits': [...]}} or a ContextConfig, got {value!r}"
        raise UsageError(msg)
    if not thinking_on(parameters) and any(
        isinstance(e, Mapping) and e.get("type") == thinking_edit for e in value["edits"]
    ):
        msg = (
            f"context_management holds {thinking_edit}, which the API takes only with extended "
            "thinking on: pass thinking={'type': 'enabled', 'budget_tokens': ...} (or "
            "'adaptive'), or leave the edit out"
        )
        raise UsageError(msg)
    headers = dict(parameters.get("extra_headers") or {})
    betas = [b for b in str(headers.get("anthropic-beta", "")).split(",") if b.strip()]
    needed = [CONTEXT_MANAGEMENT_BETA]
    if any(isinstance(e, Mapping) and e.get("type") == "compact_20260112" for e in value["edits"]):
        needed.append(COMPACTION_BETA)
    betas.extend(b for b in needed if b not in betas)
    headers["anthropic-beta"] = ",".join(betas)
    return {**parameters, "context_management": dict(value), "extra_headers": headers}


def reported_edits(data: Mapping[str, Any]) -> tuple[Mapping[str, Any], ...]:
    """The API's ``context_management.applied_edits``, each edit as it came."""
    managed = data.get("context_management")
    edits = managed.get("applied_edits") if isinstance(managed, Mapping) else None
    return tuple(e for e in edits if isinstance(e, Mapping)) if isinstance(edits, list) else ()


def applied_edits(data: Mapping[str, Any]) -> tuple[Transform, ...]:
    """What the API says its context editing did to the request, as transforms."""
    managed = data.get("context_management")
    edits = managed.get("applied_edits") if isinstance(managed, Mapping) else None
    out: list[Transform] = []
    for edit in edits if isinstance(edits, list) else ():
        if not isinstance(edit, Mapping):
            continue
        counted = (
            ("cleared_tool_uses", "{} tool uses"),
            ("cleared_thinking_turns", "{} thinking turns"),
            ("cleared_input_tokens", "{:,} tokens"),
        )
        detail = ", ".join(
            form.format(edit[key]) for key, form in counted if isinstance(edit.get(key), int)
        )
        out.append(Transform("provider_applied_edit", str(edit.get("type")), detail))
    # A server compaction is a call of its own, billed beside the request (its tokens are not
    # in the top-level usage: anthropic 2.14.0, ``beta_iterations_usage.py``).
    usage = data.get("usage")
    iterations = usage.get("iterations") if isinstance(usage, Mapping) else None
    for step in iterations if isinstance(iterations, list) else ():
        if isinstance(step, Mapping) and step.get("type") == "compaction":
            counts = ", ".join(
                f"{count_or_none(step.get(key)) or 0:,} {name}"
                for key, name in (
                    ("input_tokens", "input"),
                    ("cache_read_input_tokens", "cache read"),
                    ("cache_creation_input_tokens", "cache write"),
                    ("output_tokens", "output"),
                )
            )
            detail = f"the server's compaction call: {counts} tokens, billed beside the request"
            out.append(Transform("provider_applied_edit", "compact_20260112", detail))
    return tuple(out)
