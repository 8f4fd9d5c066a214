"""Which formats hold several conversations in one file (``episode`` picks one: their
declarations say ``episodes``), and the refusal of an episode asked of a file that holds one."""

from __future__ import annotations

from ctxlab.exceptions import MessageFormatError
from ctxlab.io._registry import formats

__all__ = ["episodic", "one_conversation"]


def episodic() -> frozenset[str]:
    """The formats whose files may hold several conversations (``episode`` picks one)."""
    return frozenset(f.name for f in formats() if f.episodes)


def one_conversation(kind: str, episode: int | None, where: str) -> None:
    """Refuse ``episode`` of a ``kind`` file that holds one conversation (said, never
    ignored)."""
    several = episodic()
    if episode and kind not in several:
        msg = (
            f"{where}: no episode {episode}: a {kind} file holds one conversation (episode=0); "
            "episodes are the subagents, runs, samples or conversations of "
            f"{', '.join(sorted(several))} files"
        )
        raise MessageFormatError(msg)
