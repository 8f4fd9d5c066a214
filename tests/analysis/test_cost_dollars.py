"""The prompt-cache cost model in dollars, on hand-made request sequences whose bills are worked
out by hand here (Anthropic's published rules: writes 1.25× the input price, reads 0.1×, two
breakpoints — after tools and System, and after the conversation)."""

from __future__ import annotations

import pytest

from ctxlab.analysis._cost import PRICES, costs_of_manifests, shape_of
from ctxlab.manifest import ContextManifest, ManifestItem
from ctxlab.messages import ProviderUsage

SONNET = "claude-sonnet-4-6"  # $3 input, $15 output per million tokens


def _item(name: str, placement: str, tokens: int, version: str = "1") -> ManifestItem:
    kind = {"tools": "tool_schema", "system": "system", "conversation": "message"}.get(
        placement, "runtime" if placement == "transient" else placement
    )
    return ManifestItem(name, kind, placement, tokens, f"{name}-{version}")  # type: ignore[arg-type]


def _manifest(
    items: list[ManifestItem], purpose: str = "reasoning", output: int | None = None
) -> ContextManifest:
    usage = ProviderUsage(sum(i.tokens for i in items), output) if output is not None else None
    return ContextManifest(
        request_id=f"r{len(items)}",
        purpose=purpose,  # type: ignore[arg-type]
        model=SONNET,
        estimated_input_tokens=sum(i.tokens for i in items),
        input_limit=100_000,
        counting_method="approximate",
        exact=False,
        items=tuple(items),
        transforms=(),
        validation="passed",
        provider_usage=usage,
    )


FIXED = [_item("tool/bash", "tools", 500), _item("system/prompt", "system", 700)]
FIRST = [
    *FIXED,
    _item("message/1", "conversation", 800),
    _item("message/2", "conversation", 400),
    _item("runtime/notice", "transient", 100),
    _item("source/docs", "references", 200),
]
SECOND = [
    *FIXED,
    _item("message/1", "conversation", 800),
    _item("message/2", "conversation", 400),
    _item("message/3", "conversation", 300),
    _item("runtime/notice", "transient", 100, version="2"),
    _item("source/docs", "references", 200),
]


def test_the_breakpoints_follow_system_and_the_conversation_not_the_material() -> None:
    shape = shape_of(_manifest(FIRST))
    assert shape.breakpoints == (1, 3)  # after System (1,200 tokens), after message/2 (2,400)
    assert shape.fixed == 2


def test_two_requests_cost_what_the_published_rules_say_to_the_cent() -> None:
    assert (PRICES[SONNET].cache_write, PRICES[SONNET].cache_read) == (3.75, pytest.approx(0.3))
    first, second = costs_of_manifests([_manifest(FIRST, output=50), _manifest(SECOND, output=80)])
    # First: 2,400 tokens written up to the second breakpoint, 300 (material) uncached, 50 out.
    assert (first.uncached, first.cache_write, first.cache_read) == (300, 2_400, 0)
    assert first.cost == pytest.approx((300 * 3 + 2_400 * 3.75 + 50 * 15) / 1e6)  # $0.01065
    # Second: reads the 2,400, writes the new message (300), the material again uncached.
    assert (second.uncached, second.cache_write, second.cache_read) == (300, 300, 2_400)
    assert second.cost == pytest.approx((300 * 3 + 300 * 3.75 + 2_400 * 0.3 + 80 * 15) / 1e6)
    assert first.cost + second.cost == pytest.approx(0.014595)  # $0.0146 for the two


def test_a_summary_call_is_billed_for_the_summary_it_wrote() -> None:
    summary_request = _manifest([*FIXED, _item("message/1", "conversation", 800)], "summary")
    after = _manifest(
        [*FIXED, _item("summary/1", "summary", 150), _item("message/9", "conversation", 60)]
    )
    _, call, _ = costs_of_manifests([_manifest(FIRST, output=10), summary_request, after])
    assert call.purpose == "summary" and call.output == 150
    # Its input: the cached System read (1,200 at 0.1×), the message uncached (800: the
    # conversation breakpoint of this request is past 1,024, so it is written).
    assert (call.cache_read, call.cache_write, call.uncached) == (1_200, 800, 0)
    assert call.cost == pytest.approx((1_200 * 0.3 + 800 * 3.75 + 150 * 15) / 1e6)
