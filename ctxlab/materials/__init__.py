"""Material: System parts, runtime and reference blocks, the sources that supply them, and what
a recording does not hold of a request (`Unrecorded`)."""

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
from ctxlab.materials._unrecorded import Unrecorded
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
    "Unrecorded",
    "WorkspaceMaterial",
    "limit_workspace",
    "load_sources",
    "load_workspace",
    "validate_source_name",
]
