"""Tools from plain typed Python functions: schema from the signature and the docstring.

Arguments are validated with pydantic before the function runs; a validation error, like any
exception the function raises, becomes an error result for the model — never a crash of the loop.
Sync functions run in a worker thread so that a slow tool never blocks the event loop (and with it
the notebook's panels).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, get_type_hints

from pydantic import BaseModel, ConfigDict, Field, ValidationError, create_model

from ctxlab.exceptions import ToolDefinitionError, UsageError
from ctxlab.messages import ImageBlock, TextBlock, ToolResultBlock, decoded_output
from ctxlab.messages._request import ToolSchema
from ctxlab.util._checks import shown

__all__ = ["Tool", "ToolOutput", "tool"]

ToolOutput = str | list[TextBlock | ImageBlock] | tuple[TextBlock | ImageBlock, ...]
"""What a tool returns: text, or text and image parts. Anything else is rendered as JSON."""

_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def _parse_docstring(doc: str) -> tuple[str, dict[str, str]]:
    """The description and per-argument descriptions of a docstring in Google, NumPy or Sphinx
    (reST) style, read with ``docstring_parser`` (installed with the ``anthropic`` SDK)."""
    import docstring_parser

    parsed = docstring_parser.parse(inspect.cleandoc(doc))
    head = "\n\n".join(part for part in (parsed.short_description, parsed.long_description) if part)
    params = {
        p.arg_name.lstrip("*"): " ".join((p.description or "").split()) for p in parsed.params
    }
    return head.strip(), params


def _strip_titles(schema: Any) -> Any:
    # Pydantic's titles repeat the names; they cost tokens at every request and tell nothing.
    if isinstance(schema, dict):
        return {k: _strip_titles(v) for k, v in schema.items() if k != "title"}
    if isinstance(schema, list):
        return [_strip_titles(v) for v in schema]
    return schema


@dataclass
class Tool:
    """A callable the model can use. Build one with `Tool.from_function` or `@tool`."""

    name: str
    """The name the model calls."""
    description: str
    """What it does, for the model."""
    fn: Callable[..., Any]
    """The function that runs."""
    arguments: type[BaseModel]
    """The pydantic model that validates the arguments."""
    always_allowed: bool = False
    """Bypass the permission hook (the CompressContext tool)."""
    for_workspace: Callable[[Path], Tool] | None = field(default=None, repr=False, compare=False)
    """How to make the same tool act on another folder — a fork's copy of the workspace
    (`ctxlab.fork`); None when the tool is bound to nothing a copy could isolate (a fork
    refuses it unless told it is safe to share)."""
    input_schema: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        if not _NAME.match(self.name):
            msg = (
                f"tool name {self.name!r} is invalid: use 1-64 letters, digits, '_' or '-' "
                "(pass name=... to rename it)"
            )
            raise ToolDefinitionError(msg)
        try:
            schema = self.arguments.model_json_schema()
        except Exception as exc:  # a field no JSON schema describes (a callable, a class)
            msg = f"tool {self.name!r}: its arguments cannot be described to a model: {exc}"
            raise ToolDefinitionError(msg) from exc
        self.input_schema = _strip_titles(schema)

    @classmethod
    def from_function(
        cls,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        description: str | None = None,
        always_allowed: bool = False,
    ) -> Tool:
        """A tool from a typed function; every parameter needs a type annotation."""
        if not callable(fn):
            msg = f"a tool must be a function, got {type(fn).__name__}"
            raise ToolDefinitionError(msg)
        tool_name: str = name or str(getattr(fn, "__name__", ""))
        doc_text, doc_params = _parse_docstring(inspect.getdoc(fn) or "")
        try:
            hints = get_type_hints(fn)
        except Exception as exc:
            msg = f"cannot read the type hints of tool {tool_name!r}: {exc}"
            raise ToolDefinitionError(msg) from exc
        fields: dict[str, Any] = {}
        for param in inspect.signature(fn).parameters.values():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                msg = f"tool {tool_name!r}: *args and **kwargs cannot be described to a model"
                raise ToolDefinitionError(msg)
            if param.name not in hints:
                msg = (
                    f"tool {tool_name!r}: parameter {param.name!r} has no type annotation; "
                    "annotate it (e.g. `path: str`) so the model knows what to pass"
                )
                raise ToolDefinitionError(msg)
            default = ... if param.default is param.empty else param.default
            fields[param.name] = (
                hints[param.name],
                Field(default, description=doc_params.get(param.name) or None),
            )
        try:
            arguments = create_model(
                f"{tool_name}_arguments",
                __config__=ConfigDict(extra="forbid"),
                **fields,
            )
        except Exception as exc:
            msg = f"tool {tool_name!r}: its parameters cannot form a JSON schema: {exc}"
            raise ToolDefinitionError(msg) from exc
        return cls(
            name=tool_name,
            description=description if description is not None else doc_text,
            fn=fn,
            arguments=arguments,
            always_allowed=always_allowed,
        )

    @property
    def schema(self) -> ToolSchema:
        """The tool as the model sees it."""
        return ToolSchema(self.name, self.description, self.input_schema)

    async def run(self, tool_use_id: str, arguments: Mapping[str, Any]) -> ToolResultBlock:
        """Validate ``arguments``, run the function, and wrap its output (or error) as a result."""
        if not isinstance(tool_use_id, str) or not tool_use_id:
            msg = f"tool_use_id must be the call's id (text), got {shown(tool_use_id)}"
            raise UsageError(msg)
        if not isinstance(arguments, Mapping):  # a model's call of no object: said to it
            return ToolResultBlock(
                tool_use_id=tool_use_id,
                content=f"Invalid arguments for {self.name}: expected an object, got "
                f"{type(arguments).__name__}",
                is_error=True,
            )
        try:
            validated = self.arguments.model_validate(dict(arguments))
        except ValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or '(arguments)'}: {e['msg']}"
                for e in exc.errors()
            )
            return ToolResultBlock(
                tool_use_id=tool_use_id,
                content=f"Invalid arguments for {self.name}: {problems}",
                is_error=True,
            )
        kwargs = {name: getattr(validated, name) for name in type(validated).model_fields}
        try:
            if inspect.iscoroutinefunction(self.fn):
                output = await self.fn(**kwargs)
            else:
                output = await asyncio.to_thread(self.fn, **kwargs)
                if inspect.isawaitable(output):
                    output = await output
        except Exception as exc:
            return ToolResultBlock(
                tool_use_id=tool_use_id,
                content=decoded_output(f"{self.name} failed: {type(exc).__name__}: {exc}"),
                is_error=True,
            )
        return ToolResultBlock(tool_use_id=tool_use_id, content=_as_content(output))


def _as_content(output: Any) -> str | tuple[TextBlock | ImageBlock, ...]:
    if isinstance(output, str | bytes | bytearray):
        return decoded_output(output)
    if isinstance(output, (TextBlock, ImageBlock)):
        return (output,)
    if isinstance(output, (list, tuple)) and all(
        isinstance(p, (TextBlock, ImageBlock)) for p in output
    ):
        return tuple(output)
    if output is None:
        return ""
    try:
        return decoded_output(json.dumps(output, ensure_ascii=False, default=str, indent=1))
    except (TypeError, ValueError):
        return decoded_output(str(output))


def tool(
    fn: Callable[..., Any] | None = None,
    *,
    name: str | None = None,
    description: str | None = None,
) -> Any:
    """Decorator form of `Tool.from_function`: ``@tool`` or ``@tool(name="x")``."""

    def wrap(f: Callable[..., Any]) -> Tool:
        return Tool.from_function(f, name=name, description=description)

    return wrap(fn) if fn is not None else wrap
