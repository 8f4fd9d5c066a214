"""The call controls that steer an agent: prompt, Send, Compact now, Stop. The Config tab is in
`_config_panel.py`, the Sources tab in `_sources_panel.py`, the panels that show a request in
`_panels.py`."""

from __future__ import annotations

import html

import ipywidgets as w

__all__ = ["Controls"]


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
