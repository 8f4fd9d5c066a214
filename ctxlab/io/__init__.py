"""Sessions in and out: `load` reads ctxlab's JSONL and the sessions of other tools; `sessions`
lists a folder of them. The formats are a registry (`register_format`; ``FORMATS`` their names),
one module each in ``ctxlab.io.formats``."""

from ctxlab.io._build import ConversationBuilder
from ctxlab.io._census import Census
from ctxlab.io._compaction_events import compaction_events
from ctxlab.io._contract import check_contract
from ctxlab.io._folder import SESSION_COLUMNS, sessions
from ctxlab.io._format import FormatCase, SessionFormat
from ctxlab.io._load import Format, detect_format, load
from ctxlab.io._readers import built_transcript
from ctxlab.io._registry import FORMATS, register_format
from ctxlab.io._save import SaveFormat, save_transcript, to_openai
from ctxlab.io._transcript import Transcript
from ctxlab.io.formats.atif.export import to_atif, write_atif
from ctxlab.io.formats.otel.export import to_otel, write_otel

__all__ = [
    "FORMATS",
    "SESSION_COLUMNS",
    "Census",
    "ConversationBuilder",
    "Format",
    "FormatCase",
    "SaveFormat",
    "SessionFormat",
    "Transcript",
    "built_transcript",
    "check_contract",
    "compaction_events",
    "detect_format",
    "load",
    "register_format",
    "save_transcript",
    "sessions",
    "to_atif",
    "to_openai",
    "to_otel",
    "write_atif",
    "write_otel",
]
