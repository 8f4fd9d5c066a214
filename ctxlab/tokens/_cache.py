"""Per-block token cache: a step recounts only blocks it has not seen before.

Blocks are immutable and carry a content hash, so a count is keyed by (hash). A long session
prepares hundreds of requests over nearly the same conversation; with the cache, preparing step N
costs a dictionary look-up per message plus the tokenization of what is new.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from ctxlab.exceptions import CountStoreError, UsageError
from ctxlab.messages import AssistantMessage, UserMessage
from ctxlab.tokens._counter import TokenCounter
from ctxlab.tokens._head import head_within
from ctxlab.tokens._parts import COUNT_RULES, MESSAGE_OVERHEAD, block_parts
from ctxlab.tokens._store import CountStore
from ctxlab.util._checks import shown

__all__ = ["TokenCache", "checked_counter"]

_MAX_ENTRIES = 200_000
_MAX_HEADS = 1_024
"""Texts cut to a budget kept by `TokenCache.head`."""


_A_MESSAGE = "a message (UserMessage or AssistantMessage)"


def _not_counted(value: object, what: str) -> UsageError:
    return UsageError(f"a token count is of {what}, got {shown(value)}")


def _iterable(messages: object) -> Iterable[Any]:
    # Messages to count: any iterable of them, but text (its characters are no messages).
    if type(messages) is tuple or type(messages) is list:
        return messages  # the pipeline's own (the check below asks the ABCs: 2 calls more)
    if isinstance(messages, str | bytes | dict) or not isinstance(messages, Iterable):
        msg = f"messages to count must be a list of messages, got {shown(messages)}"
        raise UsageError(msg)
    return messages


_MESSAGE_TYPES = frozenset((UserMessage, AssistantMessage))


def _all_known(messages: tuple[Any, ...], known: dict[str, int]) -> bool:
    """Whether every item of ``messages`` is a message (of exactly ctxlab's two types: anything
    else takes the checked path) already counted in ``known``."""
    types = _MESSAGE_TYPES
    return all(type(m) in types and m.content_hash in known for m in messages)


def checked_counter(counter: object, name: str = "counter") -> None:
    """Refuse, with a `UsageError` naming ``name``, what is not a `TokenCounter` (a text, a
    number, a class instead of an instance): the entry point would fail later, deep inside, on
    the first text it counts."""
    if isinstance(counter, type) or not isinstance(counter, TokenCounter):
        msg = (
            f"{name} must be a token counter, such as ApproximateCounter() or "
            f"TiktokenCounter() (or a TokenCache of one), got {shown(counter)}"
        )
        raise UsageError(msg)


def _check_head(text: object, max_tokens: object, total: object) -> None:
    """`TokenCache.head`'s arguments, each named when it is not what it must be."""
    if not isinstance(text, str):
        msg = f"only text can be cut to a budget, got {shown(text)}"
        raise UsageError(msg)
    for name, value in (("max_tokens", max_tokens), ("total", total)):
        if value is None and name == "total":
            continue
        if isinstance(value, bool) or not isinstance(value, int):
            msg = f"{name} must be a whole number of tokens, got {shown(value)}"
            raise UsageError(msg)


