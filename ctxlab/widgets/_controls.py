"""The panels that steer an agent: Config (a control per tunable field), Sources (enable,
priority, required, the text of text sources, kept in sync with code), and the call controls
(prompt, Send, Compact now, Stop). The panels that show a request are in `_panels.py`."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ipywidgets as w
from pydantic import ValidationError

from ctxlab.config._config import ContextConfig
from ctxlab.config._fields import TunableField, tunable_fields
from ctxlab.materials import SourceRegistration, TextSource

if TYPE_CHECKING:
    from ctxlab.agent._watched import Watched

__all__ = ["ConfigPanel", "Controls", "SourcesPanel"]


class ConfigPanel:
    """A control per tunable `ContextConfig` field, generated from the config's own metadata
    (title, description, bounds); Apply validates, then sets the agent's config."""

    def __init__(self, agent: Watched, on_applied: Callable[[ContextConfig], None]) -> None:
        self.agent = agent
        self._on_applied = on_applied
        config = agent.context_config
        self._synced = config  # the config the controls show
        self.controls: dict[str, w.ValueWidget] = {}
        """The control of each field, by field name (also reachable as ``panel.<name>``)."""
        self.in_tokens: dict[str, w.HTML] = {}
        """For each ratio, what it is in tokens of this model's window."""
        rows: list[w.Widget] = []
        for field in tunable_fields(type(config)):
            control = _control(field, getattr(config, field.name))
            self.controls[field.name] = control
            setattr(self, field.name, control)
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

    def sync(self) -> None:
        """Move every control to the config in force when it was assigned from code since (a
        control moved but not yet applied is left alone otherwise)."""
        config = self.agent.context_config
        if config is self._synced:
            return
        self._synced = config
        for name, control in self.controls.items():
            value = getattr(config, name)
            if control.value != value:
                control.value = value

    def reset(self) -> None:
        """Put every control back to the defaults of the config's type (Apply applies them)."""
        default = type(self.agent.context_config)()
        for name, control in self.controls.items():
            control.value = getattr(default, name)
        self.status.value = "<span>defaults shown; Apply to use them</span>"

    @property
    def message(self) -> str:
        """The status line as plain text (what Apply or Defaults last said)."""
        return html.unescape(re.sub(r"<[^<>]++>", "", self.status.value))

    def values(self) -> dict[str, Any]:
        """The fields as the controls set them."""
        return {name: control.value for name, control in self.controls.items()}

    def apply(self) -> ContextConfig | None:
        """Validate and apply; on an invalid combination show why and change nothing."""
        try:
            config = self.agent.context_config.merge(**self.values())
        except (ValidationError, ValueError) as exc:
            errors = exc.errors() if isinstance(exc, ValidationError) else [{"msg": str(exc)}]
            text = "; ".join(str(e["msg"]).removeprefix("Value error, ") for e in errors)
            self.status.value = f"<span style='color:#c00'>Not applied: {html.escape(text)}</span>"
            return None
        self.agent.context_config = config
        self._synced = self.agent.context_config
        self.status.value = (
            "<span style='color:#080'>Applied: in force from the next request</span>"
        )
        self._on_applied(config)
        return config


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
            continuous_update=False,
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


