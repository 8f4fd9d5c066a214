"""The small things a user meets in the first minutes: the map's scale, the Config tab's labels
and tooltips, diffs that say how much they leave out."""

from __future__ import annotations

import pytest

pytest.importorskip("ipywidgets")

import ipywidgets as w

from ctxlab import ContextConfig
from ctxlab.manifest import ContextManifest, ManifestItem, Transform
from ctxlab.widgets._map import GHOST_SHARE, ContextMap, map_items
from ctxlab.widgets._panels import DIFF_SHOWN, ManifestPanel


def _manifest(items: tuple[ManifestItem, ...], **kw: object) -> ContextManifest:
    return ContextManifest(
        request_id="r",
        purpose="reasoning",
        model="m",
        estimated_input_tokens=sum(i.tokens for i in items),
        input_limit=kw.pop("input_limit", 10_000),  # type: ignore[arg-type]
        counting_method="approx",
        exact=False,
        items=items,
        validation="passed",
        transforms=kw.pop("transforms", ()),  # type: ignore[arg-type]
        **kw,  # type: ignore[arg-type]
    )


def _item(n: int, tokens: int = 100) -> ManifestItem:
    return ManifestItem(
        f"message/{n:04d}", "message", "conversation", tokens, f"{n:04d}", role="user"
    )


def test_a_huge_offloaded_output_does_not_squeeze_the_map() -> None:
    manifest = _manifest(
        (_item(1, 3_000),),
        transforms=(Transform("tool_result_offload", "call_1", "out.txt", 55_196, 200),),
    )
    items = map_items(manifest)
    ghost = next(i for i in items if i["ghost"])
    assert ghost["tokens"] == 54_996  # the true count, on hover
    assert ghost["width"] == pytest.approx(GHOST_SHARE * 10_000)  # drawn at its share
    view = ContextMap()
    view.show(manifest)
    # What was sent and the limit take most of the strip, not the left 10 %.
    assert 3_000 / view.scale > 0.2 and 10_000 / view.scale > 0.7


def test_config_labels_are_whole_and_tooltips_plain() -> None:
    from ctxlab.widgets._config_panel import ConfigPanel

    class Holder:
        context_config = ContextConfig()

        class model:
            context_window = 200_000

    panel = ConfigPanel(Holder(), lambda _: None)  # type: ignore[arg-type]
    boxes = [c for c in panel.controls.values() if isinstance(c, w.Checkbox)]
    assert boxes and all(not b.indent and b.layout.width == "540px" for b in boxes)
    ints = [c for c in panel.controls.values() if isinstance(c, w.BoundedIntText)]
    assert ints and all(c.layout.width == "400px" for c in ints)
    assert all("``" not in c.tooltip for c in panel.controls.values())


def test_a_long_diff_says_how_many_it_leaves_out() -> None:
    before = tuple(_item(n) for n in range(169))
    after = (_item(500),)
    panel = ManifestPanel()
    panel.show(3, _manifest(after, previous_items=before))
    shown = panel.diff.value
    assert "<b>dropped</b> (169)" in shown
    assert f"message/{DIFF_SHOWN - 1:04d}" in shown and f"message/{DIFF_SHOWN:04d}" not in shown
    assert f"… and {169 - DIFF_SHOWN} more" in shown
    assert "<b>appeared</b> (1)" in shown


def test_stop_is_coloured_only_while_it_can_stop() -> None:
    from ctxlab.widgets._controls import Controls

    controls = Controls()
    assert controls.stop_button.disabled and controls.stop_button.button_style == ""
    controls.busy(True)
    assert not controls.stop_button.disabled and controls.stop_button.button_style == "warning"
    controls.busy(False)
    assert controls.stop_button.button_style == ""


async def test_a_click_on_the_selected_row_opens_the_context_tab_again() -> None:
    from pathlib import Path

    from ctxlab import load
    from ctxlab.widgets import Lab

    fixture = Path(__file__).parents[1] / "fixtures" / "sessions" / "claude_code_session.jsonl"
    lab = await Lab.open(load(fixture), context_window=200_000)
    item = lab.manifest.table.rows[0][-1]
    lab.manifest.table.selected = item  # the first click: the trait changes
    assert lab.tabs.selected_index == 1 and lab.context.focus == item
    lab.tabs.selected_index = 0  # back to the Manifest tab; the row stays selected
    # The second click on it changes no trait; the view's message opens it again.
    lab.manifest.table._handle_custom_msg({"type": "open", "id": item}, [])
    assert lab.tabs.selected_index == 1