class TokenCache:
    """Counts blocks and messages with a `TokenCounter`, remembering every count by content hash.

    ``counted_blocks`` tells how many blocks were actually tokenized; ``hits`` how many counts
    were answered from the cache.
    """

    def __init__(self, counter: TokenCounter, store: CountStore | None = None) -> None:
        checked_counter(counter)
        # Any object with a store's two methods serves (a test's failing store, a user's own).
        if store is not None and not all(
            callable(getattr(store, name, None)) for name in ("get_many", "put_many")
        ):
            msg = (
                "store must be a CountStore (CountStore(path): counts kept across runs) or None, "
                f"got {shown(store)}"
            )
            raise UsageError(msg)
        self.counter = counter
        self.store = store
        """Counts kept across runs (`CountStore`), read and written by `count_ahead`: a help,
        never a failure — when it cannot be read it is left aside (the counts are made here),
        when it cannot be written new counts stay in memory; `store_problem` says why."""
        self.store_problem: str | None = None
        """Why the store was left aside or not written (None while it serves)."""
        self._store_writes = True
        self._blocks: dict[str, int] = {}
        self._messages: dict[str, int] = {}
        self._texts: dict[str, int] = {}
        self._heads: dict[tuple[str, int], str] = {}
        self.counted_blocks = 0
        self.hits = 0

    @property
    def store_namespace(self) -> str:
        """What the store's counts are keyed under besides the block: the counter's method and
        ctxlab's block rules (`COUNT_RULES`), so no other counter's counts are ever read."""
        return f"{self.counter.method}|{COUNT_RULES}"

    @property
    def method(self) -> str:
        """The counting method of the underlying counter."""
        return self.counter.method

    @property
    def exact(self) -> bool:
        """Whether the underlying counter is exact."""
        return self.counter.exact

    def text(self, text: str) -> int:
        """Tokens of a standalone text (system parts, materials, schemas), cached by value."""
        cached = self._texts.get(text) if isinstance(text, str) else None
        if cached is not None:
            self.hits += 1
            return cached
        if not isinstance(text, str):
            msg = f"only text has tokens to count, got {shown(text)}"
            raise UsageError(msg)
        tokens = self.counter.count_text(text)
        self._remember(self._texts, text, tokens)
        return tokens

    def head(self, text: str, max_tokens: int, total: int | None = None) -> str:
        """`head_within` of ``text`` with this cache's counter, kept by the text and the budget:
        a what-if replays config after config, and a result cut to the same limit in each (the
        tool-result limit a trigger move leaves as it was) is cut once. ``total`` is the text's
        count when the caller knows it (not tokenized again)."""
        _check_head(text, max_tokens, total)
        key = (text, max_tokens)
        head = self._heads.get(key)
        if head is None:
            head = head_within(text, max_tokens, self.counter.count_text, total)
            # Few, long texts: a small table, cleared whole like the others.
            if len(self._heads) >= _MAX_HEADS:
                self._heads.clear()
            self._heads[key] = head
        return head

    def block(self, block: Any) -> int:
        """Tokens of one content block."""
        key = getattr(block, "content_hash", None)
        if not isinstance(key, str):  # (a class's is its property, not a hash)
            raise _not_counted(block, "a content block (TextBlock, ToolUseBlock, ...)")
        cached = self._blocks.get(key)
        if cached is not None:
            self.hits += 1
            return cached
        tokens = self._count_block(block)
        self.counted_blocks += 1
        self._remember(self._blocks, key, tokens)
        return tokens

    def message(self, message: UserMessage | AssistantMessage) -> int:
        """Tokens of a whole message, framing included."""
        key = getattr(message, "content_hash", None)
        if not isinstance(key, str):  # (a class's is its property, not a hash)
            raise _not_counted(message, _A_MESSAGE)
        cached = self._messages.get(key)
        if cached is not None:
            self.hits += 1
            return cached
        tokens = MESSAGE_OVERHEAD + sum(self.block(b) for b in message.content)
        self._remember(self._messages, key, tokens)
        return tokens

    def messages(self, messages: Iterable[UserMessage | AssistantMessage]) -> int:
        """Tokens of several messages."""
        # `message` inlined for the messages already counted (a compaction sums its kept tail
        # several times): the same counts and hits, without a call per message.
        table = self._messages
        total = hits = 0
        for message in _iterable(messages):
            try:
                cached = table.get(message.content_hash)
            except AttributeError:
                raise _not_counted(message, _A_MESSAGE) from None
            if cached is None:
                total += self.message(message)
            else:
                hits += 1
                total += cached
        self.hits += hits
        return total

    def message_counts(self, messages: Iterable[UserMessage | AssistantMessage]) -> list[int]:
        """Each message's tokens, in order (what `message` gives for each); when one is not
        counted yet, those not counted are counted first, in one batch (`count_ahead`)."""
        given = tuple(_iterable(messages))
        table, counts = self._messages, []
        for message in given:
            # The common call of a replay's step: its messages were counted ahead, a look-up
            # each (exactly ctxlab's two types, as `_all_known` asks: else the checked path).
            tokens = table.get(message.content_hash) if type(message) in _MESSAGE_TYPES else None
            if tokens is None:
                self.count_ahead(given)
                return [self.message(m) for m in given]
            counts.append(tokens)
        self.hits += len(counts)
        return counts

    def _count_block(self, block: Any) -> int:
        fixed, texts = block_parts(block)
        count = self.counter.count_text
        return fixed + sum(count(t) for t in texts)

    def count_ahead(self, messages: Iterable[UserMessage | AssistantMessage]) -> int:
        """Count every block of ``messages`` not counted yet, in one batch (the counter's
        ``count_many`` when it has one; the store's counts first when there is one), so that
        the steps that follow find them counted. Returns how many blocks were tokenized."""
        if type(messages) is tuple and _all_known(messages, self._messages):
            # The common call of a replay's step: its messages were counted ahead (a look-up
            # each, not the checks and batches below: the same count, nothing tokenized).
            return 0
        pending: dict[str, tuple[int, tuple[str, ...]]] = {}  # block hash -> its parts
        given = tuple(_iterable(messages))
        for message in given:
            if not isinstance(message, UserMessage | AssistantMessage):
                raise _not_counted(message, _A_MESSAGE)
        fresh = [m for m in given if m.content_hash not in self._messages]
        for message in fresh:
            for block in message.content:
                key = block.content_hash
                if key not in self._blocks and key not in pending:
                    pending[key] = block_parts(block)
        if pending and self.store is not None:
            try:
                stored = self.store.get_many(self.store_namespace, list(pending))
            except CountStoreError as exc:
                self.store_problem, self.store = str(exc), None
                stored = {}
            for key, tokens in stored.items():
                self._remember(self._blocks, key, tokens)
                del pending[key]
        counted = self._count_pending(pending)
        # The messages too: a step that meets them again checks one hash, not their blocks.
        self._remember_messages(fresh)
        return counted

    def _remember_messages(self, fresh: list[UserMessage | AssistantMessage]) -> None:
        # `message` for messages whose blocks are all counted now, inlined (a call per
        # message and per block was a tenth of a replay's counting): the same counts and hits.
        blocks, messages = self._blocks, self._messages
        hits = 0
        for message in fresh:
            if message.content_hash in messages:  # a repeated message: `message` would hit
                hits += 1
                continue
            try:  # (a list summed, not a generator: a frame less per message of a session)
                tokens = MESSAGE_OVERHEAD + sum([blocks[b.content_hash] for b in message.content])
            except KeyError:  # the bounded table was cleared meanwhile: counted one by one
                self.message(message)
                continue
            hits += len(message.content)
            self._remember(messages, message.content_hash, tokens)
        self.hits += hits

    def _count_pending(self, pending: dict[str, tuple[int, tuple[str, ...]]]) -> int:
        if not pending:
            return 0
        texts = [text for _, parts in pending.values() for text in parts]
        many = getattr(self.counter, "count_many", None)
        counts = list(many(texts) if many is not None else map(self.counter.count_text, texts))
        counted: dict[str, int] = {}
        at = 0
        for key, (fixed, parts) in pending.items():
            # Most blocks have one text: its count is taken without slicing the list.
            width = len(parts)
            if width == 1:
                counted[key] = fixed + counts[at]
            else:
                counted[key] = fixed + sum(counts[at : at + width])
            at += width
        for key, tokens in counted.items():
            self._remember(self._blocks, key, tokens)
        self.counted_blocks += len(counted)
        if self.store is not None and self._store_writes:
            try:
                self.store.put_many(self.store_namespace, counted)
            except CountStoreError as exc:
                self.store_problem, self._store_writes = str(exc), False
        return len(counted)

    @staticmethod
    def _remember(table: dict[Any, int], key: Any, tokens: int) -> None:
        # A bounded cache: clearing is crude but keeps memory flat in endless sessions.
        if len(table) >= _MAX_ENTRIES:
            table.clear()
        table[key] = tokens
