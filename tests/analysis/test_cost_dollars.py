"""The prompt-cache cost model in dollars, on hand-made request sequences whose bills are worked
out by hand here (Anthropic's published rules: writes 1.25× the input price, reads 0.1×, two
breakpoints — after tools and System, and after the conversation)."""

from __future__ import annotations

import pytest

from ctxlab.analysis._cost import PRICES, costs_of_manifests, shape_of
from ctxlab.manifest import ContextManifest, ManifestItem
from ctxlab.messages import ProviderUsage
from tests.helpers import manifest_of

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
    return manifest_of(
        items, request_id=f"r{len(items)}", purpose=purpose, model=SONNET, provider_usage=usage
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


def _openai(items: list[ManifestItem], model: str, output: int = 0) -> ContextManifest:
    manifest = _manifest(items, output=output)
    return ContextManifest(**{**manifest.__dict__, "model": model})


def test_tools_come_before_system_in_the_provider_order_whatever_the_manifest_order() -> None:
    shape = shape_of(_manifest([FIXED[1], FIXED[0], *FIRST[2:]]))
    assert shape.keys[:2] == ("tool/bash#tool/bash-1", "system/prompt#system/prompt-1")
    assert shape.tokens[:2] == (500, 700)


def test_a_breakpoint_at_exactly_the_minimum_length_is_cached() -> None:
    from ctxlab.analysis._cost import CacheRules, request_costs

    items = [_item("tool/t", "tools", 324), _item("system/s", "system", 700)]  # 1,024 exactly
    shapes = [shape_of(_manifest([*items, _item("message/a", "conversation", 10)]))] * 2
    first, second = request_costs(shapes, PRICES[SONNET], CacheRules.anthropic())
    assert first.cache_write == 1_034 and second.cache_read == 1_034
    # One token short of the minimum: nothing is cached at the first breakpoint.
    short = [_item("tool/t", "tools", 323), _item("system/s", "system", 700)]
    shapes = [shape_of(_manifest([*short, _item("message/a", "conversation", 10)]))] * 2
    first, second = request_costs(shapes, PRICES[SONNET], CacheRules.anthropic(min_tokens=2_048))
    assert (first.cache_write, second.cache_read, second.uncached) == (0, 0, 1_033)


def test_openai_models_are_priced_with_openais_automatic_cache() -> None:
    for model in ("gpt-4o", "o3-mini", "o1-preview", "o4-mini"):
        first, second = costs_of_manifests(
            [_openai(FIRST, model, output=10), _openai(SECOND, model, output=10)]
        )
        # No write premium; the second reads the longest earlier prefix, in 128-token steps:
        # the first request's whole prefix up to the changed notice (2,400 → 2,304).
        assert first.cache_write == 0 and first.cache_read == 0
        assert second.cache_read == 2_304, model
    first, second = costs_of_manifests([_openai(FIRST, "gpt-4o"), _openai(SECOND, "gpt-4o")])
    assert second.cost == pytest.approx(((3_000 - 2_304) * 2.5 + 2_304 * 1.25) / 1e6)


def test_without_a_cache_every_input_token_is_billed_at_the_input_price() -> None:
    from ctxlab.analysis._cost import CacheRules

    costs = costs_of_manifests(
        [_manifest(FIRST, output=50), _manifest(SECOND, output=80)], rules=CacheRules.none()
    )
    assert [(c.uncached, c.cache_write, c.cache_read) for c in costs] == [
        (2_700, 0, 0),
        (3_000, 0, 0),
    ]
    assert sum(c.cost for c in costs) == pytest.approx((5_700 * 3 + 130 * 15) / 1e6)


def test_outputs_come_from_the_usage_and_a_trailing_summary_call_bills_nothing() -> None:
    reasoning_without_usage = _manifest(FIRST)
    summary_with_usage = _manifest(FIXED, "summary", output=222)
    last_summary = _manifest(FIXED, "summary")
    costs = costs_of_manifests([reasoning_without_usage, summary_with_usage, last_summary])
    assert [c.output for c in costs] == [0, 222, 0]


def test_a_request_never_sent_costs_nothing_and_caches_nothing() -> None:
    """A summary request over its limit is refused before sending (its manifest says
    ``budget_exceeded``): one zero cost in its place, and the next request reads only what
    was sent before it."""
    refused = ContextManifest(
        **{**_manifest(SECOND, "summary").__dict__, "validation": "budget_exceeded"}
    )
    _, never, second = costs_of_manifests(
        [_manifest(FIRST, output=50), refused, _manifest(SECOND, output=80)]
    )
    assert (never.uncached, never.cache_write, never.cache_read, never.cost) == (0, 0, 0, 0.0)
    assert never.purpose == "summary"
    assert (second.cache_read, second.cache_write) == (2_400, 300)
