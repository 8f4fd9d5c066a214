"""The Config tab: a control per tunable `ContextConfig` field, and what the controls show
against the config in force.

A control moved is a config *not applied*: the panel says so, and which fields differ from
the config in force, until Apply (or until the controls are back at the config in force).
While it is not applied, the Lab draws the lines the moved controls would give on the budget
plot's next point (``on_moved``): the threshold lines move with the slider, before Apply. An
invalid combination says its rule at once and leaves the lines at the config in force.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ipywidgets as w
from pydantic import ValidationError

from ctxlab.config._config import ContextConfig
from ctxlab.config._fields import TunableField, tunable_fields
from ctxlab.manifest import Thresholds

if TYPE_CHECKING:
    from ctxlab.agent._watched import Watched

__all__ = ["ConfigPanel"]

NOT_APPLIED_COLOR = "#b35900"


class ConfigPanel:
    """A control per tunable `ContextConfig` field, generated from the config's own metadata
    (title, description, bounds); Apply validates, then sets the agent's config.

    Args:
        agent: The watched agent whose ``context_config`` the controls show and Apply sets.
        on_applied: Called with the config Apply set.
        on_moved: Called when what the controls show changes (`pending` then holds the valid
            config they show when it is not the one in force).
    """

    def __init__(
        self,
        agent: Watched,
        on_applied: Callable[[ContextConfig], None],
        on_moved: Callable[[], None] | None = None,
    ) -> None:
        self.agent = agent
        self._on_applied = on_applied
        self._on_moved = on_moved
        config = agent.context_config
        self._synced = config  # the config the controls show
        self._quiet = False  # set while the panel moves several controls itself
        self.pending: ContextConfig | None = None
        """The valid config the controls show when it is not the one in force (not applied:
        the plot draws its lines ahead); None when they show the config in force, or an
        invalid combination."""
        self.controls: dict[str, w.ValueWidget] = {}
        """The control of each field, by field name (also reachable as ``panel.<name>``)."""
        self.in_tokens: dict[str, w.HTML] = {}
        """For each ratio, what it is in tokens of this model's window."""
        rows: list[w.Widget] = []
        for field in tunable_fields(type(config)):
            control = _control(field, getattr(config, field.name))
            self.controls[field.name] = control
            setattr(self, field.name, control)
            control.observe(lambda _: self._moved(), names="value")
            if field.kind == "float" and field.name.endswith("_ratio"):
                note = self.in_tokens[field.name] = w.HTML()
                control.observe(lambda _, n=field.name: self._show_tokens(n), names="value")
                self._show_tokens(field.name)
                rows.append(w.HBox([control, note]))
            else:
                rows.append(control)
        self.apply_button = w.Button(description="Apply", button_style="primary", icon="check")
        self.reset_button = w.Button(description="Defaults", icon="undo")
        self.status = w.HTML()
        self.apply_button.on_click(lambda _: self.apply())
        self.reset_button.on_click(lambda _: self.reset())
        self.widget = w.VBox([*rows, w.HBox([self.apply_button, self.reset_button, self.status])])

    def _show_tokens(self, name: str) -> None:
        window = self.agent.model.context_window
        value = self.controls[name].value
        self.in_tokens[name].value = (
            f"<span style='color:#555'>= {int(value * window):,} tokens of the "
            f"{window:,}-token window</span>"
        )

    def _set_all(self, config: ContextConfig) -> None:
        """Move every control to ``config`` as one move (one status, one redraw of the plot)."""
        self._quiet = True
        try:
            for name, control in self.controls.items():
                value = getattr(config, name)
                if control.value != value:
                    control.value = value
        finally:
            self._quiet = False
        self._moved()

    def sync(self) -> None:
        """Move every control to the config in force when it was assigned from code since (a
        control moved but not yet applied is left alone otherwise)."""
        config = self.agent.context_config
        if config is self._synced:
            return
        self._synced = config
        self._set_all(config)

    def reset(self) -> None:
        """Put every control back to the defaults of the config's type (Apply applies them)."""
        self._set_all(type(self.agent.context_config)())
        if self.pending is not None:
            self.status.value = (
                f"<span style='color:{NOT_APPLIED_COLOR}'>Not applied: the defaults are shown "
                "(the plot's lines show them); Apply to use them</span>"
            )

    def lines_ahead(self) -> Thresholds:
        """The lines (as the engine computes them) the controls show: those of `pending` —
        what the next request would use once applied — else those of the next request."""
        if self.pending is None:
            return self.agent.next_thresholds()
        model = self.agent.model
        return Thresholds.compute(
            self.pending, model.context_window, getattr(model, "max_output_tokens", None)
        )

    @property
    def message(self) -> str:
        """The status line as plain text (what the controls, Apply or Defaults last said)."""
        return html.unescape(re.sub(r"<[^<>]++>", "", self.status.value))

    def values(self) -> dict[str, Any]:
        """The fields as the controls set them."""
        return {name: control.value for name, control in self.controls.items()}

    def _validated(self) -> ContextConfig | str:
        """The config the controls show, or why it is invalid."""
        try:
            return self.agent.context_config.merge(**self.values())
        except (ValidationError, ValueError) as exc:
            errors = exc.errors() if isinstance(exc, ValidationError) else [{"msg": str(exc)}]
            return "; ".join(str(e["msg"]).removeprefix("Value error, ") for e in errors)

    def _moved(self) -> None:
        # A control moved: say whether what the controls show is in force, and let the plot
        # draw its lines (before Apply).
        if self._quiet:
            return
        in_force = self.agent.context_config
        moved = {n: v for n, v in self.values().items() if getattr(in_force, n) != v}
        config = self._validated() if moved else None
        if isinstance(config, str):
            self.status.value = (
                f"<span style='color:#c00'>Not applied: {html.escape(config)}</span>"
            )
            config = None
        elif config is not None:
            said = ", ".join(
                f"{_label(n)} {_shown(v)} (in force: {_shown(getattr(in_force, n))})"
                for n, v in moved.items()
            )
            self.status.value = (
                f"<span style='color:{NOT_APPLIED_COLOR}'>Not applied: "
                f"{html.escape(said)} — the plot's lines show it; Apply to use it</span>"
            )
        else:
            self.status.value = (
                "<span style='color:#080'>In force: the controls show the config in force</span>"
            )
        if config is not self.pending:
            self.pending = config
            if self._on_moved is not None:
                self._on_moved()

    def apply(self) -> ContextConfig | None:
        """Validate and apply; on an invalid combination show why and change nothing."""
        config = self._validated()
        if isinstance(config, str):
            self.status.value = (
                f"<span style='color:#c00'>Not applied: {html.escape(config)}</span>"
            )
            return None
        self.agent.context_config = config
        self._synced = self.agent.context_config
        self.pending = None
        self.status.value = (
            "<span style='color:#080'>Applied: in force from the next request</span>"
        )
        self._on_applied(config)
        return config


