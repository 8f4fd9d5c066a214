"""The Sources tab: registered sources (enable, priority, required) and the text of text
sources, kept in sync with code.

An editor whose text differs from its source's says it is *unsaved* as it is typed in, until
Save (or until its text is the source's again); a text changed in code shows in an untouched
editor, and beside an edited one (the edit is kept: Save is the user's choice).
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING, Any

import ipywidgets as w

from ctxlab.materials import SourceRegistration, TextSource

if TYPE_CHECKING:
    from ctxlab.agent._watched import Watched

__all__ = ["UNSAVED", "SourcesPanel"]

UNSAVED = "unsaved: this text differs from the source (Save text to use it at the next request)"
"""What an editor whose text differs from its source's says."""
_CHANGED_TOO = (
    "<span style='color:#c00'>unsaved, and the source's text was changed in code too: Save "
    "overwrites it with this editor's text</span>"
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
            text.observe(lambda _, name=name: self._edited(name), names="value")
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

    def _text_of(self, name: str) -> str | None:
        """The text of source ``name`` (None: gone, or not a text source)."""
        registration = self.agent.sources.get(name)
        source = registration.source if registration is not None else None
        return source.text if isinstance(source, TextSource) else None

    @property
    def unsaved(self) -> list[str]:
        """The sources whose editor holds a text that is not the source's."""
        return [
            name
            for name, row in self.rows.items()
            if "text" in row and row["text"].value != self._text_of(name)
        ]

    def _edited(self, name: str) -> None:
        # Typed in (or set from code): say at once whether the editor's text is the source's.
        row = self.rows[name]
        text = self._text_of(name)
        if row["text"].value == text:
            row["status"].value = ""
        elif text != row["synced"]:
            row["status"].value = _CHANGED_TOO
        else:
            row["status"].value = f"<span style='color:#b35900'>{html.escape(UNSAVED)}</span>"

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
                row["status"].value = _CHANGED_TOO

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
