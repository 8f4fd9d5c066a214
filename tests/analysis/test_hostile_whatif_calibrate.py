"""Issue 51's untyped crashes of `calibrate` and `WhatIf.diff`: a prior that is a model's name or
a dict, a counter that is text, a config the what-if does not have, a step past the end or
written as text — each a `UsageError` naming the argument, the value and what to pass (they
were AttributeError, KeyError, IndexError and TypeError)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from ctxlab import ApproximateCounter, ContextConfig, Transcript, WhatIf, calibrate
from ctxlab.analysis import Calibration
from ctxlab.exceptions import UsageError
from ctxlab.messages import AssistantMessage, ProviderUsage, UserMessage
from tests.hostile import says

SESSION = Transcript(
    "s",
    {"model": "claude-sonnet-4-5"},
    "Be brief.",
    (
        UserMessage(content="one " * 300),
        AssistantMessage(content="two " * 300),
        UserMessage(content="three " * 300),
        AssistantMessage(content="four"),
    ),
    usage={
        1: ProviderUsage(input_tokens=400, output_tokens=300),
        3: ProviderUsage(input_tokens=1_100, output_tokens=2),
    },
)


@pytest.mark.parametrize("prior", ["claude", {"ratio": 1.2}, 42, SESSION])
def test_a_prior_that_is_no_calibration_is_refused_by_name(prior: Any) -> None:
    with pytest.raises(UsageError) as caught:
        calibrate(SESSION, prior=prior)
    says(str(caught.value), "prior must be another session's Calibration", "calibrate(")


@pytest.mark.parametrize("counter", ["x", 4, ApproximateCounter, object()])
def test_a_counter_that_counts_nothing_is_refused_by_name(counter: Any) -> None:
    with pytest.raises(UsageError) as caught:
        calibrate(SESSION, counter=counter)
    says(str(caught.value), "counter must be a token counter", "ApproximateCounter()")


def test_a_calibration_as_prior_and_a_counter_still_calibrate() -> None:
    # Control: what the checks let through is what calibrate always took.
    own = calibrate(SESSION, ApproximateCounter())
    assert isinstance(own, Calibration) and [p.billed for p in own.points] == [400, 1_100]
    forecast = calibrate(SESSION, ApproximateCounter(), prior=own)
    assert forecast.forecast_from == "another session's fit"


def test_calibrate_reads_a_transcript_only() -> None:
    with pytest.raises(UsageError) as caught:
        calibrate("session.jsonl")  # type: ignore[arg-type]
    says(str(caught.value), "calibrate reads a Transcript", "ctxlab.load(path)")


@pytest.fixture
async def what() -> WhatIf:
    what = WhatIf(
        SESSION,
        {"a": ContextConfig(), "b": ContextConfig(trigger_ratio=0.5, reserve_ratio=0.1)},
        context_window=32_000,
        counter=ApproximateCounter(),
    )
    await what.run()
    return what


async def test_a_config_the_whatif_does_not_have_is_named_with_those_it_has(what: WhatIf) -> None:
    for call in (
        lambda: what.diff("a", "nope", 0),
        lambda: what.diff(3, "a", 0),  # type: ignore[arg-type]
        lambda: what.over_limit_billed("nope"),
    ):
        with pytest.raises(UsageError) as caught:
            call()
        says(str(caught.value), "no config named", "'a', 'b'", "set_config(name, config)")
    with pytest.raises(UsageError, match="no config named 'nope'"):
        await what.run("nope")


@pytest.mark.parametrize("step", [2, 10**6, -1, "1", 1.0, True, None])
async def test_a_step_no_request_has_is_refused_with_the_steps_there_are(
    what: WhatIf, step: Any
) -> None:
    with pytest.raises(UsageError) as caught:
        what.diff("a", "b", step)
    says(str(caught.value), "step must be the number of a request", "from 0 to 1", "got")


async def test_a_step_the_runs_made_diffs_whatever_int_type_it_comes_as(what: WhatIf) -> None:
    # Control: the last request, as an int and as numpy's (a step read from `steps()`).
    assert what.diff("a", "b", 1).equals(what.diff("a", "b", np.int64(1)))  # type: ignore[arg-type]
    assert list(what.diff("a", "a", 1)["side"]) == []


def test_a_diff_before_any_replay_says_to_run_first() -> None:
    what = WhatIf(SESSION, {"a": ContextConfig()}, context_window=32_000)
    with pytest.raises(UsageError) as caught:
        what.diff("a", "a", 0)
    says(str(caught.value), "prepared no request", "await what.run()")
