"""What a `WhatIf` takes from its caller, checked: its session and configs, a config's name and a
request's step.

Kept apart from the what-if itself so that its methods stay about replaying and grading; each
check raises a `UsageError` that names what is wrong and what there is to ask for.
"""

from __future__ import annotations

import operator
from collections.abc import Mapping

from ctxlab.analysis._config_run import ConfigRun
from ctxlab.config._config import ContextConfig, named_configs
from ctxlab.exceptions import UsageError
from ctxlab.io._transcript import Transcript
from ctxlab.util._checks import shown


def whatif_configs(configs: object) -> dict[str, ContextConfig]:
    """``configs`` as name → checked config (`named_configs`); an empty mapping is told what
    to pass."""
    if isinstance(configs, Mapping) and not configs:
        msg = "pass at least one named config, e.g. {'default': ContextConfig()}"
        raise UsageError(msg)
    return named_configs(configs)


def whatif_transcript(transcript: object) -> Transcript:
    """``transcript`` when it is a `Transcript`, else a `UsageError` saying how to get one."""
    if not isinstance(transcript, Transcript):
        msg = (
            f"WhatIf replays a Transcript, got {type(transcript).__name__}: pass "
            "ctxlab.load(path), or open the file with WhatIfLab.open(path, ...)"
        )
        raise UsageError(msg)
    return transcript


def config_name(name: object) -> str:
    """``name`` when it is text (a config's name), else a `UsageError`."""
    if not isinstance(name, str):
        msg = f"a config's name must be text, got {shown(name)}"
        raise UsageError(msg)
    return name


def run_named(runs: Mapping[str, ConfigRun], name: object) -> ConfigRun:
    """The run of config ``name``, or a `UsageError` listing the configs there are."""
    run = runs.get(name) if isinstance(name, str) else None
    if run is None:
        msg = (
            f"no config named {shown(name)} in this what-if: its configs are "
            f"{', '.join(map(repr, runs))} (add one with set_config(name, config))"
        )
        raise UsageError(msg)
    return run


def step_of(step: object, *runs: ConfigRun) -> int:
    """``step`` as a request all ``runs`` prepared (numbered from 0), or a `UsageError` saying
    which there are — or that a run is not replayed yet."""
    count = min(len(r.prepared) for r in runs)
    if count == 0:
        msg = (
            f"{', '.join(repr(r.name) for r in runs if not r.prepared)} prepared no request: "
            "replay it first (await what.run()); a replay that failed at its first request "
            "has none (what.table() says where each stopped)"
        )
        raise UsageError(msg)
    # Any whole number (numpy's too: a step read from `steps()`), never a bool.
    number = None if isinstance(step, bool) else _whole(step)
    if number is None or not 0 <= number < count:
        msg = (
            f"step must be the number of a request both configs prepared, from 0 to "
            f"{count - 1}, got {shown(step)}"
        )
        raise UsageError(msg)
    return number


def _whole(value: object) -> int | None:
    try:
        return operator.index(value)  # type: ignore[arg-type]
    except TypeError:
        return None
