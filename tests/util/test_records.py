"""`filled` builds what a frozen dataclass's ``__init__`` builds, at every site that uses it.

Each record a preparation or a replay makes with `filled` (the manifest, the request, the
replay's step) is made again through its class's own
``__init__`` from its fields: both must hold the same ``__dict__`` — a field a site leaves out
(one added to the class later), or one it names wrongly, fails here.
"""

from __future__ import annotations

import ast
import asyncio
import dataclasses
import importlib
from pathlib import Path
from typing import Any

import pytest

import ctxlab
from ctxlab import ApproximateCounter, ContextConfig, WorkingState, prepare, replay
from ctxlab.manifest import ContextManifest, ManifestItem, Thresholds
from ctxlab.materials import SystemPart
from ctxlab.pipeline import PreparationMemo
from ctxlab.pipeline._layout import ManifestFactory, request_of
from ctxlab.pipeline._stages import fixed_part
from ctxlab.tokens import TokenCache
from tests.helpers import session


def _remade(record: Any) -> Any:
    """``record`` built again by its class's ``__init__`` from its fields."""
    fields = {f.name: getattr(record, f.name) for f in dataclasses.fields(record)}
    return type(record)(**fields)


def _assert_as_init_builds(record: Any) -> None:
    again = _remade(record)
    assert vars(record) == vars(again)
    assert record == again


@pytest.mark.parametrize("validation", ["passed", "budget_exceeded"])
def test_the_manifest_factory_fills_every_field(validation: Any) -> None:
    cache = TokenCache(ApproximateCounter())
    lines = Thresholds(16_000, 9_000, 12_000, 4_000, 13_680)
    item = ManifestItem("message/ab", "message", "conversation", 12, "ab", role="user")
    previous = ContextManifest("p", "reasoning", "", 1, 2, "m", False, (item,), (), "passed")
    factory = ManifestFactory("r", "reasoning", "a-model", cache, lines, previous)
    made = factory([item], validation, None if validation == "passed" else "over", 12)
    _assert_as_init_builds(made)
    assert made.previous_items == (item,)
    assert made.items == (item,) and made.estimated_input_tokens == 12
    assert made.error == (None if validation == "passed" else "over")


def test_the_request_fills_every_field() -> None:
    cache = TokenCache(ApproximateCounter())
    fixed = fixed_part((SystemPart("system_prompt", "be brief"),), (), cache)
    messages = tuple(session(2))
    made = request_of(fixed, messages, 1)
    _assert_as_init_builds(made)
    assert (made.system, made.messages, made.material_messages) == ("be brief", messages, 1)


def test_a_common_steps_preparation_and_a_replays_steps_fill_every_field() -> None:
    messages = session(6)
    memo, cache = PreparationMemo(), TokenCache(ApproximateCounter())
    state = WorkingState()
    for count in (1, 3, 5):  # the second and third are common steps
        state = WorkingState(conversation=tuple(messages[:count]))
        done = asyncio.run(
            prepare(state, context_window=200_000, counter=cache, memo=memo, config=ContextConfig())
        )
        _assert_as_init_builds(done)
        _assert_as_init_builds(done.manifest)
        _assert_as_init_builds(done.request)
    assert memo.last is not None and done.state is state

    async def steps() -> list[Any]:
        return [s async for s in replay(messages, context_window=200_000, counter=cache)]

    replayed = asyncio.run(steps())
    assert [s.number for s in replayed] == list(range(len(replayed))) and len(replayed) == 6
    for step in replayed:
        _assert_as_init_builds(step)


def _filled_classes() -> list[type]:
    """The class of every ``filled(Class, ...)`` call in ctxlab (resolved in its module)."""
    root = Path(ctxlab.__file__).parent
    found: list[type] = []
    for path in sorted(root.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "filled(" not in text:
            continue
        module = None
        for node in ast.walk(ast.parse(text)):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id == "filled"
                and node.args
                and isinstance(node.args[0], ast.Name)
            ):
                name = ".".join(path.relative_to(root.parent).with_suffix("").parts)
                module = module or importlib.import_module(name)
                found.append(getattr(module, node.args[0].id))
    return found


def test_every_filled_class_has_an_init_that_only_sets_its_fields() -> None:
    # `filled` skips ``__init__``: sound only while it does nothing but set each field. A
    # ``__post_init__`` (a check, a normalization), slots, an ``InitVar``, a field outside
    # ``__init__`` or an ``__init__`` of the class's own would each be skipped silently — and a
    # check that only raises would not show in the remade records above (review i67-rev2).
    classes = _filled_classes()
    assert {c.__name__ for c in classes} == {"ContextManifest", "ModelRequest", "ReplayStep"}
    for cls in classes:
        params = cls.__dataclass_params__  # type: ignore[attr-defined]
        assert params.frozen and params.init, cls
        assert not hasattr(cls, "__post_init__"), cls
        assert "__slots__" not in vars(cls), cls
        assert all(f.init for f in dataclasses.fields(cls)), cls
        assert not any(
            isinstance(f.type, dataclasses.InitVar) or "InitVar" in str(f.type)
            for f in vars(cls)["__dataclass_fields__"].values()
        ), cls
        # The generated ``__init__`` (its code lives in no file of ours), not one written.
        assert cls.__init__.__code__.co_filename == "<string>", cls
