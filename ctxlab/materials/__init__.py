"""Material: System parts, runtime and reference blocks, and the sources that supply them."""

from ctxlab.materials._block import ContextBlock, Material, MaterialCategory, Materials, SystemPart
from ctxlab.materials._sources import (
    ContextRequest,
    ContextSource,
    FailurePolicy,
    SourceRegistration,
    TextSource,
    load_sources,
    validate_source_name,
)
from ctxlab.materials._workspace import (
    MAX_FILE_BYTES,
    WorkspaceMaterial,
    limit_workspace,
    load_workspace,
)

__all__ = [
    "MAX_FILE_BYTES",
    "ContextBlock",
    "ContextRequest",
    "ContextSource",
    "FailurePolicy",
    "Material",
    "MaterialCategory",
    "Materials",
    "SourceRegistration",
    "SystemPart",
    "TextSource",
    "WorkspaceMaterial",
    "limit_workspace",
    "load_sources",
    "load_workspace",
    "validate_source_name",
]