def _label(name: str) -> str:
    return name.replace("_", " ")


def _shown(value: Any) -> str:
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def _control(field: TunableField, value: Any) -> w.ValueWidget:
    style = {"description_width": "240px"}
    # The description is reStructuredText: ``name`` reads as name in a tooltip.
    tooltip = re.sub(r"``([^`]*)``", r"\1", " ".join(field.description.split()))
    label = field.title or field.name.replace("_", " ")
    if field.kind == "bool":
        # Not indented, and wide enough: the label sits after the box, whole.
        return w.Checkbox(
            value=value,
            description=label,
            tooltip=tooltip,
            indent=False,
            layout=w.Layout(width="540px", margin="2px 0 2px 244px"),
        )
    if field.kind == "float":
        return w.FloatSlider(
            value=value,
            min=field.minimum if field.minimum is not None else 0.0,
            max=field.maximum if field.maximum is not None else 1.0,
            step=0.01,
            # Each move reaches the kernel while the handle is dragged: the panel says it is not
            # applied and the plot's lines follow the hand (a move costs one line redraw).
            continuous_update=True,
            readout_format=".2f",
            description=label,
            tooltip=tooltip,
            style=style,
            layout=w.Layout(width="540px"),
        )
    return w.BoundedIntText(
        value=value,
        min=int(field.minimum) if field.minimum is not None else 0,
        max=int(field.maximum) if field.maximum is not None else 10_000_000,
        description=label,
        tooltip=tooltip,
        style=style,
        layout=w.Layout(width="400px"),  # 240 of label, room for a seven-digit value
    )
