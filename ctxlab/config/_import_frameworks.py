"""`ContextConfig.from_` for the agent frameworks: LangChain 1.x agent middleware and Inspect AI
compaction strategies, read attribute by attribute (the objects are the frameworks' own; none is
imported here) into the nearest ctxlab config. What has no ctxlab equivalent is refused by name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

from ctxlab.config._read import (
    Refusals,
    built,
    read_bool,
    read_count,
    read_names,
    read_number,
    read_text,
)
from ctxlab.config._sections import ClearThinking, ClearToolUses, ProviderEdits
from ctxlab.exceptions import UsageError

if TYPE_CHECKING:
    from ctxlab.config._config import ContextConfig

__all__ = ["from_inspect", "from_langchain"]


def _clear_edit(edit: Any, where: str) -> ClearToolUses:
    """A LangChain ``ClearToolUsesEdit`` (langchain 1.x ``context_editing.py``)."""
    if type(edit).__name__ != "ClearToolUsesEdit":
        msg = f"{where}: edit {type(edit).__name__} has no ctxlab equivalent"
        raise UsageError(msg)
    least = read_count(getattr(edit, "clear_at_least", 0), f"{where}.clear_at_least")
    if least:
        msg = (
            f"{where}.clear_at_least={least:,} has no ctxlab equivalent: LangChain stops "
            "clearing once that many tokens are reclaimed, where Anthropic's edit (and ctxlab) "
            "clears only when that many can go — read it with clear_at_least=0"
        )
        raise UsageError(msg)
    return built(
        ClearToolUses,
        where,
        trigger_input_tokens=read_count(edit.trigger, f"{where}.trigger", minimum=1),
        keep=read_count(edit.keep, f"{where}.keep"),
        clear_tool_inputs=read_bool(edit.clear_tool_inputs, f"{where}.clear_tool_inputs"),
        exclude_tools=read_names(edit.exclude_tools, f"{where}.exclude_tools"),
        placeholder=read_text(edit.placeholder, f"{where}.placeholder"),
    )


def _trim(item: Any, where: str) -> None:
    """``trim_tokens_to_summarize``: only None (no trimming) is what ctxlab does."""
    trim = getattr(item, "trim_tokens_to_summarize", None)
    if trim is not None:
        msg = (
            f"{where}.trim_tokens_to_summarize={trim!r} has no ctxlab equivalent: LangChain "
            "summarizes only the latest that many tokens of the span (and writes 'Previous "
            "conversation was too long to summarize.' when no user message starts within "
            "them); ctxlab summarizes all of it — read it with trim_tokens_to_summarize=None"
        )
        raise UsageError(msg)


def _trigger(item: Any, where: str, passes: dict[str, Any], updates: dict[str, Any]) -> None:
    """The trigger clauses: ctxlab compacts when any one line is passed (LangChain's OR)."""
    clauses = getattr(item, "_trigger_clauses", None)
    if clauses is None:  # an older LangChain: the trigger as given
        trigger = item.trigger
        given = trigger if isinstance(trigger, list) else [] if trigger is None else [trigger]
        clauses = [dict([c]) if isinstance(c, tuple) else c for c in given]
    if not clauses:
        passes["enabled"] = False  # no trigger: LangChain never summarizes
    for clause in clauses:
        if not isinstance(clause, Mapping) or len(clause) != 1:
            msg = (
                f"{where}.trigger {clause!r} has no ctxlab equivalent: ctxlab compacts when any "
                "one line is passed, not when several are at once"
            )
            raise UsageError(msg)
        ((kind, value),) = clause.items()
        if kind == "fraction":
            ratio = read_number(value, f"{where}.trigger fraction", low=0, high=1)
            updates["trigger_ratio"] = min(ratio, updates.get("trigger_ratio", ratio))
        elif kind == "tokens":
            # LangChain summarizes at its count (``total_tokens < threshold`` does not), ctxlab
            # above its line: LangChain's T is ctxlab's T - 1.
            line = read_count(value, f"{where}.trigger tokens", minimum=1) - 1
            known = passes.get("trigger_tokens")
            passes["trigger_tokens"] = line if known is None else min(line, known)
        elif kind == "messages":
            count = read_count(value, f"{where}.trigger messages", minimum=1)
            passes["trigger_messages"] = min(count, passes.get("trigger_messages") or count)
        else:
            msg = f"{where}.trigger: {kind!r} is not a LangChain context size"
            raise UsageError(msg)


def profile_window(item: Any) -> int | None:
    """The summarized model's ``max_input_tokens`` from its LangChain profile — the window
    LangChain itself sizes a fraction by — or None when the model states none."""
    profile = getattr(getattr(item, "model", None), "profile", None)
    tokens = profile.get("max_input_tokens") if isinstance(profile, Mapping) else None
    return (
        tokens if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens > 0 else None
    )


def _keep(
    item: Any, where: str, window: int | None, passes: dict[str, Any], updates: dict[str, Any]
) -> None:
    """The kept tail: messages as messages; a fraction or a number of tokens as ctxlab's share
    of the window (tokens need the window: ``context_window=``, or the model's profile)."""
    keep = getattr(item, "keep", None)
    if not isinstance(keep, tuple) or len(keep) != 2:
        msg = f"{where}.keep must be ('messages' | 'tokens' | 'fraction', value), got {keep!r}"
        raise UsageError(msg)
    kind, value = keep
    passes["keep_messages"] = None
    if kind == "messages":
        passes["keep_messages"] = read_count(value, f"{where}.keep messages", minimum=1)
    elif kind == "fraction":
        updates["reserve_ratio"] = read_number(value, f"{where}.keep fraction", low=0, high=1)
    elif kind == "tokens":
        tokens = read_count(value, f"{where}.keep tokens", minimum=1)
        window = window or profile_window(item)
        if window is None:
            msg = (
                f"{where}.keep=('tokens', {tokens}) is a tail of tokens, which ctxlab sizes as a "
                "share of the window, and the model states no max_input_tokens in its profile: "
                "pass context_window= (the window the session runs in) to read it"
            )
            raise UsageError(msg)
        if tokens >= window:
            msg = (
                f"{where}.keep=('tokens', {tokens:,}) is not below the window of {window:,} "
                "tokens: nothing would be summarized"
            )
            raise UsageError(msg)
        updates["reserve_ratio"] = tokens / window
    else:
        msg = f"{where}.keep: {kind!r} is not a LangChain context size"
        raise UsageError(msg)


def _prompt(item: Any, where: str, passes: dict[str, Any]) -> None:
    """LangChain formats its prompt with str.format: {messages} is where the history goes, and
    a brace is written twice; ctxlab's template takes the text as it is."""
    prompt = read_text(item.summary_prompt, f"{where}.summary_prompt")
    if "{messages}" not in prompt:
        msg = f"{where}.summary_prompt has no {{messages}}, where LangChain puts the history"
        raise UsageError(msg)
    parts = prompt.split("{messages}")
    passes["summary_prompt"] = "{messages}".join(
        p.replace("{{", "{").replace("}}", "}") for p in parts
    )


def _summarization(
    item: Any, where: str, window: int | None, passes: dict[str, Any], updates: dict[str, Any]
) -> None:
    """A LangChain ``SummarizationMiddleware`` into ``passes`` (the compaction section) and
    ``updates`` (the config's ratios): each setting read on its own, every refusal named."""
    refusals = Refusals()
    # Where each ratio comes from, for a ratio the config's rules refuse.
    updates.setdefault("_origins", {}).update(
        trigger_ratio=f"{where}.trigger={getattr(item, 'trigger', None)!r}",
        reserve_ratio=f"{where}.keep={getattr(item, 'keep', None)!r}",
    )
    refusals.read(lambda: _trim(item, where))
    refusals.read(lambda: _trigger(item, where, passes, updates))
    refusals.read(lambda: _keep(item, where, window, passes, updates))
    refusals.read(lambda: _prompt(item, where, passes))
    refusals.raise_any()


def from_langchain(cls: type[ContextConfig], middleware: Any, window: int | None) -> ContextConfig:
    """The nearest config to a list of LangChain agent middleware: a ``ContextEditingMiddleware``'s
    ``ClearToolUsesEdit`` as the tool-result clearing; a ``SummarizationMiddleware``'s
    triggers, kept tail and prompt as ctxlab's compaction (``context_window`` turns a kept tail
    of tokens into ctxlab's share of the window)."""
    config = cls.preset("langchain")
    passes = config.compaction.model_dump()
    updates: dict[str, Any] = {}
    clears: list[ClearToolUses | None] = []
    refusals = Refusals()  # every middleware read, so that every refusal is named
    items = middleware if isinstance(middleware, list | tuple) else [middleware]
    for number, item in enumerate(items):
        kind = type(item).__name__
        where = f"middleware {number}"
        if kind == "ContextEditingMiddleware":
            for index, edit in enumerate(getattr(item, "edits", ())):
                if clears:
                    refusals.refuse(
                        f"{where}.edits[{index}]: a second tool-result clearing; ctxlab has one"
                    )
                clears.append(refusals.read(_clear_edit, edit, f"{where}.edits[{index}]"))
        elif kind == "SummarizationMiddleware":
            refusals.read(_summarization, item, where, window, passes, updates)
        else:
            refusals.refuse(
                f"{where}: {kind} has no ctxlab equivalent (ctxlab reads "
                "ContextEditingMiddleware and SummarizationMiddleware)"
            )
    refusals.raise_any()
    clear = clears[0] if clears else None
    if clear is not None:
        updates["provider_edits"] = ProviderEdits(clear_tool_uses=clear)
    origins: dict[str, str] = updates.pop("_origins", {})
    try:
        return config.merge(compaction=passes, **updates)
    except ValueError as exc:  # pydantic's ValidationError: the ratios' rules
        read = [
            f"{origins.get(name, name)} as {name}={value!r}"
            for name, value in updates.items()
            if name in ("trigger_ratio", "reserve_ratio")
        ]
        errors: list[Any] = (
            list(exc.errors()) if isinstance(exc, ValidationError) else [{"msg": str(exc)}]
        )
        reasons = "; ".join(
            f"{'.'.join(map(str, e.get('loc', ()))) or 'config'}: {e.get('msg', e)}" for e in errors
        )
        msg = f"{', '.join(read) or 'the middleware'} cannot be honoured: {reasons}"
        raise UsageError(msg) from exc


def _inspect_edit(cls: type[ContextConfig], strategy: Any, tokens: int) -> ContextConfig:
    """Inspect's ``CompactionEdit`` as Anthropic's two clears at its threshold."""
    if not read_bool(strategy.keep_tool_inputs, "CompactionEdit.keep_tool_inputs"):
        msg = (
            "CompactionEdit(keep_tool_inputs=False) has no ctxlab equivalent: Inspect removes "
            "each cleared call and its result whole; ctxlab's nearest, clear_tool_inputs=True, "
            "keeps the call with its input emptied — read it with keep_tool_inputs=True and "
            "set that yourself"
        )
        raise UsageError(msg)
    keep_thinking = strategy.keep_thinking_turns
    if keep_thinking != "all":
        keep_thinking = read_count(keep_thinking, "CompactionEdit.keep_thinking_turns", minimum=1)
    exclude = strategy.exclude_tools
    edits = ProviderEdits(
        clear_tool_uses=built(
            ClearToolUses,
            "CompactionEdit",
            trigger_input_tokens=tokens,
            keep=read_count(strategy.keep_tool_uses, "CompactionEdit.keep_tool_uses"),
            exclude_tools=() if exclude is None else read_names(exclude, "exclude_tools"),
        ),
        clear_thinking=ClearThinking(keep_turns=None if keep_thinking == "all" else keep_thinking),
    )
    return cls.preset("anthropic_context_editing").model_copy(update={"provider_edits": edits})


def from_inspect(cls: type[ContextConfig], strategy: Any, window: int | None) -> ContextConfig:
    """The nearest config to an Inspect AI compaction strategy (inspect_ai 0.3.285):
    ``CompactionEdit`` as Anthropic's two clears at its threshold, ``CompactionNative`` as the
    server's compaction, ``CompactionSummary`` as ctxlab's summary at its threshold."""
    kind = type(strategy).__name__
    threshold = getattr(strategy, "threshold", None)
    if isinstance(threshold, float):
        read_number(threshold, f"{kind}.threshold", low=0, high=1)
    elif not isinstance(threshold, int) or isinstance(threshold, bool) or threshold < 1:
        msg = (
            f"an Inspect compaction strategy has a numeric threshold (tokens, or a share of "
            f"the window up to 1); got {strategy!r}"
        )
        raise UsageError(msg)
    ratio = float(threshold) if isinstance(threshold, float) else None
    tokens = threshold if isinstance(threshold, int) else None
    if kind == "CompactionEdit":
        if tokens is None and window is not None:
            tokens = max(int(threshold * window), 1)
        if tokens is None:
            msg = (
                f"CompactionEdit(threshold={threshold}) is a share of the window: pass "
                "context_window= to read it as the clearing's token trigger"
            )
            raise UsageError(msg)
        return _inspect_edit(cls, strategy, tokens)
    if kind == "CompactionNative":
        base = cls.preset("anthropic_compaction")
    elif kind == "CompactionSummary":
        base = cls.preset("ctxlab")
    else:
        msg = (
            f"{kind} has no ctxlab equivalent (ctxlab reads CompactionEdit, CompactionNative "
            "and CompactionSummary)"
        )
        raise UsageError(msg)
    if ratio is not None:
        return base.merge(trigger_ratio=min(ratio, 0.9))
    return base.merge(compaction={**base.compaction.model_dump(), "trigger_tokens": tokens})
