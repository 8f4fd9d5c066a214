"""000's ``flushBeforeCompact``: before a span of the conversation is summarized away, the facts
worth keeping across sessions are written to the workspace's ``MEMORY.md``.

Best effort, and bounded: the facts are the span's artifacts (file paths, commands) and the
errors it met, taken verbatim (the extractive summarizer's ``context_to_preserve`` and
``important_discoveries``); a fact already anywhere in the file is not written again; the
section ctxlab owns keeps its newest `MAX_FACTS` lines. A failure is recorded, never raised: it
must not block the compaction.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from ctxlab.exceptions import WriteError
from ctxlab.manifest import Transform
from ctxlab.pipeline import SummaryRequest, extractive_summarizer
from ctxlab.util._files import write_atomic
from ctxlab.util._paths import resolved_within

__all__ = ["HEADER", "MAX_FACTS", "flush_facts"]

HEADER = "## Facts kept before compaction (written by ctxlab)"
MAX_FACTS = 200
"""Lines the ctxlab section of MEMORY.md keeps (the oldest go first)."""
_MAX_LINE = 300


async def flush_facts(workspace: Path, request: SummaryRequest) -> Transform:
    """Append the new facts of ``request.messages`` to ``workspace/MEMORY.md``; the transform
    says how many were written (or why none could be)."""
    fields = await extractive_summarizer(request)
    candidates = [
        f"- {line.strip()[:_MAX_LINE]}"
        for key in ("context_to_preserve", "important_discoveries")
        for line in fields.get(key, "").splitlines()
        if line.strip() and line.strip() not in ("none", "none recorded")
    ]
    path = workspace / "MEMORY.md"
    if (path.exists() or path.is_symlink()) and resolved_within(workspace, path) is None:
        # Read, it would be sent; written, it would replace the link with what it leads to.
        return Transform(
            "memory_flush_failed",
            "workspace/MEMORY.md",
            "MEMORY.md is a link that leads outside the workspace: not read, not written",
        )
    try:
        written = await asyncio.to_thread(_merge, path, candidates)  # off the event loop
    except (OSError, WriteError) as exc:
        return Transform(
            "memory_flush_failed", "workspace/MEMORY.md", f"{type(exc).__name__}: {exc}"
        )
    return Transform("memory_flush", "workspace/MEMORY.md", f"{written} facts written")


def _merge(path: Path, candidates: list[str]) -> int:
    text = path.read_bytes().decode("utf-8", "replace") if path.is_file() else ""
    before, _, section = text.partition(HEADER)
    existing = set(text.splitlines())
    new = list(dict.fromkeys(c for c in candidates if c not in existing))
    if not new:
        return 0
    facts = [line for line in section.splitlines() if line.strip()] + new
    body = "\n".join(facts[-MAX_FACTS:])
    merged = f"{before.rstrip()}\n\n{HEADER}\n{body}\n".lstrip()
    path.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(path, merged, what="memory file")
    return len(new)
