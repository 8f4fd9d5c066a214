"""The user's own words, as retention counts them: the lines of the first message the user wrote
(``task``) and of every later one (``instructions``) — hints, ``<system-reminder>`` sections,
harness tags and a harness's recorded compaction summary left out (see `ctxlab.retention`).

Every compaction is graded against all the user wrote before it, so a replay of n requests with
c compactions would read n·c messages: `UserLines` reads each message of a growing session once.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Mapping, Sequence

from ctxlab.exceptions import UsageError
from ctxlab.messages import AssistantMessage, TextBlock, UserMessage
from ctxlab.util._checks import shown, whole_number
from ctxlab.util._memo import Memo
from ctxlab.util._tags import PairedTags

__all__ = ["UserLines"]

Message = UserMessage | AssistantMessage

_REMINDER = PairedTags(re.compile(r"<(system-reminder)>"), re.compile(r"</(system-reminder)>"))
_HARNESS_TAG = PairedTags(
    re.compile(
        r"<(command-name|command-message|command-args|local-command-stdout|local-command-stderr)>"
    ),
    re.compile(
        r"</(command-name|command-message|command-args|local-command-stdout|local-command-stderr)>"
    ),
)
_HARNESS_SUMMARY = "This session is being continued from a previous conversation"
_LETTERS = re.compile(r"[^\W\d_]")
_memo: Memo[str, tuple[str, ...]] = Memo(20_000)


def _lines(message: Message) -> tuple[str, ...]:
    # The lines of a message the user wrote (a line with three letters or more); none for an
    # assistant turn, a turn of tool results, or a harness's own summary.
    if not isinstance(message, UserMessage) or message.tool_results:
        return ()
    text = "\n".join(b.text for b in message.content if isinstance(b, TextBlock))
    return _memo.get(text, lambda: _scan(text))


def _scan(text: str) -> tuple[str, ...]:
    if text.lstrip().startswith(_HARNESS_SUMMARY):
        return ()  # a harness's own compaction summary, not the user's words
    text = _HARNESS_TAG.sub(" ", _REMINDER.sub(" ", text))
    lines = (" ".join(line.split()) for line in text.splitlines())
    return tuple(line for line in lines if len(_LETTERS.findall(line)) >= 3)


class UserLines:
    """The task and instruction lines of the first ``end`` messages of a sequence, read
    incrementally: asked again for a longer prefix of the same messages (a replay's recording,
    an agent's history), it reads only the new ones; for other messages, or a shorter prefix,
    it starts over. (Checking that the prefix read is unchanged is a tuple comparison — by
    identity, at C speed — not a reading of each message.)"""

    def __init__(self) -> None:
        self._reset()

    def _reset(self) -> None:
        self._read: tuple[Message, ...] = ()
        self.task: list[str] = []
        self.instructions: list[str] = []

    def upto(self, messages: Sequence[Message], end: int) -> tuple[list[str], list[str]]:
        """The ``task`` and ``instructions`` lines of ``messages[:end]``, in order."""
        if isinstance(messages, str | bytes | Mapping) or not isinstance(messages, Sequence):
            msg = f"messages must be a list of messages, got {shown(messages)}"
            raise UsageError(msg)
        end = min(whole_number(end, "end", high=sys.maxsize), len(messages))
        done = len(self._read)
        if done and (end < done or tuple(messages[:done]) != self._read):
            self._reset()
            done = 0
        for message in messages[done:end]:
            lines = _lines(message)
            if lines:
                (self.instructions if self.task else self.task).extend(lines)
        self._read = tuple(messages[:end])
        return self.task, self.instructions
