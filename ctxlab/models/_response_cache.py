"""`ResponseCache`: a provider's replies kept on disk, keyed by what was sent, so that running a
notebook again asks the provider nothing and costs nothing.

The key is the SHA-256 of what goes on the wire that can change the reply: the API spoken
(``anthropic.messages``, ``openai.chat``), the server (``base_url``), the request body with every
parameter (model, messages, System, tools, ``max_tokens``, ``temperature``, beta headers, ...),
and the cache scope (`cache_scope`) — not the API key, a timeout, or whether the reply streams.
Inspect's model cache (``inspect_ai/model/_cache.py``) keys the same way (the generate config
less retries and timeouts, the messages, tools, ``base_url``) and scopes the key by epoch so
that repeated runs of one sample are not one run replayed; `cache_scope` plays that part here:
the runs of a fork each in their own scope stay independent samples of the model, and each one
is replayed on the next run of the notebook.

An entry is one JSON file, ``<folder>/<key[:2]>/<key>.json``, written whole to a temporary name
and renamed (two runs writing the same entry leave one of the two whole replies, never a mix).
An entry that cannot be read (cut, edited, from another version) is a miss with a warning, and
is written again by the reply that follows; an expired one is a miss and is removed.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import hashlib
import json
import os
import re
import time
import warnings
from collections.abc import Iterator, Mapping
from datetime import timedelta
from pathlib import Path
from typing import Any

from ctxlab.exceptions import CacheNotWritten, CtxlabWarning, UsageError, WriteError
from ctxlab.manifest import Transform
from ctxlab.messages import AssistantMessage, ProviderUsage
from ctxlab.models._base import ModelResponse
from ctxlab.util._checks import shown
from ctxlab.util._files import write_atomic
from ctxlab.util._path_args import path_argument

__all__ = ["ResponseCache", "cache_scope"]

_FORMAT = "ctxlab.response-cache/1"
"""What an entry says it is: an entry of another format is a miss."""
_SECRET_HEADERS = frozenset({"authorization", "x-api-key", "api-key", "openai-organization"})
"""Headers that say who asks, not what: never part of the key (nor written to disk)."""
_NOT_THE_REQUEST = frozenset({"timeout", "stream", "stream_options", "max_retries"})
"""Keywords that change how the reply comes, not what it says."""

_KEY = re.compile(r"[0-9a-f]{64}")
"""A key as `ResponseCache.key` makes it: nothing else names a file (no ``..``, no ``/``)."""

_scope: contextvars.ContextVar[str] = contextvars.ContextVar("ctxlab_cache_scope", default="")


def cache_scope(name: str) -> contextlib.AbstractContextManager[None]:
    """Requests sent inside ``with cache_scope(name):`` are cached apart from the same requests
    sent in another scope: run 2 of a fork does not replay run 1's replies (it is another
    sample of the model), and is replayed itself by run 2 of the next session. Scopes nest
    (``"b/run 2"``); the scope holds in the tasks the block starts (a context variable)."""
    if not isinstance(name, str):
        msg = f"a cache scope is a name (text), got {shown(name)}"
        raise UsageError(msg)
    return _scoped(name)


@contextlib.contextmanager
def _scoped(name: str) -> Iterator[None]:
    outer = _scope.get()
    token = _scope.set(f"{outer}/{name}" if outer else name)
    try:
        yield
    finally:
        _scope.reset(token)


class ResponseCache:
    """Replies of a provider kept in ``folder``, reused for the same request.

    Args:
        folder: Where the entries go (made when missing).
        expiry: How long an entry serves: seconds or a `datetime.timedelta`; None (the
            default) keeps entries until they are deleted (`clear`).

    Pass it to a provider model (``AnthropicModel(..., cache=ResponseCache("cache"))``). A
    reply served from it says so (`ModelResponse.from_cache`) and keeps the usage the provider
    reported the first time: what the call would cost, though nothing was spent. ``hits``,
    ``misses`` and ``unreadable`` count this object's lookups.
    """

    def __init__(self, folder: str | os.PathLike[str], *, expiry: float | timedelta | None = None):
        self.folder = path_argument(folder, "folder", what="the response cache")
        if self.folder.exists() and not self.folder.is_dir():
            msg = f"the response cache's folder {str(self.folder)!r} is a file; name a folder"
            raise UsageError(msg)
        self.expiry = _seconds(expiry)
        """Seconds an entry serves (None: no end)."""
        self.hits = 0
        self.misses = 0
        self.unreadable = 0

    def __repr__(self) -> str:
        return f"ResponseCache({str(self.folder)!r}, expiry={self.expiry!r})"

    @staticmethod
    def key(api: str, base_url: str, body: Mapping[str, Any]) -> str:
        """The key of a request: ``api`` spoken to ``base_url`` with ``body`` (the SDK call's
        keyword arguments), in the current `cache_scope`."""
        if not isinstance(body, Mapping):
            msg = f"a request body is a mapping of the SDK call's keywords, got {shown(body)}"
            raise UsageError(msg)
        kept = {k: v for k, v in body.items() if k not in _NOT_THE_REQUEST}
        headers = kept.get("extra_headers")
        if isinstance(headers, Mapping):
            kept["extra_headers"] = {
                str(k): v for k, v in headers.items() if str(k).lower() not in _SECRET_HEADERS
            }
        what = {"api": api, "base_url": base_url, "scope": _scope.get(), "body": kept}
        # Sorted keys: a dict built in another order is the same request. A value JSON has no
        # form for (an SDK object among the parameters) is keyed by its text.
        try:
            text = json.dumps(what, sort_keys=True, separators=(",", ":"), default=str)
        except (ValueError, TypeError, RecursionError) as exc:  # a cycle, keys of mixed types
            msg = f"the request cannot be keyed: {type(exc).__name__}: {exc}"
            raise UsageError(msg) from exc
        return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()

    def path(self, key: str) -> Path:
        """The file of the entry ``key`` (a key `key` made: 64 hexadecimal digits)."""
        if not isinstance(key, str) or not _KEY.fullmatch(key):
            msg = f"a cache key is 64 hexadecimal digits (ResponseCache.key), got {shown(key)}"
            raise UsageError(msg)
        return self.folder / key[:2] / f"{key}.json"

    def get(self, key: str) -> ModelResponse | None:
        """The reply cached under ``key`` (``from_cache`` set), or None."""
        path = self.path(key)
        try:
            text = path.read_text(encoding="utf-8")
        except (FileNotFoundError, NotADirectoryError):  # (the write that follows says why)
            self.misses += 1
            return None
        except (OSError, UnicodeError) as exc:
            self._unreadable(path, exc)
            return None
        try:
            entry = json.loads(text)
            if not isinstance(entry, dict) or entry.get("format") != _FORMAT:
                msg = f"not a {_FORMAT} entry"
                raise ValueError(msg)
            expires = entry.get("expires")
            if expires is not None and time.time() >= float(expires):
                path.unlink(missing_ok=True)
                self.misses += 1
                return None
            response = _response_from(entry["response"])
        except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as exc:
            self._unreadable(path, exc)
            return None
        self.hits += 1
        return response

    def put(self, key: str, response: ModelResponse) -> None:
        """Keep ``response`` under ``key``. A cache that cannot be written warns
        (`CacheNotWritten`) and the reply is returned all the same."""
        if not isinstance(response, ModelResponse):
            msg = f"a response cache keeps ModelResponses, got {shown(response)}"
            raise UsageError(msg)
        path = self.path(key)
        entry = {
            "format": _FORMAT,
            "written": time.time(),
            "expires": None if self.expiry is None else time.time() + self.expiry,
            "response": _response_to(response),
        }
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(path, json.dumps(entry, ensure_ascii=False), what="cache entry")
        except (OSError, WriteError) as exc:
            warnings.warn(
                f"the response cache could not keep a reply ({path}): {exc}",
                CacheNotWritten,
                stacklevel=3,
            )

    def clear(self) -> int:
        """Delete every entry; how many there were."""
        removed = 0
        for entry in self.folder.glob("??/*.json"):
            entry.unlink(missing_ok=True)
            removed += 1
        return removed

    def _unreadable(self, path: Path, exc: BaseException) -> None:
        self.unreadable += 1
        self.misses += 1
        warnings.warn(
            f"the response cache entry {path} cannot be read ({type(exc).__name__}: {exc}); "
            "the request is sent, and its reply replaces the entry",
            CtxlabWarning,
            stacklevel=3,
        )


def _seconds(expiry: float | timedelta | None) -> float | None:
    if expiry is None:
        return None
    if isinstance(expiry, timedelta):
        expiry = expiry.total_seconds()
    # At most about 3,000 years: a larger number is no time a cache is kept (nor a float).
    if isinstance(expiry, bool) or not isinstance(expiry, int | float) or not 0 < expiry < 1e11:
        msg = (
            f"expiry must be a number of seconds above 0, a timedelta, or None, got {shown(expiry)}"
        )
        raise UsageError(msg)
    return float(expiry)


def _response_to(response: ModelResponse) -> dict[str, Any]:
    return {
        "message": response.message.model_dump(mode="json"),
        "stop_reason": response.stop_reason,
        "usage": dataclasses.asdict(response.usage) if response.usage is not None else None,
        "model": response.model,
        "provider_transforms": [dataclasses.asdict(t) for t in response.provider_transforms],
        "applied_edits": [dict(e) for e in response.applied_edits],
    }


def _response_from(data: Mapping[str, Any]) -> ModelResponse:
    usage = data["usage"]
    return ModelResponse(
        message=AssistantMessage.model_validate(data["message"]),
        stop_reason=str(data["stop_reason"]),
        usage=ProviderUsage(**usage) if usage is not None else None,
        model=str(data["model"]),
        provider_transforms=tuple(Transform(**t) for t in data["provider_transforms"]),
        applied_edits=tuple(dict(e) for e in data["applied_edits"]),
        from_cache=True,
    )
