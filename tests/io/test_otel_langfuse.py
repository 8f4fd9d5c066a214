"""Langfuse traces: the SDK's own spans (``tests/fixtures/langfuse``: ``make_fixture.py`` traced a
tool loop with langfuse 5.2.0 and exported its spans) and the API's export of the same
observations (``GET /api/public/v2/observations``, fields of the SDK's ``ObservationV2``) load as
the same conversation, with each generation's usage on its reply."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ctxlab import load
from ctxlab.io import detect_format
from ctxlab.messages import ProviderUsage

FIXTURE = Path(__file__).parents[1] / "fixtures" / "langfuse" / "langfuse_spans.json"


def _api_export() -> dict[str, Any]:
    """The fixture's observations as the API returns them."""
    spans = json.loads(FIXTURE.read_text())
    data = []
    for span in spans:
        attrs = span["attributes"]
        observation: dict[str, Any] = {
            "id": span["context"]["span_id"],
            "traceId": span["context"]["trace_id"],
            "startTime": span["start_time"],
            "type": attrs["langfuse.observation.type"].upper(),
            "name": span["name"],
            "sessionId": attrs.get("session.id"),
        }
        for key, name in (("input", "input"), ("output", "output")):
            if f"langfuse.observation.{key}" in attrs:
                raw = attrs[f"langfuse.observation.{key}"]
                try:
                    observation[name] = json.loads(raw)
                except json.JSONDecodeError:
                    observation[name] = raw
        if "langfuse.observation.usage_details" in attrs:
            observation["usageDetails"] = json.loads(attrs["langfuse.observation.usage_details"])
        data.append(observation)
    return {"data": data, "meta": {"cursor": None}}


@pytest.mark.parametrize("shape", ["sdk spans", "api export"])
def test_a_langfuse_trace_loads_whole(shape: str) -> None:
    source: Any = FIXTURE if shape == "sdk spans" else _api_export()
    transcript = load(source)
    assert transcript.meta["source"] == "otel" and transcript.meta["requests"] == 2
    assert transcript.system == "You look up order status."
    assert [m.role for m in transcript.messages] == ["user", "assistant", "user", "assistant"]
    (call,) = transcript.messages[1].tool_uses
    assert (call.id, call.name, call.input) == ("call_7", "order_status", {"order": 1138})
    (result,) = transcript.messages[2].tool_results
    assert result.tool_use_id == "call_7" and result.text == "shipped 2026-11-28, DHL 4471"
    # Langfuse's usage keys are priced apart: the cached tokens are not in "input".
    assert transcript.usage == {1: ProviderUsage(118, 21, 64, 0), 3: ProviderUsage(231, 17, 0, 0)}


def test_the_api_export_is_recognised_as_a_trace() -> None:
    assert detect_format(_api_export()) == "otel"
    assert detect_format({"id": "t", "observations": _api_export()["data"]}) == "otel"


def test_an_openai_integrations_usage_is_openais() -> None:
    export = _api_export()
    generation = next(o for o in export["data"] if o["type"] == "GENERATION")
    generation["usageDetails"] = {
        "prompt_tokens": 182,
        "completion_tokens": 21,
        "prompt_tokens_details": {"cached_tokens": 64},
    }
    # OpenAI's prompt tokens hold the cached ones: 118 uncached.
    assert load(export).usage[1] == ProviderUsage(118, 21, 64, 0)
