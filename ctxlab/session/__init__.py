"""The durable session log (SQLite): events, turns, checkpoints, search."""

from ctxlab.session._log import SCHEMA_VERSION, SessionLog
from ctxlab.session._records import Checkpoint, LoggedMessage, SessionKey
from ctxlab.session._responses import LoggedResponse, logged_responses

__all__ = [
    "SCHEMA_VERSION",
    "Checkpoint",
    "LoggedMessage",
    "LoggedResponse",
    "SessionKey",
    "SessionLog",
    "logged_responses",
]
