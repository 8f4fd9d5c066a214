"""Models: the `Model` base, `AnthropicModel` and `OpenAIModel` (with their retries,
`RetryPolicy`, and their `ResponseCache`) and the wire formats, the offline
`DemoModel`, and test models (`ctxlab.fork.RecordedModel`: a recording answering a fork of itself). A provider is one adapter module plus its format module."""

import warnings as _warnings
from typing import Any as _Any

from ctxlab.manifest import Purpose as _Purpose
from ctxlab.models._anthropic import CONTEXT_WINDOWS, AnthropicModel
from ctxlab.models._anthropic_format import (
    messages_from_anthropic,
    messages_to_anthropic,
    request_to_anthropic,
    to_anthropic_block,
    tool_to_anthropic,
)
from ctxlab.models._base import (
    Model,
    ModelResponse,
    cached_summary_request,
    parse_summary_json,
    summary_instruction,
    summary_model_request,
    transcript_text,
)
from ctxlab.models._demo import DemoModel
from ctxlab.models._function import FunctionModel, RequestInfo, ScriptedModel, tool_call
from ctxlab.models._memoryless import MemorylessModel
from ctxlab.models._openai import OpenAIModel
from ctxlab.models._openai_format import assistant_from_openai, request_to_openai, tool_to_openai
from ctxlab.models._response_cache import ResponseCache, cache_scope
from ctxlab.models._retry import RetryPolicy, RetryWait
from ctxlab.models._summary_call import SummaryCall, summary_call, summary_manifest

__all__ = [
    "CONTEXT_WINDOWS",
    "AnthropicModel",
    "DemoModel",
    "FunctionModel",
    "MemorylessModel",
    "Model",
    "ModelResponse",
    "OpenAIModel",
    "RequestInfo",
    "ResponseCache",
    "RetryPolicy",
    "RetryWait",
    "ScriptedModel",
    "SummaryCall",
    "assistant_from_openai",
    "cache_scope",
    "cached_summary_request",
    "messages_from_anthropic",
    "messages_to_anthropic",
    "parse_summary_json",
    "request_to_anthropic",
    "request_to_openai",
    "summary_call",
    "summary_instruction",
    "summary_manifest",
    "summary_model_request",
    "to_anthropic_block",
    "tool_call",
    "tool_to_anthropic",
    "tool_to_openai",
    "transcript_text",
]


def __getattr__(name: str) -> _Any:
    # One name per concept: why a model is called is the request's `Purpose`.
    if name == "RequestPurpose":
        _warnings.warn(
            "ctxlab.models.RequestPurpose is now ctxlab.manifest.Purpose (the same type)",
            DeprecationWarning,
            stacklevel=2,
        )
        return _Purpose
    msg = f"module 'ctxlab.models' has no attribute {name!r}"
    raise AttributeError(msg)
