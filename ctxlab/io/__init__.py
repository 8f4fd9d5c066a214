"""Sessions in and out: `load` reads ctxlab's JSONL and the sessions of other tools."""

from ctxlab.io._load import FORMATS, Format, detect_format, load

__all__ = ["FORMATS", "Format", "detect_format", "load"]
