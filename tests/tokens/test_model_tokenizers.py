"""Each model's text counted with its own tokenizer where one is public offline: o200k_base for
GPT-4o/4.1/5, the o-series and the Codex models, cl100k_base for GPT-4 and GPT-3.5 (tiktoken's
own table), cl100k_base said as an approximation for Claude and Gemini. ctxlab's shipped o200k
counts what tiktoken's own o200k_base counts — built by tiktoken itself (its pattern, its
special tokens, its hash check) from the file ctxlab ships — on sample texts, generated texts
and the corpus; a loaded recording of a GPT model is counted with o200k."""

from __future__ import annotations

import dataclasses
import gzip
import hashlib
from importlib import resources
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import ApproximateCounter, ContextConfig, WhatIf, calibrate, load
from ctxlab.sources import ReplaySession
from ctxlab.tokens import (
    ENCODINGS,
    TiktokenCounter,
    counter_for,
    counting_note,
    encoding_for,
    load_encoding,
)
from tests.helpers import corpus_texts

FIXTURES = Path(__file__).parents[1] / "fixtures"
CODEX = FIXTURES / "codex" / "rollout-2026-02-10T09-00-00-019a-demo.jsonl"
CLAUDE = FIXTURES / "sessions" / "claude_code_session.jsonl"
URL = "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken"
SAMPLES = (
    "hello world",
    "The quick brown fox jumps over the lazy dog. " * 20,
    "def total(cart):\n    return sum(item.price * item.qty for item in cart)\n",
    "I'LL SAY IT AGAIN: don't, won't, y'all've, O'Neil's.",
    "Числа 1234567 и 3.14159; 東京は日本の首都です。 emoji 🙂👩‍💻 and é vs é",
    "    \n\n\t  trailing spaces   \r\n  and    runs\u00a0of\u2003space  ",
    '{"tool_use_id": "toolu_01", "content": [{"type": "text", "text": "ok"}]}',
    "<|endoftext|> <|endofprompt|> as plain text",
    "https://example.com/a/b?c=1&d=two#frag — a line — with dashes",
    "0000000000 1e10 -42 +7 12,345.67 ١٢٣",
)


@pytest.fixture(scope="module")
def tiktokens_own(tmp_path_factory: pytest.TempPathFactory) -> Any:
    """tiktoken's own o200k_base (its constructor in tiktoken_ext.openai_public), reading the
    BPE file ctxlab ships from tiktoken's cache: tiktoken checks it against its own hash."""
    import tiktoken
    import tiktoken_ext.openai_public as public

    raw = gzip.decompress(
        (resources.files("ctxlab.tokens") / "data" / "o200k_base.tiktoken.gz").read_bytes()
    )
    folder = tmp_path_factory.mktemp("tiktoken-cache")
    (folder / hashlib.sha1(URL.encode()).hexdigest()).write_bytes(raw)
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("TIKTOKEN_CACHE_DIR", str(folder))
        spec = public.o200k_base()  # reads the cache, checks the hash: no network
    return tiktoken.Encoding(**spec)


def test_the_shipped_o200k_file_is_openais() -> None:
    raw = gzip.decompress(
        (resources.files("ctxlab.tokens") / "data" / "o200k_base.tiktoken.gz").read_bytes()
    )
    digest = "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d"
    assert hashlib.sha256(raw).hexdigest() == digest == ENCODINGS["o200k_base"].sha256


def test_o200k_counts_what_tiktokens_own_o200k_counts(tiktokens_own: Any) -> None:
    ours = load_encoding("o200k_base")
    counter = TiktokenCounter("o200k_base")
    for text in SAMPLES:
        assert ours.encode_ordinary(text) == tiktokens_own.encode_ordinary(text), text
        assert counter.count_text(text) == len(tiktokens_own.encode_ordinary(text))
    # Control: another encoding counts these texts otherwise (the comparison can fail).
    cl100k = TiktokenCounter("cl100k_base")
    assert [cl100k.count_text(t) for t in SAMPLES] != [counter.count_text(t) for t in SAMPLES]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=300))
def test_o200k_counts_any_text_as_tiktoken_does(tiktokens_own: Any, text: str) -> None:
    assert load_encoding("o200k_base").encode_ordinary(text) == tiktokens_own.encode_ordinary(text)


def test_o200k_counts_the_corpus_as_tiktoken_does(tiktokens_own: Any) -> None:
    texts = corpus_texts()[:3_000]
    if not texts:
        pytest.skip("transcript corpus not found: set CTXLAB_CORPUS")
    ours = load_encoding("o200k_base")
    differing = [t for t in texts if ours.encode_ordinary(t) != tiktokens_own.encode_ordinary(t)]
    assert not differing, differing[0][:200]


