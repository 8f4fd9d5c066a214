"""A config as static HTML: its tunable fields, those that differ from the defaults in bold."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ctxlab.config._fields import tunable_fields
from ctxlab.util._html import STYLE, escape

if TYPE_CHECKING:
    from ctxlab.config._config import ContextConfig

__all__ = ["config_html"]


def config_html(config: ContextConfig) -> str:
    """The tunable fields with their values; those that differ from the defaults in bold."""
    default = type(config)()
    rows = []
    for field in tunable_fields(type(config)):
        value = getattr(config, field.name)
        changed = value != getattr(default, field.name, value)
        shown = f"<b>{escape(value)}</b>" if changed else escape(value)
        rows.append(
            f"<tr><td style='padding:2px 6px'>{escape(field.title)}</td><td>{shown}</td></tr>"
        )
    return f"<b>ContextConfig</b><table style='{STYLE}'>{''.join(rows)}</table>"
