"""Material: System parts, runtime and reference blocks placed around the conversation."""

from ctxlab.materials._block import ContextBlock, Material, MaterialCategory, Materials, SystemPart

__all__ = ["ContextBlock", "Material", "MaterialCategory", "Materials", "SystemPart"]
