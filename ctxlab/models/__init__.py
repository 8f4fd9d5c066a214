"""Models: the `Model` base, `AnthropicModel`, the offline `DemoModel`, and test models."""

from ctxlab.models._anthropic import CONTEXT_WINDOWS, AnthropicModel
from ctxlab.models._base import (
    Model,
    ModelResponse,
    RequestPurpose,
    parse_summary_json,
    summary_instruction,
)
from ctxlab.models._demo import DemoModel
from ctxlab.models._function import FunctionModel, RequestInfo, ScriptedModel, tool_call

__all__ = [
    "CONTEXT_WINDOWS",
    "AnthropicModel",
    "DemoModel",
    "FunctionModel",
    "Model",
    "ModelResponse",
    "RequestInfo",
    "RequestPurpose",
    "ScriptedModel",
    "parse_summary_json",
    "summary_instruction",
    "tool_call",
]
