"""Counts made once per content across configs (issue 54, item 3: the floor falls when ids and
counts are computed once per content): `compare_configs` replays every config with one
`TokenCache`, so a message the configs share is tokenized once, not once per config — with the
same rows a replay of each config alone gives."""

from __future__ import annotations

from collections import Counter

from ctxlab import ApproximateCounter, ContextConfig, TokenCache
from ctxlab.analysis._replay import compare_configs
from tests.helpers import session


class Tally(ApproximateCounter):
    """An approximate counter that records every text it is asked to count."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: Counter[str] = Counter()

    def count_text(self, text: str) -> int:
        self.texts[text] += 1
        return super().count_text(text)


CONFIGS = {
    "default": ContextConfig(),
    "early": ContextConfig(trigger_ratio=0.5, reserve_ratio=0.2),
    "late": ContextConfig(trigger_ratio=0.9),
}


async def test_each_message_text_is_counted_once_across_configs() -> None:
    messages = session(12, output_chars=500)
    tally = Tally()
    table = await compare_configs(messages, CONFIGS, context_window=8_000, counter=tally)
    assert set(table["config"]) == set(CONFIGS)
    # Every text of the transcript's messages (the user's task, the calls' inputs, the results)
    # is tokenized once for the three configs.
    message_texts = {"line 0\n" + "x" * 500, "Fix src/app.py"}
    assert all(tally.texts[text] == 1 for text in message_texts), tally.texts.most_common(3)
    # Every result but the last (it follows the last reply: never requested), each once.
    results = [text for text in tally.texts if text.startswith("line ")]
    assert len(results) == 11 and all(tally.texts[text] == 1 for text in results)


async def test_the_shared_cache_gives_the_rows_of_each_config_alone() -> None:
    messages = session(12, output_chars=500)
    together = await compare_configs(
        messages, CONFIGS, context_window=8_000, counter=ApproximateCounter()
    )
    for name, config in CONFIGS.items():
        alone = await compare_configs(
            messages, {name: config}, context_window=8_000, counter=TokenCache(ApproximateCounter())
        )
        mine = together[together["config"] == name].reset_index(drop=True)
        assert mine.equals(alone), name
        assert (mine["total"] > 0).all()
