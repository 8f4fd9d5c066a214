"""The context build manifest: items, transforms, validation, totals and diffs."""

from ctxlab.manifest._manifest import (
    PLACEMENTS,
    ContextManifest,
    ManifestDiff,
    ManifestItem,
    Placement,
    ProviderUsage,
    Transform,
    Validation,
)

__all__ = [
    "PLACEMENTS",
    "ContextManifest",
    "ManifestDiff",
    "ManifestItem",
    "Placement",
    "ProviderUsage",
    "Transform",
    "Validation",
]
