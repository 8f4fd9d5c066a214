"""Every entry `export` can put in `dropped` is documented in the how-to on exports, under its
target: the configs here (every preset, and configs that use every setting a target cannot
express) exported to every target, each entry's setting looked for in that target's section."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from ctxlab import PRESETS, ContextConfig
from ctxlab.config import ClearToolUses, ProviderEdits
from tests.config.test_export_anthropic_values import _everything as anthropic_everything
from tests.config.test_export_framework_values import _everything as frameworks_everything

DOC = Path(__file__).parents[2] / "docs" / "howto" / "exports.md"
SECTIONS = {
    "anthropic": "### Anthropic",
    "pydantic_ai": "### Anthropic",
    "langchain": "### LangChain",
    "inspect": "### Inspect AI",
    "openai_agents": "### The OpenAI Agents SDK",
}


def _configs() -> dict[str, ContextConfig]:
    configs = {name: ContextConfig.preset(name) for name in PRESETS}
    # Every setting in force at once, as the Anthropic and the frameworks' value tests set them.
    configs["everything"] = anthropic_everything()
    configs["everything_frameworks"] = frameworks_everything()
    configs["inputs"] = ContextConfig.preset("ctxlab").merge(
        provider_edits=ProviderEdits(clear_tool_uses=ClearToolUses(clear_tool_inputs=True))
    )
    return configs


def _section(text: str, heading: str) -> str:
    start = text.index(heading)
    end = text.find("\n### ", start + 1)
    return text[start : end if end != -1 else None]


def _setting(entry: str) -> str:
    """The setting an entry names: the text before its colon, a value (``=20,000``) or an
    aside in brackets left out."""
    head = entry.split(":", 1)[0]
    return re.sub(r"=.*$|\s*\(.*\)$", "", head).strip()


@pytest.mark.parametrize("target", sorted(SECTIONS))
def test_every_dropped_entry_is_in_the_how_to(target: str) -> None:
    pytest.importorskip("langchain.agents", reason="the LangChain target builds its middleware")
    pytest.importorskip("inspect_ai", reason="the Inspect target builds its strategy")
    pytest.importorskip("agents", reason="the Agents SDK target builds its run config")
    pytest.importorskip("pydantic_ai", reason="the pydantic-ai target builds its settings")
    from langchain_core.messages import AIMessage

    from tests.integrations.test_langchain import _Model

    section = _section(DOC.read_text(encoding="utf-8"), SECTIONS[target])
    seen: set[str] = set()
    for config in _configs().values():
        for model in (None, _Model(messages=iter([AIMessage(content="s")]), sent=[])):
            options: dict[str, Any] = {"model": model, "context_window": 200_000}
            for entry in config.export(target, **options).dropped:
                seen.add(_setting(entry))
    missing = sorted(s for s in seen if f"`{s}" not in section)
    assert not missing, f"dropped entries of {target!r} not in {DOC.name}: {missing}"
    assert len(seen) >= 3