class SourcesPanel:
    """Registered sources: enable, priority, required; edit the text of text sources."""

    def __init__(self, agent: Watched) -> None:
        self.agent = agent
        self.widget = w.VBox()
        self.rows: dict[str, dict[str, Any]] = {}
        self.refresh()

    def refresh(self) -> None:
        """Rebuild the list when sources were added or removed."""
        if set(self.rows) == set(self.agent.sources):
            return
        self.rows = {}
        children: list[w.Widget] = []
        for name, registration in self.agent.sources.items():
            box = self._row(name, registration)
            children.append(
                w.VBox(box, layout=w.Layout(border="1px solid #ddd", padding="4px", margin="2px"))
            )
        self.widget.children = children or [w.HTML("<i>No sources registered.</i>")]

    def _row(self, name: str, registration: SourceRegistration) -> list[w.Widget]:
        enabled = w.Checkbox(
            value=registration.enabled,
            description="enabled",
            indent=False,
            layout=w.Layout(width="90px"),
        )
        priority = w.IntText(
            value=registration.priority or 0, description="priority", layout=w.Layout(width="170px")
        )
        required = w.Checkbox(
            value=bool(registration.required),
            description="required",
            indent=False,
            disabled=registration.on_failure == "omit",
            layout=w.Layout(width="90px"),
        )
        row: dict[str, Any] = {"enabled": enabled, "priority": priority, "required": required}
        for control in (enabled, priority, required):
            control.observe(lambda _, name=name: self.apply(name), names="value")
        title = w.HTML(
            f"<b>{html.escape(name)}</b> · on failure: {html.escape(registration.on_failure)}"
            f" · timeout {registration.timeout:g} s",
            layout=w.Layout(width="300px"),
        )
        box: list[w.Widget] = [w.HBox([title, enabled, priority, required])]
        if isinstance(registration.source, TextSource):
            text = w.Textarea(
                value=registration.source.text, layout=w.Layout(width="95%", height="90px")
            )
            save = w.Button(description="Save text", icon="save")
            status = w.HTML()
            row.update(text=text, save=save, status=status, synced=registration.source.text)
            save.on_click(lambda _, name=name: self.save_text(name))
            box.extend([text, w.HBox([save, status])])
        self.rows[name] = row
        return box

    def apply(self, name: str) -> None:
        """Apply the controls of ``name`` through its registration (read at the next
        preparation)."""
        registration = self.agent.sources[name]
        row = self.rows[name]
        registration.update(
            enabled=row["enabled"].value,
            priority=row["priority"].value,
            required=None if registration.on_failure == "omit" else row["required"].value,
        )

    def sync(self) -> None:
        """Show text changed in code (``source.text = ...``) in its editor — unless the editor
        holds unsaved edits, which are kept and flagged instead."""
        self.refresh()
        for name, row in self.rows.items():
            source = self.agent.sources[name].source if name in self.agent.sources else None
            if "text" not in row or not isinstance(source, TextSource):
                continue
            if source.text == row["synced"]:
                continue
            if row["text"].value == row["synced"]:
                row["text"].value = row["synced"] = source.text
                row["status"].value = "updated from code"
            else:
                row["status"].value = (
                    "<span style='color:#c00'>changed in code too: Save overwrites it with "
                    "this editor's text</span>"
                )

    def save_text(self, name: str) -> None:
        """Set the text source's text from the editor (the editor's text wins; a change made
        in code meanwhile is said, then overwritten)."""
        source = self.agent.sources[name].source
        assert isinstance(source, TextSource)
        row = self.rows[name]
        overwrote = source.text != row["synced"]
        source.text = row["synced"] = row["text"].value
        note = " (it had been changed in code)" if overwrote else ""
        row["status"].value = html.escape(
            f"saved (revision edit-{source.revision}){note}; read at the next request"
        )


class Controls:
    """Prompt + Send, Compact now with an optional hint, Stop; busy state and errors."""

    def __init__(self) -> None:
        self.prompt = w.Text(placeholder="Ask the agent…", layout=w.Layout(width="60%"))
        self.send_button = w.Button(description="Send", button_style="primary", icon="paper-plane")
        self.hint = w.Text(
            placeholder="optional hint for the summary", layout=w.Layout(width="60%")
        )
        self.compact_button = w.Button(description="Compact now", icon="compress")
        self.stop_button = w.Button(description="Stop", button_style="", icon="stop", disabled=True)
        # Orange only while a call runs: a disabled button in its colour looked pressable.
        self.stop_button.observe(
            lambda c: setattr(self.stop_button, "button_style", "" if c["new"] else "warning"),
            names="disabled",
        )
        self.status = w.HTML("<span>idle</span>")
        self.warning = w.HTML()
        """A standing warning (compactions coming too often), apart from the status line."""
        self.widget = w.VBox(
            [
                w.HBox([self.prompt, self.send_button, self.stop_button]),
                w.HBox([self.hint, self.compact_button]),
                self.status,
                self.warning,
            ]
        )

    def busy(self, busy: bool, text: str = "") -> None:
        self.send_button.disabled = busy
        self.stop_button.disabled = not busy
        self.status.value = f"<span>{html.escape(text or ('running…' if busy else 'idle'))}</span>"

    def error(self, exc: BaseException) -> None:
        self.status.value = f"<span style='color:#c00'>{html.escape(type(exc).__name__)}: {html.escape(str(exc))}</span>"
