"""Stage 3, the eviction pass: very large tool results are offloaded behind a head/tail preview.

Stage 3 has two passes, both applied to the working state so that a result is processed once
(`scan_conversation` runs them in order):

- eviction by characters (the harness variant): results over ``max_result_chars`` are written to
  ``eviction_path`` and replaced by head/tail previews and the path; needs an offloader.
- truncation by tokens (``tool_result_limit``): a result over the limit keeps a head that fits, then
  the ``<<<TRUNCATED>>>`` marker and a system-reminder (with the file path when offloaded);
  `truncate_results` in ``_results.py``, shared with stage 5's cut of an oversized latest turn.
"""

from __future__ import annotations

from collections.abc import Sequence

from ctxlab.config._sections import ToolResultEviction
from ctxlab.exceptions import OffloadError
from ctxlab.manifest import Transform
from ctxlab.messages import AssistantMessage, ToolResultBlock, UserMessage
from ctxlab.pipeline._offload import Offloader, offload_name
from ctxlab.pipeline._results import replace_results, with_text
from ctxlab.tokens import TokenCache

__all__ = ["evict_large_results"]

Conversation = tuple[UserMessage | AssistantMessage, ...]


def evict_large_results(
    conversation: Sequence[UserMessage | AssistantMessage],
    config: ToolResultEviction,
    offloader: Offloader | None,
    tool_names: dict[str, str],
    cache: TokenCache,
) -> tuple[Conversation, list[Transform]]:
    """Offload results over ``max_result_chars`` to files, keeping head and tail previews."""
    if not config.enabled or offloader is None:
        return tuple(conversation), []
    transforms: list[Transform] = []
    limit = config.max_result_chars

    def replace(result: ToolResultBlock) -> ToolResultBlock:
        text = result.text
        if len(text) <= limit or tool_names.get(result.tool_use_id) in config.excluded_tools:
            return result
        data = text.encode()
        relative = f"{config.eviction_path}/{offload_name(result.tool_use_id, data)}.txt"
        try:
            path = offloader.write(relative, data)
        except OffloadError as exc:
            transforms.append(Transform("offload_failed", result.tool_use_id, str(exc)))
            return result
        keep = config.preview_chars
        removed = len(text) - 2 * keep
        preview = (
            f"{text[:keep]}\n\n... [{removed} characters offloaded to '{path}'; read that file "
            f"for the full output] ...\n\n{text[len(text) - keep :]}"
        )
        new = with_text(result, preview)
        transforms.append(
            Transform(
                "tool_result_offload",
                result.tool_use_id,
                path,
                cache.block(result),
                cache.block(new),
            )
        )
        return new

    out = tuple(
        replace_results(m, replace)
        if isinstance(m, UserMessage) and m.longest_result_chars > limit
        else m
        for m in conversation
    )
    return out, transforms
