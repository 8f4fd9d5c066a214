"""`TiktokenCounter`: real BPE counts with no network, from data shipped inside ctxlab.

tiktoken downloads its BPE files on first use, which fails offline. ctxlab ships the two files
gzipped, checks their SHA-256 and builds the encoding itself. (tiktoken's own loader would also
copy the file into a cache folder; reading it here avoids that.)
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import threading
from dataclasses import dataclass
from importlib import resources
from typing import Any

import tiktoken

from ctxlab.exceptions import TokenizerDataError, UsageError
from ctxlab.tokens._counter import TokenCount, not_text
from ctxlab.util._checks import sequence_of

__all__ = ["ENCODINGS", "TiktokenCounter", "load_encoding"]

_CL100K_PAT = (
    r"""'(?i:[sdmt]|ll|ve|re)|[^\r\n\p{L}\p{N}]?+\p{L}++|\p{N}{1,3}+| ?[^\s\p{L}\p{N}]++[\r\n]*+"""
    r"""|\s++$|\s*[\r\n]|\s+(?!\S)|\s"""
)
_O200K_PAT = "|".join(
    [
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?""",
        r"""\p{N}{1,3}""",
        r""" ?[^\s\p{L}\p{N}]+[\r\n/]*""",
        r"""\s*[\r\n]+""",
        r"""\s+(?!\S)""",
        r"""\s+""",
    ]
)


@dataclass(frozen=True)
class _EncodingSpec:
    sha256: str
    pat_str: str
    special_tokens: dict[str, int]


ENCODINGS: dict[str, _EncodingSpec] = {
    "cl100k_base": _EncodingSpec(
        sha256="223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
        pat_str=_CL100K_PAT,
        special_tokens={
            "<|endoftext|>": 100257,
            "<|fim_prefix|>": 100258,
            "<|fim_middle|>": 100259,
            "<|fim_suffix|>": 100260,
            "<|endofprompt|>": 100276,
        },
    ),
    "o200k_base": _EncodingSpec(
        sha256="446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
        pat_str=_O200K_PAT,
        special_tokens={"<|endoftext|>": 199999, "<|endofprompt|>": 200018},
    ),
}
"""The encodings ctxlab ships, with the SHA-256 of their BPE files."""

_loaded: dict[str, Any] = {}
_lock = threading.Lock()


def _read_ranks(name: str, spec: _EncodingSpec) -> dict[bytes, int]:
    resource = resources.files("ctxlab.tokens") / "data" / f"{name}.tiktoken.gz"
    try:
        raw = gzip.decompress(resource.read_bytes())
    except (OSError, EOFError) as exc:
        msg = f"the BPE data for {name} is missing or unreadable ({exc}); reinstall ctxlab"
        raise TokenizerDataError(msg) from exc
    digest = hashlib.sha256(raw).hexdigest()
    if digest != spec.sha256:
        msg = (
            f"the BPE data for {name} fails its checksum (sha256 {digest}, expected "
            f"{spec.sha256}); the installation is damaged: reinstall ctxlab"
        )
        raise TokenizerDataError(msg)
    ranks: dict[bytes, int] = {}
    for line in raw.splitlines():
        if line:
            token, rank = line.split()
            ranks[base64.b64decode(token)] = int(rank)
    return ranks


def load_encoding(name: str) -> Any:
    """The `tiktoken.Encoding` called ``name``, built from ctxlab's data (cached per process)."""
    spec = ENCODINGS.get(name)
    if spec is None:
        msg = f"unknown encoding {name!r}; ctxlab ships {sorted(ENCODINGS)}"
        raise UsageError(msg)
    with _lock:
        if name not in _loaded:
            _loaded[name] = tiktoken.Encoding(
                name=f"ctxlab_{name}",
                pat_str=spec.pat_str,
                mergeable_ranks=_read_ranks(name, spec),
                special_tokens=spec.special_tokens,
            )
        return _loaded[name]


class TiktokenCounter:
    """Counts tokens with a real BPE tokenizer (``cl100k_base`` by default, or ``o200k_base``).

    Works offline. For Claude models the count is a close estimate, not exact: Anthropic's
    tokenizer is not public (use the model's ``count_tokens`` for exact figures).
    """

    def __init__(self, encoding: str = "cl100k_base") -> None:
        self.encoding_name = encoding
        self._encoding = load_encoding(encoding)

    def __reduce__(self) -> tuple[type[TiktokenCounter], tuple[str]]:
        # Pickled by its encoding's name (the tokenizer object cannot be): a counter travels to
        # a Dask worker with the agent that uses it (a fork's branch), and is built again there.
        return (type(self), (self.encoding_name,))

    @property
    def method(self) -> str:
        """``tiktoken:<encoding>``."""
        return f"tiktoken:{self.encoding_name}"

    @property
    def exact(self) -> bool:
        """False: a BPE of OpenAI's, used as an estimate for other providers."""
        return False

    def count_text(self, text: str) -> int:
        """The number of BPE tokens of ``text`` (special-token text counts as plain text)."""
        if not isinstance(text, str):
            raise not_text(text)
        if not text:
            return 0
        return len(self._encoding.encode_ordinary(text))

    def count_many(self, texts: list[str]) -> list[int]:
        """Counts of several texts, tokenized on two threads (the encoder releases the GIL)."""
        texts = list(sequence_of(texts, str, "texts", "a list of texts"))
        encoded = self._encoding.encode_ordinary_batch(texts, num_threads=2)
        return [len(tokens) for tokens in encoded]

    def count(self, text: str) -> TokenCount:
        """The count with its method."""
        return TokenCount(self.count_text(text), self.method, self.exact)
