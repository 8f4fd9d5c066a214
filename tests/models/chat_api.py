"""A local HTTP server that speaks the OpenAI Chat Completions API, for `OpenAIModel`'s tests.

It listens on 127.0.0.1, answers ``POST /v1/chat/completions`` from a script — completion
bodies or errors — as JSON, or as an SSE stream of chunks when the request asks for one (usage
in a last chunk, as ``stream_options.include_usage`` asks). Every request body is recorded.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from tests.models._local_server import JSONHandler, LocalServer


def completion(
    content: str | None = None,
    tool_calls: list[tuple[str, str, dict[str, Any]]] = (),  # type: ignore[assignment]
    *,
    prompt_tokens: int = 100,
    completion_tokens: int = 10,
    cached_tokens: int = 0,
) -> dict[str, Any]:
    """A Chat Completions response body; ``tool_calls`` are (id, name, arguments)."""
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if tool_calls:
        message["tool_calls"] = [
            {"id": i, "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
            for i, n, a in tool_calls
        ]
    return {
        "id": "chatcmpl-local",
        "object": "chat.completion",
        "created": 0,
        "model": "local-model",
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if tool_calls else "stop",
            }
        ],
        "usage": {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
            "prompt_tokens_details": {"cached_tokens": cached_tokens},
        },
    }


def order_status_script() -> list[dict[str, Any]]:
    """The one tool loop the trace-library fixtures record (``order_status`` of order 1138, then
    the answer), with its usage: one script, so their conversations and bills can be compared."""
    return [
        completion(
            "Let me check.",
            [("call_7", "order_status", {"order": 1138})],
            prompt_tokens=182,
            completion_tokens=21,
            cached_tokens=64,
        ),
        completion(
            "Order 1138 shipped on 28 November (DHL 4471).", prompt_tokens=231, completion_tokens=17
        ),
    ]


def error(status: int, code: str, text: str) -> tuple[int, dict[str, Any]]:
    """An API error: HTTP status and body."""
    return status, {"error": {"message": text, "type": "invalid_request_error", "code": code}}


def _chunks(body: dict[str, Any]) -> Iterator[bytes]:
    def chunk(delta: dict[str, Any], finish: str | None = None, usage: Any = None) -> bytes:
        data = {
            "id": body["id"],
            "object": "chat.completion.chunk",
            "created": 0,
            "model": body["model"],
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]
            if delta is not None
            else [],
            "usage": usage,
        }
        return f"data: {json.dumps(data)}\n\n".encode()

    message = body["choices"][0]["message"]
    yield chunk({"role": "assistant", "content": ""})
    text = message.get("content") or ""
    for start in range(0, len(text), 5):
        yield chunk({"content": text[start : start + 5]})
    for index, call in enumerate(message.get("tool_calls") or ()):
        arguments = call["function"]["arguments"]
        yield chunk(
            {
                "tool_calls": [
                    {
                        "index": index,
                        "id": call["id"],
                        "type": "function",
                        "function": {"name": call["function"]["name"], "arguments": arguments[:3]},
                    }
                ]
            }
        )
        yield chunk({"tool_calls": [{"index": index, "function": {"arguments": arguments[3:]}}]})
    yield chunk({}, body["choices"][0]["finish_reason"])
    yield chunk(None, usage=body["usage"])  # type: ignore[arg-type]
    yield b"data: [DONE]\n\n"


class ChatAPI(LocalServer):
    """The server; use as a context manager. ``script`` holds the answers."""

    def __init__(
        self,
        script: list[Any],
        responder: Callable[[dict[str, Any]], Any] | None = None,
    ) -> None:
        self.script = list(script)
        self.responder = responder
        """Answers from the request body instead of the script (a model)."""
        self.requests: list[dict[str, Any]] = []
        api = self

        class Handler(JSONHandler):
            def do_POST(self) -> None:
                body = self.read_json()
                api.requests.append(body)
                if not self.path.endswith("/chat/completions") or not (api.script or api.responder):
                    self.send_json(*error(404, "not_found", f"no answer for {self.path}"))
                    return
                answer = api.responder(body) if api.responder else api.script.pop(0)
                self.answer(answer, body, _chunks)

        super().__init__(Handler, "/v1")
