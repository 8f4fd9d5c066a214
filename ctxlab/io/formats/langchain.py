"""LangChain message dicts (``messages_to_dict``) — `ctxlab.io.formats._frameworks`."""

from __future__ import annotations

from ctxlab.io._format import SessionFormat
from ctxlab.io.formats._frameworks import from_langchain, is_langchain, langchain_plain
from ctxlab.io.formats._messages import messages_reader

FORMAT = SessionFormat(
    name="langchain",
    tool="LangChain messages_to_dict output (langchain-core)",
    learned_from="langchain-core's messages_to_dict output; langchain-anthropic's usage metadata",
    priority=230,
    never="chat messages: {type, data} dicts",
    records=is_langchain,
    read=messages_reader(from_langchain),
    census="messages",
    messages=True,
    plain=langchain_plain,
)
