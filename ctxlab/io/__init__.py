"""Sessions in and out: `load` reads ctxlab's JSONL and the sessions of other tools."""

from ctxlab.io._load import FORMATS, Format, detect_format, load
from ctxlab.io._save import SaveFormat, save_transcript, to_openai

__all__ = [
    "FORMATS",
    "Format",
    "SaveFormat",
    "detect_format",
    "load",
    "save_transcript",
    "to_openai",
]