@pytest.mark.parametrize(
    ("model", "encoding"),
    [
        ("gpt-4o", "o200k_base"),
        ("gpt-4o-mini-2024-07-18", "o200k_base"),
        ("openai/gpt-4.1", "o200k_base"),
        ("gpt-5", "o200k_base"),
        ("gpt-5-codex", "o200k_base"),
        ("gpt-5.1-codex-max", "o200k_base"),
        ("gpt-5.6-sol", "o200k_base"),
        ("codex-mini-latest", "o200k_base"),
        ("o3", "o200k_base"),
        ("o4-mini", "o200k_base"),
        ("gpt-4", "cl100k_base"),
        ("gpt-4-turbo", "cl100k_base"),
        ("gpt-3.5-turbo", "cl100k_base"),
        ("claude-sonnet-4-5", None),
        ("gemini-2.5-pro", None),
        ("gpt-6-sol", None),  # an encoding tiktoken does not name
        ("my-llm", None),
    ],
)
def test_each_model_has_its_own_public_encoding_or_none(model: str, encoding: str | None) -> None:
    assert encoding_for(model) == encoding
    assert counter_for(model).method.endswith(":" + (encoding or "cl100k_base"))


def test_the_counts_say_whether_they_are_the_models_own_or_an_approximation() -> None:
    assert counting_note("gpt-5-codex", "tiktoken:o200k_base") == (
        "tokens counted with o200k_base, gpt-5-codex's own tokenizer (the text's counts exact)"
    )
    # The encoding is named, not the engine (tiktoken's and toktok-rs's counts are the same).
    for engine in ("tiktoken", "toktok"):
        assert counting_note("claude-opus-4-6", f"{engine}:cl100k_base").startswith(
            "tokens counted with cl100k_base, an approximation: Anthropic publishes no "
            "offline tokenizer for claude-opus-4-6"
        )
    assert "Google publishes no offline tokenizer" in counting_note("gemini-3-pro", "x:cl100k_base")
    assert counting_note("gpt-4o", "approximate:chars/4") == (
        "tokens counted with approximate:chars/4, not gpt-4o's own o200k_base: an approximation"
    )


def test_a_loaded_gpt_recording_is_counted_with_o200k() -> None:
    transcript = load(CODEX)
    assert transcript.meta["models"] == ["gpt-5-codex"]
    what = WhatIf(transcript, {"c": ContextConfig()}, context_window=200_000)
    assert what.cache.method.endswith(":o200k_base")
    replay = ReplaySession(transcript, context_window=200_000)
    assert replay.token_cache.method.endswith(":o200k_base")
    # Control: a Claude recording is counted with cl100k_base, said as an approximation.
    claude = WhatIf(load(CLAUDE), {"c": ContextConfig()}, context_window=200_000)
    assert claude.cache.method.endswith(":cl100k_base")
    # A counter passed is used as given.
    given_counter = WhatIf(
        transcript, {"c": ContextConfig()}, context_window=200_000, counter=ApproximateCounter()
    )
    assert given_counter.cache.method == "approximate:chars/4"


async def test_a_gpt_recordings_what_if_says_its_counts_are_its_own() -> None:
    what = WhatIf(load(CODEX), {"c": ContextConfig()}, context_window=200_000)
    await what.run()
    manifest = what.runs["c"].manifests[0]
    assert manifest.counting_method.endswith(":o200k_base")
    assert what.table().attrs["counting"].startswith("tokens counted with o200k_base, gpt-5-codex")


def test_calibration_counts_a_gpt_recording_with_o200k() -> None:
    transcript = load(CODEX)
    assert transcript.usage
    own = calibrate(transcript)
    as_o200k = calibrate(transcript, TiktokenCounter("o200k_base"))
    as_cl100k = calibrate(transcript, TiktokenCounter("cl100k_base"))
    assert own.rows == as_o200k.rows
    assert own.rows != as_cl100k.rows  # control: the encoding changes the estimates


def test_a_recording_naming_another_model_is_counted_with_that_models_encoding() -> None:
    transcript = load(CODEX)
    older = dataclasses.replace(transcript, meta={**transcript.meta, "models": ["gpt-4"]})
    assert WhatIf(older, {"c": ContextConfig()}, context_window=8_000).cache.method.endswith(
        ":cl100k_base"
    )
