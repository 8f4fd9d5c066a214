"""The handover's next steps: what the agent said it would do (`_intent.py`), never its
self-assessment ("The changes look good.") standing in for a step, and — when the span's last
run failed — that failure first, whatever the agent's last words claimed.

A sentence is a self-assessment when it says the work is good, works, passes or is done, and
names no step to take. Such a sentence is kept only when no step was stated and the last run
passed cleanly; when the last run failed it is dropped (it is contradicted), and the first step
says which command to make pass and how its last run ended. A last run that passed but still
printed warnings (`_handover_warnings.py`) is not clean either: the first step names the
command and its last warning line, and the self-assessment is dropped.
"""

from __future__ import annotations

import re

from ctxlab.pipeline._intent import intent
from ctxlab.pipeline._span import Run, Span, short

__all__ = ["next_steps"]

_CLAIM = re.compile(
    r"\b(?:looks? (?:good|correct|right|fine|great)|works?|working|fixed|pass(?:es|ed)?"
    r"|succe(?:ss|ssful|ssfully|eded|eds)|resolved|complete[ds]?|done|correct(?:ly)?"
    r"|no (?:more )?(?:errors?|warnings?|issues?|failures?))\b",
    re.IGNORECASE,
)
_STEP = re.compile(
    r"\b(?:I'll|I will|I'm going to|I need to|I should|let me|let's|next|now I|we need to"
    r"|we should|we'll|then)\b",
    re.IGNORECASE,
)


def _claims(sentence: str) -> bool:
    """Whether ``sentence`` is a self-assessment: a claim of success naming no step."""
    return bool(_CLAIM.search(sentence)) and not _STEP.search(sentence)


def _last_done(runs: list[Run]) -> Run | None:
    # The span's last run with a result.
    done = [r for r in runs if r.outcome != "no result yet"]
    return done[-1] if done else None


def _first_step(last: Run | None) -> str | None:
    """What the last run leaves to do: make it pass, or clear the warnings it still prints."""
    if last is None:
        return None
    command = short(last.command, 120)
    if last.failed:
        what = last.failures[-1] if last.failures else last.outcome
        return f"First make `{command}` pass: its last run ended {short(what, 200)}"
    if last.warnings:
        return f"`{command}` still prints warnings: {short(last.warnings[-1], 200)}"
    return None


def next_steps(span: Span) -> list[str]:
    """The next steps of ``span``'s handover, in order (empty when the agent said nothing
    to go on and the last run neither failed nor warned)."""
    said = intent(span.last_text)
    first = _first_step(_last_done(span.runs))
    if first is None:
        steps = [s for s in said if not _claims(s)]
        # The agent's claim alone stays when it said nothing else and nothing contradicts it.
        return steps or said
    return [first, *(s for s in said if not _claims(s))]
