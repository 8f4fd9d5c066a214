"""Cline (and its forks Roo Code, Kilo Code) task folders: every item of the API history and
every UI message, both files of the task."""

from __future__ import annotations

from tests.io.contracts import FIXTURES, each
from tests.io.contracts.count import Count, Find, Total

TASKS = sorted(task for task in (FIXTURES / "cline").glob("*/tasks/*") if task.is_dir())
CONTRACT = each(
    TASKS,
    records=Total(
        Count(Find("*", file="api_conversation_history.json")),
        Count(Find("*", file="ui_messages.json")),
    ),
)
