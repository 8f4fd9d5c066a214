"""The compaction beta flags are the ones the installed Anthropic SDK names (issue 56): the
exported on-demand loop's (`LOOP_BETA`) is the flag the SDK's own compaction loop says its
``compaction={"type": "summarize"}`` request needs (``compact_before_next_turn``), and the
threshold compaction's (`COMPACTION_BETA`, sent with the ``compact_20260112`` edit) is one of
the SDK's betas and not the on-demand one. Fails when the SDK stops naming them."""

from __future__ import annotations

import inspect
import re
import typing

import pytest

from ctxlab.config._export_loop import LOOP_BETA
from ctxlab.models._anthropic_edits import COMPACTION_BETA

anthropic = pytest.importorskip("anthropic")


def _sdk_betas() -> set[str]:
    from anthropic.types.anthropic_beta_param import AnthropicBetaParam

    names: set[str] = set()
    for arm in typing.get_args(AnthropicBetaParam):
        names.update(a for a in typing.get_args(arm) if isinstance(a, str))
    return names


def _runner_compaction_beta() -> list[str]:
    """The betas the SDK's tool runner says a compaction request requires."""
    from anthropic.lib.tools._beta_runner import BaseToolRunner

    doc = inspect.getdoc(BaseToolRunner.compact_before_next_turn) or ""
    assert '{"type": "summarize"}' in doc  # the request the exported loop sends
    return re.findall(r"Requires\s+the\s+`([^`]+)`\s+beta", doc)


def test_the_loop_sends_the_beta_the_sdk_names_for_a_compaction_request() -> None:
    assert _runner_compaction_beta() == [LOOP_BETA]
    assert LOOP_BETA in _sdk_betas()


def test_the_threshold_compaction_beta_is_the_sdks_and_not_the_loops() -> None:
    assert COMPACTION_BETA in _sdk_betas()
    assert COMPACTION_BETA != LOOP_BETA
    # The edit it goes with is the SDK's `compact_20260112`.
    from anthropic.types.beta import beta_compact_20260112_edit_param as edit

    hints = typing.get_type_hints(edit.BetaCompact20260112EditParam, include_extras=True)
    assert "compact_20260112" in str(hints["type"])


def test_the_exported_loop_sends_that_beta() -> None:
    from ctxlab import ContextConfig
    from ctxlab.config import OnDemandCompaction

    config = ContextConfig(on_demand=OnDemandCompaction(at_task=True))
    source = config.export("anthropic_loop").value
    assert f"BETAS = [{LOOP_BETA!r}]" in source
