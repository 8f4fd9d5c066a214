"""Which tokenizer counts a model's text: the model's own where it is public and offline, else
ctxlab's default — and what that makes the counts.

OpenAI publishes its BPE encodings (tiktoken): ``o200k_base`` for GPT-4o, GPT-4.1, GPT-4.5, the
GPT-5 family (``gpt-5``, ``gpt-5.x``, the Codex models), the o-series and ``codex-mini`` (an o4-mini
model), ``cl100k_base`` for GPT-4 and GPT-3.5 — tiktoken's own table
(``tiktoken.model.MODEL_PREFIX_TO_ENCODING``), both shipped with ctxlab. ``gpt-oss`` uses
``o200k_harmony``, o200k_base's vocabulary with more special tokens: plain text counts the same.
Anthropic's and Google's tokenizers are not public: their models (and a model none of these
names) are counted with cl100k_base, an approximation that `ctxlab.calibrate` reconciles with a
recording's bill; so are later OpenAI families whose encoding tiktoken does not name (GPT-6).
"""

from __future__ import annotations

from ctxlab.tokens._counter import TokenCounter
from ctxlab.tokens._tiktoken import ENCODINGS
from ctxlab.tokens._toktok import default_counter

__all__ = ["counter_for", "counting_note", "encoding_for"]

_O200K = ("gpt-4o", "chatgpt-4o", "gpt-4.1", "gpt-4.5", "o1", "o3", "o4", "codex-mini", "gpt-oss")
_CL100K = ("gpt-4", "gpt-3.5", "gpt-35")


def _bare(model: str) -> str:
    """``model`` without a provider prefix (``openai/``, ``azure/``), in lower case."""
    return model.strip().lower().rsplit("/", 1)[-1]


def _named(name: str, family: str) -> bool:
    """Whether ``name`` is ``family`` or a model of it (``gpt-4o-mini``, ``o3-pro``)."""
    return name == family or name.startswith(family + "-")


def encoding_for(model: str) -> str | None:
    """The public offline encoding that counts ``model``'s tokens exactly (``o200k_base``,
    ``cl100k_base``), or None when its provider publishes none (Claude, Gemini) or the name is
    not known."""
    if not isinstance(model, str):
        return None
    name = _bare(model)
    # The GPT-5 family in every form (gpt-5, gpt-5.1-codex, gpt-5.6-sol), as tiktoken reads it.
    if name.startswith("gpt-5") or any(_named(name, f) for f in _O200K):
        return "o200k_base"
    if any(_named(name, f) for f in _CL100K):
        return "cl100k_base"
    return None


def counter_for(model: str) -> TokenCounter:
    """The counter of ``model``'s text: its own encoding where one is public (`encoding_for`),
    else cl100k_base (an approximation for Claude, Gemini and unknown models)."""
    return default_counter(encoding_for(model) or "cl100k_base")


def counting_note(model: str, method: str) -> str:
    """What the counts of ``model``'s text by ``method`` (a counter's ``method``) are: exact
    BPE counts with the model's own encoding, or an approximation, said with why."""
    own = encoding_for(model)
    # The encoding, not the engine: tiktoken and toktok-rs count a text alike.
    engine, _, encoding = method.partition(":")
    used = encoding if engine in ("tiktoken", "toktok") and encoding in ENCODINGS else method
    if own is not None and used == own:
        return f"tokens counted with {own}, {model}'s own tokenizer (the text's counts exact)"
    name = model or "the model"
    if own is not None:
        return f"tokens counted with {used}, not {name}'s own {own}: an approximation"
    bare = _bare(model)
    whose = (
        "Anthropic publishes"
        if bare.startswith("claude")
        else "Google publishes"
        if bare.startswith(("gemini", "gemma"))
        else "ctxlab knows"
    )
    return (
        f"tokens counted with {used}, an approximation: {whose} no offline tokenizer for "
        f"{name} (ctxlab.calibrate reconciles the estimates with a recording's bill)"
    )
