"""`tunable_fields`: the `ContextConfig` fields a UI can offer as controls, described by the
config's own metadata (titles, descriptions, bounds)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from ctxlab.config._config import ContextConfig

__all__ = ["TunableField", "tunable_fields"]


@dataclass(frozen=True)
class TunableField:
    """A `ContextConfig` field a UI can offer as a control, described by the config itself."""

    name: str
    kind: Literal["float", "int", "bool"]
    title: str
    description: str
    minimum: float | None = None
    """The smallest allowed value (inclusive), when bounded."""
    maximum: float | None = None
    """The largest allowed value (inclusive), or the largest a control should offer."""


def tunable_fields(config_type: type[ContextConfig]) -> tuple[TunableField, ...]:
    """The top-level fields of type float, int or bool of ``config_type`` (`ContextConfig` or a
    subclass), with their titles, descriptions and bounds: a new such field appears in the Config
    panel without editing it."""
    fields: list[TunableField] = []
    for name, info in config_type.model_fields.items():
        kinds: dict[Any, Literal["float", "int", "bool"]] = {
            float: "float",
            int: "int",
            bool: "bool",
        }
        kind = kinds.get(info.annotation)
        if kind is None:
            continue
        low: float | None = None
        high: float | None = None
        for rule in info.metadata:
            low = getattr(rule, "ge", getattr(rule, "gt", low))
            high = getattr(rule, "le", getattr(rule, "lt", high))
        extra = info.json_schema_extra if isinstance(info.json_schema_extra, dict) else {}
        if high is None and isinstance(extra.get("ui_max"), int | float):
            high = float(extra["ui_max"])  # type: ignore[arg-type]
        if kind == "int" and low is not None and any(hasattr(r, "gt") for r in info.metadata):
            low += 1  # a strict lower bound on an integer
        fields.append(
            TunableField(name, kind, info.title or name, info.description or "", low, high)
        )
    return tuple(fields)
