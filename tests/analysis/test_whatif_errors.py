"""A what-if refuses an invalid config before it replays anything, naming the config (one built
without validation: ``model_construct``, ``model_copy(update=...)``); the configs already in
place are left as they were."""

from __future__ import annotations

import pytest

from ctxlab import ApproximateCounter, ContextConfig, WhatIf
from ctxlab.exceptions import UsageError
from tests.analysis.whatif_figures import logs_session

BAD = ContextConfig.model_construct(trigger_ratio=1.7)


def test_an_invalid_config_is_refused_by_name_before_any_replay() -> None:
    with pytest.raises(
        UsageError, match=r"config 'eager': the context config is invalid \(trigger_ratio"
    ):
        WhatIf(
            logs_session(),
            {"eager": BAD, "default": ContextConfig()},
            context_window=8_000,
            counter=ApproximateCounter(),
        )


async def test_setting_an_invalid_config_changes_nothing() -> None:
    what = WhatIf(
        logs_session(),
        {"default": ContextConfig()},
        context_window=8_000,
        counter=ApproximateCounter(),
    )
    await what.run()
    before = what.runs["default"]
    cost = what.table().loc["default", "cost"]
    with pytest.raises(UsageError, match=r"config 'default': the context config is invalid"):
        await what.set_config("default", BAD)
    assert what.runs["default"] is before
    assert what.table().loc["default", "cost"] == cost
    # Control: a valid config in its place is replayed.
    run = await what.set_config("default", ContextConfig(trigger_ratio=0.6))
    assert run.config.trigger_ratio == 0.6 and run.prepared
