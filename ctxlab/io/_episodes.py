"""Which formats hold several conversations in one file (``episode`` picks one), and the
refusal of an episode asked of a file that holds one."""

from __future__ import annotations

from ctxlab.exceptions import MessageFormatError

__all__ = ["EPISODIC", "one_conversation"]


EPISODIC: frozenset[str] = frozenset(
    {"claude_code", "tau_bench", "otel", "openhands", "inspect", "aider", "letta", "autogen"}
)
"""The formats whose files may hold several conversations (``episode`` picks one)."""


def one_conversation(kind: str, episode: int | None, where: str) -> None:
    """Refuse ``episode`` of a ``kind`` file that holds one conversation (said, never
    ignored)."""
    # An episode asked of a file that holds one conversation: said, never ignored.
    if episode and kind not in EPISODIC:
        msg = (
            f"{where}: no episode {episode}: a {kind} file holds one conversation (episode=0); "
            "episodes are the subagents, runs, samples or conversations of "
            f"{', '.join(sorted(EPISODIC))} files"
        )
        raise MessageFormatError(msg)
