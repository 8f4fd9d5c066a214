"""Sessions in and out: `load` reads ctxlab's JSONL and the sessions of other tools; `sessions`
lists a folder of them."""

from ctxlab.io._census import Census
from ctxlab.io._folder import SESSION_COLUMNS, sessions
from ctxlab.io._load import FORMATS, Format, detect_format, load
from ctxlab.io._save import SaveFormat, save_transcript, to_openai

__all__ = [
    "FORMATS",
    "SESSION_COLUMNS",
    "Census",
    "Format",
    "SaveFormat",
    "detect_format",
    "load",
    "save_transcript",
    "sessions",
    "to_openai",
]
