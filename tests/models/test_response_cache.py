"""The response cache on disk: a second run of the same requests asks the server nothing and gets
the first run's replies, through both adapters' real SDKs against local servers."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("openai")

from ctxlab import ApproximateCounter
from ctxlab.agent import Agent
from ctxlab.exceptions import CacheNotWritten, CtxlabWarning, UsageError
from ctxlab.models import ResponseCache, cache_scope
from tests.models._local_server import with_headers
from tests.models._providers import PROVIDERS, FakeClock, Provider, ask

each_provider = pytest.mark.parametrize("provider", PROVIDERS, ids=lambda p: p.name)


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def _tool_loop(provider: Provider) -> list[dict[str, Any]]:
    if provider.name == "anthropic":
        call = {"type": "tool_use", "id": "toolu_1", "name": "add", "input": {"a": 2, "b": 3}}
        first = provider.reply([{"type": "text", "text": "Adding."}, call], input_tokens=321)
        return [first, provider.reply("The sum is 5.", output_tokens=7)]
    from tests.models.chat_api import completion

    return [
        completion("Adding.", [("call_1", "add", {"a": 2, "b": 3})], prompt_tokens=321),
        completion("The sum is 5.", completion_tokens=7),
    ]


async def _run(provider: Provider, api: Any, folder: Path, stream: bool) -> list[Any]:
    model = provider.model(api, cache=ResponseCache(folder), stream=stream)
    agent = Agent(model=model, tools=[add], counter=ApproximateCounter(), system_prompt="Brief.")
    return [e async for e in agent.stream_events("What is 2 + 3?")]


@each_provider
@pytest.mark.parametrize("stream", [False, True])
async def test_a_second_run_asks_nothing_and_gets_the_same_replies(
    provider: Provider, stream: bool, tmp_path: Path
) -> None:
    with provider.server(_tool_loop(provider)) as api:
        first = await _run(provider, api, tmp_path, stream)
        sent = len(api.requests)
        second = await _run(provider, api, tmp_path, stream)  # a new model, the same folder
    assert sent == 2 and len(api.requests) == 2  # nothing more was sent
    replies = [
        [(e.message, e.usage) for e in run if e.type == "model_response"] for run in (first, second)
    ]
    assert replies[0] == replies[1]
    assert replies[0][0][1].total_input_tokens == 321  # the usage as first reported
    # The text reaches the caller again, as it did when it streamed.
    texts = [[e.text for e in run if e.type == "text_delta"] for run in (first, second)]
    assert "".join(texts[1]) == "".join(texts[0]) == "Adding.The sum is 5."
    assert second[-1].text == "The sum is 5."


@each_provider
async def test_a_hit_says_it_came_from_the_cache(provider: Provider, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path)
    with provider.server([provider.reply("Five.")]) as api:
        model = provider.model(api, cache=cache)
        live = await model.request(ask())
        shown: list[str] = []
        again = await model.request(ask(), on_text=shown.append)
    assert (live.from_cache, again.from_cache) == (False, True)
    assert (again.message, again.usage, again.stop_reason) == (
        live.message,
        live.usage,
        live.stop_reason,
    )
    assert shown == ["Five."]
    assert (cache.hits, cache.misses) == (1, 1)


@each_provider
async def test_one_parameter_changed_is_another_request(provider: Provider, tmp_path: Path) -> None:
    script = [provider.reply("warm"), provider.reply("cold"), provider.reply("other text")]
    with provider.server(script) as api:
        warm = await provider.model(api, cache=tmp_path, temperature=1).request(ask())
        cold = await provider.model(api, cache=tmp_path, temperature=0).request(ask())
        other = await provider.model(api, cache=tmp_path, temperature=1).request(ask("2 + 4?"))
    assert len(api.requests) == 3
    assert [r.message.content[0].text for r in (warm, cold, other)] == [
        "warm",
        "cold",
        "other text",
    ]
    assert not any(r.from_cache for r in (warm, cold, other))


@each_provider
async def test_the_key_leaves_out_the_api_key_and_the_timeout(
    provider: Provider, tmp_path: Path
) -> None:
    with provider.server([provider.reply("once")]) as api:
        await provider.model(api, cache=tmp_path, api_key="first-key").request(ask())
        again = await provider.model(
            api, cache=tmp_path, api_key="another-key", timeout=30
        ).request(ask())
    assert again.from_cache and len(api.requests) == 1
    written = "".join(p.read_text() for p in tmp_path.glob("*/*.json"))
    assert "first-key" not in written


@each_provider
async def test_runs_in_other_scopes_are_other_samples(provider: Provider, tmp_path: Path) -> None:
    script = [provider.reply("run one"), provider.reply("run two")]
    with provider.server(script) as api:
        model = provider.model(api, cache=tmp_path)
        replies = []
        for run in ("1", "2", "1", "2"):
            with cache_scope(f"run {run}"):
                replies.append((await model.request(ask())).message.content[0].text)
    assert replies == ["run one", "run two", "run one", "run two"]
    assert len(api.requests) == 2


@each_provider
@pytest.mark.parametrize(
    "damage",
    ["", '{"format": "ctxlab.response-cache/1", "response": {"message": 3}', "[1, 2]", "\udcff"],
    ids=["empty", "cut", "not-an-entry", "not-utf8"],
)
async def test_a_corrupt_entry_is_a_miss_with_a_warning(
    provider: Provider, damage: str, tmp_path: Path
) -> None:
    cache = ResponseCache(tmp_path)
    with provider.server([provider.reply("first"), provider.reply("second")]) as api:
        model = provider.model(api, cache=cache)
        await model.request(ask())
        (entry,) = tmp_path.glob("*/*.json")
        entry.write_bytes(damage.encode("utf-8", "surrogateescape"))
        with pytest.warns(CtxlabWarning, match="cannot be read"):
            redone = await model.request(ask())
        healed = await model.request(ask())
    assert redone.message.content[0].text == "second" and not redone.from_cache
    assert healed.from_cache and healed.message == redone.message  # written again
    assert len(api.requests) == 2 and cache.unreadable == 1


@each_provider
async def test_an_expired_entry_is_sent_again(provider: Provider, tmp_path: Path) -> None:
    with provider.server([provider.reply("old"), provider.reply("new")]) as api:
        model = provider.model(api, cache=ResponseCache(tmp_path, expiry=60))
        await model.request(ask())
        (entry,) = tmp_path.glob("*/*.json")
        data = json.loads(entry.read_text())
        entry.write_text(json.dumps({**data, "expires": data["written"] - 1}))
        fresh = await model.request(ask())
    assert fresh.message.content[0].text == "new" and len(api.requests) == 2


async def test_a_retried_reply_is_cached_without_its_waits(tmp_path: Path) -> None:
    provider = PROVIDERS[0]
    script = [with_headers(provider.error(429), retry_after="1"), provider.reply("ok")]
    with provider.server(script) as api:
        model = provider.model(api, FakeClock(), cache=tmp_path)
        live = await model.request(ask())
        cached = await model.request(ask())
    assert len(live.retries) == 1 and cached.retries == () and cached.from_cache


async def test_a_cache_that_cannot_be_written_warns_and_answers(tmp_path: Path) -> None:
    provider = PROVIDERS[1]
    cache = ResponseCache(tmp_path)
    with provider.server([provider.reply("kept?")]) as api:
        model = provider.model(api, cache=cache)
        key = cache.key("openai.chat", str(model.client.base_url), model.payload(ask()))
        (tmp_path / key[:2]).write_text("a file where the entry's folder goes")
        with pytest.warns(CacheNotWritten):
            reply = await model.request(ask())
    assert reply.message.content[0].text == "kept?"


def test_writers_of_one_entry_leave_a_whole_one(tmp_path: Path) -> None:
    from ctxlab.messages import AssistantMessage, ProviderUsage, TextBlock
    from ctxlab.models import ModelResponse

    cache = ResponseCache(tmp_path)
    replies = [
        ModelResponse(
            AssistantMessage(content=(TextBlock(text=str(n) * 5000),)), usage=ProviderUsage(n, n)
        )
        for n in range(8)
    ]
    seen: list[Any] = []

    def write(reply: ModelResponse) -> None:
        for _ in range(20):
            cache.put("ab" + "0" * 62, reply)
            seen.append(cache.get("ab" + "0" * 62))

    threads = [threading.Thread(target=write, args=(r,)) for r in replies]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert cache.unreadable == 0
    for found in seen:
        text = found.message.content[0].text
        assert text == text[0] * 5000 and found.usage == ProviderUsage(int(text[0]), int(text[0]))


@pytest.mark.parametrize("bad", [0, -1, float("inf"), "1 day", True])
def test_an_expiry_that_is_none_is_refused(bad: Any, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="expiry"):
        ResponseCache(tmp_path, expiry=bad)


def test_a_file_is_no_cache_folder(tmp_path: Path) -> None:
    (tmp_path / "f").write_text("")
    with pytest.raises(UsageError, match="is a file"):
        ResponseCache(tmp_path / "f")
    with pytest.raises(UsageError, match="cache must be"):
        PROVIDERS[0].make(type("A", (), {"url": "http://127.0.0.1:9"})(), cache=3)


@pytest.mark.parametrize("key", ["../" * 3 + "a" * 55, "AB" + "0" * 62, "0" * 63, 7])
def test_a_key_names_no_file_outside_the_folder(key: Any, tmp_path: Path) -> None:
    cache = ResponseCache(tmp_path / "cache")
    with pytest.raises(UsageError, match="64 hexadecimal digits"):
        cache.get(key)
    assert list(tmp_path.iterdir()) == []
