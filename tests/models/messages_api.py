"""A local HTTP server that speaks the Anthropic Messages API, for the adapter's tests.

It listens on 127.0.0.1 (a free port), answers ``POST /v1/messages`` from a script — message
dicts, or errors — as JSON or as an SSE stream when the request asks for one, and answers
``POST /v1/messages/count_tokens``. Every request body is recorded.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from ctxlab.models import AnthropicModel
from tests.models._local_server import JSONHandler, LocalServer


def message(
    content: list[dict[str, Any]] | str, *, stop: str | None = None, **usage: int
) -> dict[str, Any]:
    """A Messages API response body."""
    if isinstance(content, str):
        content = [{"type": "text", "text": content}]
    has_tools = any(b["type"] == "tool_use" for b in content)
    return {
        "id": "msg_local",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": content,
        "stop_reason": stop or ("tool_use" if has_tools else "end_turn"),
        "stop_sequence": None,
        "usage": {
            "input_tokens": usage.get("input_tokens", 100),
            "output_tokens": usage.get("output_tokens", 10),
            "cache_read_input_tokens": usage.get("cache_read_input_tokens", 0),
            "cache_creation_input_tokens": usage.get("cache_creation_input_tokens", 0),
        },
    }


def error(status: int, kind: str, text: str) -> tuple[int, dict[str, Any]]:
    """An API error: HTTP status and body."""
    return status, {"type": "error", "error": {"type": kind, "message": text}}


def _sse(body: dict[str, Any]) -> Iterator[bytes]:
    def event(name: str, data: dict[str, Any]) -> bytes:
        return f"event: {name}\ndata: {json.dumps(data)}\n\n".encode()

    start = {**body, "content": [], "stop_reason": None}
    start["usage"] = {**body["usage"], "output_tokens": 1}
    yield event("message_start", {"type": "message_start", "message": start})
    for index, block in enumerate(body["content"]):
        if block["type"] == "text":
            yield event(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "text", "text": ""},
                },
            )
            words = block["text"].split(" ")
            for i, word in enumerate(words):
                piece = word if i == len(words) - 1 else word + " "
                yield event(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "text_delta", "text": piece},
                    },
                )
        elif block["type"] == "thinking":
            yield event(
                "content_block_start",
                {
                    "type": "content_block_start",
                    "index": index,
                    "content_block": {"type": "thinking", "thinking": "", "signature": ""},
                },
            )
            for delta in (
                {"type": "thinking_delta", "thinking": block["thinking"]},
                {"type": "signature_delta", "signature": block["signature"]},
            ):
                yield event(
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
        elif "input" not in block:  # redacted thinking, server tool results: whole at the start
            yield event(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": block},
            )
        else:
            empty = {**block, "input": {}}
            yield event(
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": empty},
            )
            raw = json.dumps(block["input"])
            for cut in range(0, len(raw), 7):
                yield event(
                    "content_block_delta",
                    {
                        "type": "content_block_delta",
                        "index": index,
                        "delta": {"type": "input_json_delta", "partial_json": raw[cut : cut + 7]},
                    },
                )
        yield event("content_block_stop", {"type": "content_block_stop", "index": index})
    yield event(
        "message_delta",
        {
            "type": "message_delta",
            "delta": {"stop_reason": body["stop_reason"], "stop_sequence": None},
            "usage": {"output_tokens": body["usage"]["output_tokens"]},
        },
    )
    yield event("message_stop", {"type": "message_stop"})


def sonnet(server: LocalServer | str, **options: Any) -> AnthropicModel:
    """Claude Sonnet 4.6's adapter pointed at ``server`` (or a URL of it), with a test key and
    no retries; ``options`` go to `AnthropicModel`."""
    url = server if isinstance(server, str) else server.url
    return AnthropicModel(
        "claude-sonnet-4-6", base_url=url, **{"api_key": "test-key", "max_retries": 0} | options
    )


class MessagesAPI(LocalServer):
    """The server; use as a context manager. ``script`` holds the answers to /v1/messages."""

    def __init__(
        self,
        script: list[Any] | None = None,
        responder: Callable[[dict[str, Any]], Any] | None = None,
    ) -> None:
        self.script: list[Any] = list(script or [])
        self.responder = responder
        """Answers /v1/messages from the request body instead of the script (a model)."""
        self.models: dict[str, dict[str, Any]] = {}
        self.count_factor = 1.0
        """``count_tokens`` answers a quarter of the body's characters times this."""
        """Answers of ``GET /v1/models/{id}``, by model id."""
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        api = self

        class Handler(JSONHandler):
            def do_GET(self) -> None:
                # The Models API: what the script's ``models`` say about a model, else 404.
                name = self.path.split("?")[0].rsplit("/", 1)[-1]
                if self.path.startswith("/v1/models/") and name in api.models:
                    self.send_json(200, api.models[name])
                    return
                self.send_json(*error(404, "not_found_error", f"no model {name}"))

            def do_POST(self) -> None:
                body = self.read_json()
                api.requests.append(body)
                api.headers.append({k.lower(): v for k, v in self.headers.items()})
                if self.path.startswith("/v1/messages/count_tokens"):
                    tokens = int(len(json.dumps(body)) // 4 * api.count_factor)
                    if "context_management" in body:
                        # The API counts after its edits; the request as sent is the original.
                        managed = {"original_input_tokens": tokens}
                        self.send_json(
                            200, {"input_tokens": tokens // 2, "context_management": managed}
                        )
                        return
                    self.send_json(200, {"input_tokens": tokens})
                    return
                if not self.path.startswith("/v1/messages"):
                    self.send_json(*error(404, "not_found_error", f"no route {self.path}"))
                    return
                if api.responder is not None:
                    self.answer(api.responder(body), body, _sse)
                    return
                if not api.script:
                    self.send_json(*error(500, "api_error", "the local server's script is empty"))
                    return
                self.answer(api.script.pop(0), body, _sse)

        super().__init__(Handler)
