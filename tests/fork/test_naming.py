"""How branches are named in outcome tables and on disk: by what their config changes of the
origin's (``original`` when nothing: the control), a preset by its name, the caller's name as
given, and a branch's folder a safe name under ``root`` (numbered when taken)."""

from __future__ import annotations

from pathlib import Path

from ctxlab import ContextConfig
from ctxlab.demo import demo_config
from ctxlab.fork import fork
from ctxlab.fork._fork import config_label
from tests.fork.helpers import demo_session


async def test_a_branch_is_named_by_what_its_config_changes(tmp_path: Path) -> None:
    session = await demo_session(tmp_path)
    cases: list[tuple[object, str]] = [
        (None, "original"),
        (demo_config(), "original"),  # the origin's own config, given: nothing changes
        (demo_config(tool_result_limit=300), "tool_result_limit=300"),
        # The fields of a config (from the defaults): only what differs from the origin's.
        ({"tool_result_limit": 1500, "trigger_ratio": 0.5}, "trigger_ratio=0.5"),
        ({"budget": {"output_reservation": 1000}, "tool_result_limit": 1500}, "budget"),
        ("observation_masking", "observation_masking"),
    ]
    for number, (config, label) in enumerate(cases):
        branch = await fork(session.agent, at=2, config=config, root=tmp_path / f"b{number}")  # type: ignore[arg-type]
        assert (branch.config_name, branch.name) == (label, label)
        assert branch.folder == tmp_path / f"b{number}" / label.replace("=", "-")
    # More than two changes: the first two, then an ellipsis.
    three = demo_config(trigger_ratio=0.5, reserve_ratio=0.2, tool_result_limit=300)
    label = config_label(three, demo_config())
    assert label.endswith(", …") and label.count("=") == 2
    assert (
        label
        == ", ".join(
            f"{k}={v}" for k, v in three.model_dump().items() if demo_config().model_dump()[k] != v
        ).rsplit(", ", 1)[0]
        + ", …"
    )
    assert config_label(ContextConfig(), ContextConfig()) == "original"
    two = demo_config(trigger_ratio=0.5, reserve_ratio=0.2)
    assert config_label(two, demo_config()) == "trigger_ratio=0.5, reserve_ratio=0.2"  # no "…"


async def test_a_branch_keeps_its_name_and_gets_a_safe_folder(tmp_path: Path) -> None:
    session = await demo_session(tmp_path)
    root = tmp_path / "b"
    first = await fork(session.agent, at=2, name="cut / ../ 300", root=root)
    again = await fork(session.agent, at=2, name="cut / ../ 300", root=root)
    assert first.name == "cut / ../ 300"  # as given, in the tables
    assert again.name == "cut / ../ 300-2"
    assert first.folder == root / "cut-..-300"  # one folder, under root
    assert again.folder == root / "cut-..-300-2"
    assert sorted(p.name for p in root.iterdir()) == ["cut-..-300", "cut-..-300-2"]
    assert (first.folder / "run-0" / "workspace").is_dir()
    odd = await fork(session.agent, at=2, name="../..", root=root)
    assert odd.folder == root / "branch"  # nothing safe left of the name
