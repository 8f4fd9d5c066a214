"""The Manifest, Context, Config, Sources and Controls panels (ipywidgets).

Everything shown that comes from a tool, a model or a source is text: it is escaped before it
reaches an HTML widget (`html.escape`, DataFrames with ``escape=True``), never interpreted.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ipywidgets as w
from pydantic import ValidationError

from ctxlab._config import ContextConfig
from ctxlab._config_fields import TunableField, tunable_fields
from ctxlab._request import ModelRequest
from ctxlab.manifest import ContextManifest, item_rows
from ctxlab.materials import SourceRegistration, TextSource
from ctxlab.messages import (
    DocumentBlock,
    HintBlock,
    ImageBlock,
    ProviderBlock,
    RedactedThinkingBlock,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    tool_names,
)

if TYPE_CHECKING:
    from ctxlab._step_source import StepSource
    from ctxlab.agent import Agent
    from ctxlab.tokens import TokenCache

__all__ = ["ConfigPanel", "ContextPanel", "Controls", "ManifestPanel", "SourcesPanel"]

PREVIEW_CHARS = 3_000
ITEM_COLUMNS = ("placement", "role", "what", "tokens", "done", "why", "id")
EMPTY = "<i>No request yet: send a message (or open a recording) and its request shows here.</i>"


def _table(rows: list[list[Any]], columns: list[str], css: str) -> str:
    """An HTML table of escaped cells (pandas' ``to_html`` costs ~5 ms a render; this ~0.3)."""
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join(
        "<tr>"
        + "".join(f"<td>{html.escape('' if v is None else str(v))}</td>" for v in row)
        + "</tr>"
        for row in rows
    )
    return f"<table class='dataframe {css}'><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


class ManifestPanel:
    """Items, transforms, validation and the diff to the previous request of one step."""

    def __init__(self) -> None:
        self.header = w.HTML()
        self.picker = w.Dropdown(
            options=[""], value="", description="item", layout=w.Layout(width="60%")
        )
        """Selects an item here and in the context map."""
        self.items = w.HTML()
        self.filter = w.Text(
            placeholder="filter: role, tool, text, placement…", layout=w.Layout(width="40%")
        )
        """Keeps the items whose row contains this text (case-insensitive)."""
        self.sort = w.Dropdown(
            options=[
                ("request order", ""),
                ("tokens, largest first", "tokens"),
                ("placement", "placement"),
                ("what was done", "done"),
            ],
            value="",
            description="sort",
            layout=w.Layout(width="260px"),
        )
        self.filter.observe(lambda _: self._render_items(), names="value")
        self.sort.observe(lambda _: self._render_items(), names="value")
        self._rows: list[list[Any]] = []
        self.transforms = w.HTML()
        self.diff = w.HTML()
        self.widget = w.VBox(
            [
                self.header,
                w.HBox([w.HTML("<b>Items</b>"), self.filter, self.sort, self.picker]),
                self.items,
                w.HTML("<b>Transforms</b>"),
                self.transforms,
                w.HTML("<b>Diff to the previous request</b>"),
                self.diff,
            ],
            layout=w.Layout(max_height="520px", overflow="auto"),
        )
        self.highlight = ""
        self.header.value = EMPTY
        self.items.value = self.transforms.value = self.diff.value = "<i>–</i>"

    def show(
        self, step: int, manifest: ContextManifest, request: ModelRequest | None = None
    ) -> None:
        """Show request ``step``: each item described (with ``request``, the messages it stands
        for: role, tool, preview), what was done to it and why."""
        error = (
            f"<br><span style='color:#c00'>{html.escape(manifest.error)}</span>"
            if manifest.error
            else ""
        )
        self.header.value = (
            f"<b>Step {step}</b> · {html.escape(manifest.purpose)} · request {html.escape(manifest.request_id)}"
            f" · validation <b>{html.escape(manifest.validation)}</b> · "
            f"{manifest.estimated_input_tokens} / {manifest.input_limit} tokens "
            f"({html.escape(manifest.counting_method)}{', exact' if manifest.exact else ''}){error}"
        )
        self._rows = [
            [
                r.placement,
                r.role or r.kind,
                r.label,
                r.tokens,
                ", ".join(r.badges),
                r.why,
                r.id + (" ◀" if r.id == self.highlight else ""),
            ]
            for r in item_rows(manifest, request)
        ]
        self._render_items()
        options = ["", *(item.id for item in manifest.items)]
        with self.picker.hold_trait_notifications():
            if list(self.picker.options) != options:
                self.picker.options = options
            self.picker.value = self.highlight if self.highlight in options else ""
        t_columns = ["kind", "target", "detail", "tokens_before", "tokens_after"]
        t_rows = [[str(t), *(getattr(t, c) for c in t_columns)] for t in manifest.transforms]
        self.transforms.value = (
            _table(t_rows, ["code", *t_columns], "ctxlab-transforms") if t_rows else "<i>none</i>"
        )
        diff = manifest.diff
        if diff is None:
            self.diff.value = "<i>first request</i>"
        else:
            parts = []
            for label, ids in (("appeared", diff.added), ("dropped", diff.removed)):
                if ids:
                    parts.append(
                        f"<b>{label}</b>: " + ", ".join(html.escape(i) for i in list(ids)[:30])
                    )
            for label, changes in (("shrank", diff.shrank), ("grew", diff.grew)):
                if changes:
                    parts.append(
                        f"<b>{label}</b>: "
                        + ", ".join(f"{html.escape(i)} ({a}→{b})" for i, a, b in list(changes)[:30])
                    )
            self.diff.value = "<br>".join(parts) or "<i>no change</i>"

    def _render_items(self) -> None:
        needle = self.filter.value.strip().lower()
        rows = [r for r in self._rows if not needle or needle in " ".join(map(str, r)).lower()]
        key = self.sort.value
        if key == "tokens":
            rows.sort(key=lambda r: -int(r[3]))
        elif key in ("placement", "done"):
            index = ITEM_COLUMNS.index(key)
            rows.sort(key=lambda r: (str(r[index]) == "", str(r[index])))
        shown = f"<i>{len(rows)} of {len(self._rows)} items</i>" if needle else ""
        self.items.value = shown + _table(rows, list(ITEM_COLUMNS), "ctxlab-items")


class ContextPanel:
    """What the model saw at one step: System, messages, material; tool output escaped."""

    def __init__(self) -> None:
        self.widget = w.HTML(EMPTY, layout=w.Layout(max_height="520px", overflow="auto"))

    def show(
        self,
        step: int,
        request: ModelRequest | None,
        cache: TokenCache,
        manifest: ContextManifest | None = None,
    ) -> None:
        """Show request ``step``; with its ``manifest``, System and tool schemas carry the
        manifest's token counts (one count per item, the same in every panel)."""
        if request is None:
            self.widget.value = (
                f"<i>step {step}: no request to show — its preparation failed, or it was made "
                "before this Lab was opened (the session log keeps manifests, not requests)</i>"
            )
            return
        counted = {i.id: i.tokens for i in manifest.items} if manifest is not None else {}
        system = sum(t for i, t in counted.items() if i.startswith("system/"))
        parts = [f"<div class='ctxlab-context'><b>Step {step}</b>"]
        parts.append(
            _details("system", request.system, system or cache.text(request.system), open_=False)
        )
        for tool in request.tools:
            tokens = counted.get(f"tool/{tool.name}") or cache.text(tool.rendered)
            parts.append(_details(f"tool schema {tool.name}", tool.rendered, tokens))
        names = tool_names(request.messages)
        for message in request.messages:
            for block in message.content:
                parts.append(_block(message.role, block, cache, names))
        parts.append("</div>")
        self.widget.value = "".join(parts)


def _pretty(text: str) -> str:
    """JSON laid out for reading; anything else as it is."""
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return text
    try:
        return json.dumps(json.loads(stripped), indent=2, ensure_ascii=False)
    except (ValueError, RecursionError):
        return text


def _details(title: str, text: str, tokens: int, *, open_: bool = False) -> str:
    shown = (
        text
        if len(text) <= PREVIEW_CHARS
        else (text[:PREVIEW_CHARS] + f"\n… {len(text) - PREVIEW_CHARS} more characters")
    )
    return (
        f"<details{' open' if open_ else ''}><summary>{html.escape(title)} · {tokens} tokens"
        f"</summary><pre class='ctxlab-text' style='white-space:pre-wrap'>{html.escape(shown)}"
        "</pre></details>"
    )


def _block(role: str, block: Any, cache: TokenCache, names: dict[str, str] | None = None) -> str:
    tokens = cache.block(block)
    if isinstance(block, ToolResultBlock):
        name = (names or {}).get(block.tool_use_id, "a tool")
        title = f"{role} · tool result of {name} ({block.tool_use_id})" + (
            " (error)" if block.is_error else ""
        )
        return _details(title, _pretty(block.text), tokens)
    if isinstance(block, ToolUseBlock):
        shown = json.dumps(block.input, indent=2, ensure_ascii=False)
        return _details(f"{role} · tool call {block.name} ({block.id})", shown, tokens, open_=True)
    if isinstance(block, TextBlock):
        return _details(f"{role} · text", block.text, tokens, open_=True)
    if isinstance(block, HintBlock):
        return _details(f"{role} · hint", block.hint, tokens, open_=True)
    if isinstance(block, ImageBlock):
        return f"<div>{html.escape(role)} · image · {tokens} tokens</div>"
    if isinstance(block, ThinkingBlock):
        return _details(f"{role} · thinking", block.thinking, tokens)
    if isinstance(block, DocumentBlock):
        title = f"{role} · document" + (f" {block.title}" if block.title else "")
        return _details(title, block.text or f"({block.source.get('type')} source)", tokens)
    if isinstance(block, ProviderBlock):
        return _details(f"{role} · {block.kind}", block.data_json, tokens)
    if isinstance(block, RedactedThinkingBlock):
        return f"<div>{html.escape(role)} · redacted thinking · {tokens} tokens</div>"
    return f"<div>{html.escape(role)} · {html.escape(type(block).__name__)}</div>"


class ConfigPanel:
    """A control per tunable `ContextConfig` field, generated from the config's own metadata
    (title, description, bounds); Apply validates, then sets the agent's config."""

    def __init__(
        self, agent: Agent | StepSource, on_applied: Callable[[ContextConfig], None]
    ) -> None:
        self.agent = agent
        self._on_applied = on_applied
        config = agent.context_config
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

    def reset(self) -> None:
        """Put every control back to the defaults of the config's type (Apply applies them)."""
        default = type(self.agent.context_config)()
        for name, control in self.controls.items():
            control.value = getattr(default, name)
        self.status.value = "<span>defaults shown; Apply to use them</span>"

    @property
    def message(self) -> str:
        """The status line as plain text (what Apply or Defaults last said)."""
        return html.unescape(re.sub(r"<[^>]+>", "", self.status.value))

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
        self.status.value = (
            "<span style='color:#080'>Applied: in force from the next request</span>"
        )
        self._on_applied(config)
        return config


def _control(field: TunableField, value: Any) -> w.ValueWidget:
    style = {"description_width": "240px"}
    tooltip = " ".join(field.description.split())
    label = field.title or field.name.replace("_", " ")
    if field.kind == "bool":
        return w.Checkbox(value=value, description=label, tooltip=tooltip, style=style)
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
    )


class SourcesPanel:
    """Registered sources: enable, priority, required; edit the text of text sources."""

    def __init__(self, agent: Agent | StepSource) -> None:
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
        self.stop_button = w.Button(
            description="Stop", button_style="warning", icon="stop", disabled=True
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
