"""The formats ctxlab reads, one module each: a `ctxlab.io._format.SessionFormat` declaration
(``FORMAT``) that says, in one place, how the format is recognised, read and listed. The
registry (`ctxlab.io._registry`) holds them, with those users register."""

from __future__ import annotations

from ctxlab.io._format import SessionFormat
from ctxlab.io.formats import (
    aider,
    anthropic,
    atif,
    autogen,
    claude_code,
    cline,
    codex,
    codex_exec,
    continue_,
    copilot,
    ctxlab,
    gemini,
    gemini_cli,
    gemini_stream,
    goose,
    inspect,
    langchain,
    letta,
    mini_swe_agent,
    openai,
    openai_responses,
    opencode,
    openhands,
    otel,
    pydantic_ai,
    smolagents,
    specstory,
    swe_agent,
    tau_bench,
)

__all__ = ["BUILTIN"]

BUILTIN: tuple[SessionFormat, ...] = tuple(
    module.FORMAT
    for module in (
        ctxlab,
        claude_code,
        anthropic,
        openai,
        openai_responses,
        langchain,
        pydantic_ai,
        mini_swe_agent,
        swe_agent,
        openhands,
        tau_bench,
        otel,
        gemini_cli,
        gemini,
        codex,
        copilot,
        aider,
        inspect,
        cline,
        continue_,
        codex_exec,
        gemini_stream,
        letta,
        autogen,
        smolagents,
        opencode,
        goose,
        specstory,
        atif,
    )
)
"""ctxlab's own formats, in the order ``ctxlab.FORMATS`` has always listed them (detection
asks them by priority)."""
