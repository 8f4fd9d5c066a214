"""Stage 2: keep at most ``max_image_num`` images; older ones are offloaded or dropped."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from typing import Any

from ctxlab.exceptions import OffloadError
from ctxlab.manifest import Transform
from ctxlab.messages import (
    AssistantMessage,
    Base64ImageSource,
    HintBlock,
    ImageBlock,
    TextBlock,
    ToolResultBlock,
    UserMessage,
)
from ctxlab.pipeline._offload import Offloader

__all__ = ["limit_images"]

_EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}


def _hint_text(image: ImageBlock, limit: int, path: str | None) -> str:
    if path is not None:
        return (
            f"An image was removed from the context by the image limit (max_image_num={limit}). "
            f"It was saved to '{path}'; read that file if you need it again."
        )
    where = (
        f" (it was at {image.source.url})"
        if not isinstance(image.source, Base64ImageSource)
        else ""
    )
    return (
        f"An image was removed from the context by the image limit (max_image_num={limit})"
        f"{where}; it is no longer available in this conversation."
    )


def _persist(image: ImageBlock, offloader: Offloader | None) -> str | None:
    if offloader is None or not isinstance(image.source, Base64ImageSource):
        return None
    data = base64.b64decode(image.source.data, validate=False)
    ext = _EXTENSIONS.get(image.source.media_type, "bin")
    return offloader.write(f"context_offload/images/image-{image.content_hash}.{ext}", data)


def limit_images(
    conversation: Sequence[UserMessage | AssistantMessage],
    max_images: int,
    offloader: Offloader | None,
) -> tuple[tuple[UserMessage | AssistantMessage, ...], list[Transform]]:
    """Replace all but the newest ``max_images`` images with hints (offloading when possible)."""
    total = sum(m.image_count for m in conversation if isinstance(m, UserMessage))
    excess = total - max_images
    if excess <= 0:
        return tuple(conversation), []
    transforms: list[Transform] = []
    result: list[UserMessage | AssistantMessage] = []

    def replace(image: ImageBlock, inside_result: bool) -> Any:
        nonlocal excess
        if excess <= 0:
            return image
        try:
            path = _persist(image, offloader)
        except (OffloadError, binascii.Error, ValueError) as exc:
            # Never a pointer to a missing file: keep the image over the limit.
            transforms.append(Transform("offload_failed", image.content_hash, str(exc)))
            excess -= 1
            return image
        excess -= 1
        transforms.append(
            Transform("image_offload" if path else "image_drop", image.content_hash, path or "")
        )
        text = _hint_text(image, max_images, path)
        return (
            TextBlock(text=HintBlock(hint=text).rendered) if inside_result else HintBlock(hint=text)
        )

    for message in conversation:
        if excess <= 0 or not isinstance(message, UserMessage) or not message.image_count:
            result.append(message)
            continue
        blocks: list[Any] = []
        for block in message.content:
            if isinstance(block, ImageBlock):
                blocks.append(replace(block, inside_result=False))
            elif isinstance(block, ToolResultBlock) and block.images:
                assert not isinstance(block.content, str)
                parts = tuple(
                    replace(p, inside_result=True) if isinstance(p, ImageBlock) else p
                    for p in block.content
                )
                blocks.append(block.evolve(content=parts))
            else:
                blocks.append(block)
        result.append(UserMessage(content=tuple(blocks)))
    return tuple(result), transforms
