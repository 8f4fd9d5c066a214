"""A Lab's methods on arguments no notebook means (issue 51's signature fuzz): a step as text or a
fraction was kept as the selection — every later click then failed on it — an item id that is
no text, a config the what-if does not have, a Lab of something that is no agent. Each is a
`UsageError` saying what the method takes, and the Lab goes on as it was."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("ipywidgets")

from ctxlab import ApproximateCounter, ContextConfig
from ctxlab.exceptions import UsageError
from ctxlab.widgets import Lab, WhatIfLab
from tests.analysis.test_arguments import SESSION
from tests.hostile import says


@pytest.fixture
async def lab() -> Any:
    opened = await Lab.open(SESSION, context_window=32_000, counter=ApproximateCounter())
    yield opened
    opened.close()


@pytest.mark.parametrize("step", ["1", 1e-300, 0.5, None, True])
async def test_a_step_that_is_no_number_is_refused_and_the_selection_kept(
    lab: Lab, step: Any
) -> None:
    lab.select(1)
    with pytest.raises(UsageError) as caught:
        lab.select(step)
    says(str(caught.value), "a step is a request's number", repr(step))
    assert lab.selected == 1
    lab.open_item(lab.log.manifests[1].items[0].id)  # (it failed here once the text was kept)
    assert lab.map.selected == lab.log.manifests[1].items[0].id


async def test_a_step_from_a_frame_selects_it(lab: Lab) -> None:
    lab.select(np.int64(0))  # type: ignore[arg-type]
    assert lab.selected == 0 and type(lab.selected) is int
    assert lab.log.manifest(np.int64(-1)) is lab.log.manifests[-1]  # type: ignore[arg-type]
    with pytest.raises(UsageError, match="no request 7: this Lab has requests 0 to 1"):
        lab.log.manifest(7)


async def test_an_item_id_that_is_no_text_is_refused(lab: Lab) -> None:
    lab.select(0)
    with pytest.raises(UsageError) as caught:
        lab.open_item(42)  # type: ignore[arg-type]
    says(str(caught.value), "item_id is an item's id (text", "got 42")
    assert lab.map.selected == ""


@pytest.mark.parametrize("source", ["session.jsonl", SESSION, 42])
def test_a_lab_of_no_agent_says_how_to_open_a_recording(source: Any) -> None:
    with pytest.raises(UsageError) as caught:
        Lab(source)
    says(str(caught.value), "a Lab watches an Agent or a source of steps", "Lab.open(path")


async def test_tuning_a_config_the_whatif_lab_does_not_have_names_those_it_has() -> None:
    lab = await WhatIfLab.open(
        SESSION, {"a": ContextConfig()}, context_window=32_000, counter=ApproximateCounter()
    )
    with pytest.raises(UsageError) as caught:
        await lab.tune("b", trigger_ratio=0.5)
    says(str(caught.value), "no config named 'b'", "its configs are 'a'")
    with pytest.raises(UsageError, match="WhatIfLab shows a WhatIf, got 'a'"):
        WhatIfLab("a")  # type: ignore[arg-type]
