"""`ToktokCounter`: the same counts as `TiktokenCounter`, about ten times faster, when the optional
``toktok-rs`` package is installed (``pip install 'ctxlab[fast]'``); `default_counter` picks it.

toktok-rs (MIT, 0.3.x, abi3 wheels for Python ≥ 3.11) is a Rust BPE whose vocabularies are compiled
into its extension module: no data files, nothing downloaded. Its counts are proven identical to
tiktoken's on every text of the corpus for both encodings (``tests/tokens/test_fast_counter.py``);
ctxlab uses it only for the encodings it ships itself (`ENCODINGS`), and tiktoken everywhere else.
"""

from __future__ import annotations

import os
import threading
from typing import Any

from ctxlab.exceptions import UsageError
from ctxlab.tokens._counter import TokenCounter, encodable, not_text
from ctxlab.tokens._tiktoken import ENCODINGS, TiktokenCounter
from ctxlab.util._checks import sequence_of

__all__ = [
    "BATCH_THREADS_FROM",
    "ToktokCounter",
    "default_counter",
    "preload",
    "toktok_available",
]

BATCH_THREADS_FROM = 1_000_000
"""Characters from which a batch is counted in one call on two threads: below it, the call's own
cost (25-200 µs, its thread pool) exceeds what the threads save over counting text by text."""


# One construction per encoding, whichever thread asks first (`preload`'s or a counter's); the
# other waits for it rather than building a second copy.
_LOCKS = {encoding: threading.Lock() for encoding in ENCODINGS}
_PRELOADING: set[str] = set()


def _after_fork() -> None:
    # A fork while a preload held a lock would leave the child's copy locked for ever: the
    # child starts with fresh locks (and builds the vocabulary itself if the parent had not).
    global _LOCKS
    _LOCKS = {encoding: threading.Lock() for encoding in ENCODINGS}
    _PRELOADING.clear()


os.register_at_fork(after_in_child=_after_fork)


def _tokenizer(encoding: str) -> Any:
    import toktok

    # ``batch_count`` is the package's supported API, but each call costs 25-200 µs (its thread
    # pool) and ctxlab counts block by block: the cached tokenizer's own ``count`` is used
    # (0.2 µs for a short text).
    # Its loader is documented for "anyone who knowingly wants the full surface"; the pinned
    # range (<0.4) and the identity test guard it.
    with _LOCKS[encoding]:
        return toktok._encoding(encoding)


def toktok_available() -> bool:
    """Whether the optional fast counter can be used here."""
    try:
        import toktok  # noqa: F401
    except ImportError:
        return False
    return True


class ToktokCounter(TiktokenCounter):
    """BPE counts identical to `TiktokenCounter`'s (``cl100k_base`` or ``o200k_base``), by
    toktok-rs: a `TiktokenCounter` with a faster engine. Raises `UsageError` when the package is
    not installed."""

    def __init__(self, encoding: str = "cl100k_base") -> None:
        if encoding not in ENCODINGS:
            msg = f"unknown encoding {encoding!r}; ctxlab counts {sorted(ENCODINGS)}"
            raise UsageError(msg)
        try:
            self._tokenizer = _tokenizer(encoding)
        except ImportError as exc:
            msg = (
                "ToktokCounter needs the optional toktok-rs package: pip install 'ctxlab[fast]' "
                "(or use TiktokenCounter, which gives the same counts)"
            )
            raise UsageError(msg) from exc
        self.encoding_name = encoding

    @property
    def method(self) -> str:
        """``toktok:<encoding>`` (counts identical to ``tiktoken:<encoding>``)."""
        return f"toktok:{self.encoding_name}"

    def count_text(self, text: str) -> int:
        """The number of BPE tokens of ``text`` (special-token text counts as plain text; a
        lone surrogate as tiktoken counts it: as U+FFFD)."""
        if not isinstance(text, str):
            raise not_text(text)
        if not text:
            return 0
        try:
            return int(self._tokenizer.count(text))
        except UnicodeEncodeError:  # a lone surrogate (a file may hold one): no UTF-8 for it
            return int(self._tokenizer.count(encodable(text)))

    def count_many(self, texts: list[str]) -> list[int]:
        """Counts of several texts: in one call on two threads for a large batch, text by text
        for a small one (see `BATCH_THREADS_FROM`)."""
        texts = list(sequence_of(texts, str, "texts", "a list of texts"))
        if sum(map(len, texts)) >= BATCH_THREADS_FROM:
            try:
                return list(self._tokenizer.count_batch(texts, 2, False))
            except UnicodeEncodeError:  # one holds a lone surrogate: each counted alone
                pass
        return list(map(self.count_text, texts))


def preload(encoding: str = "cl100k_base") -> None:
    """Start building the fast counter's vocabulary for ``encoding`` on a background thread
    (toktok-rs builds it with the GIL released: ~150 ms and ~30 MB once per process), so that the
    first count after a session is loaded need not wait for it. `ctxlab.load` and
    `load_transcript` call it; nothing happens without toktok-rs, for an encoding it does not
    ship, or once started. A failure is left for the counter that needs the vocabulary to raise.
    """
    if encoding not in ENCODINGS or encoding in _PRELOADING or not toktok_available():
        return
    _PRELOADING.add(encoding)
    threading.Thread(
        target=_quiet_load, args=(encoding,), name=f"ctxlab-preload-{encoding}", daemon=True
    ).start()


def _quiet_load(encoding: str) -> None:
    try:
        _tokenizer(encoding)
    except Exception:
        # Nothing to say it to on a background thread: the counter that needs the vocabulary
        # builds it again and raises the error itself, where the caller sees it.
        return


def default_counter(encoding: str = "cl100k_base") -> TokenCounter:
    """The fastest exact BPE counter installed for ``encoding``: `ToktokCounter` when toktok-rs
    is there, else `TiktokenCounter` — the same counts either way; the manifest's
    ``counting_method`` says which counted."""
    if toktok_available():
        return ToktokCounter(encoding)
    return TiktokenCounter(encoding)
