"""A scan's message items are made without `ManifestItem`'s ``__init__`` (`_message_item` sets
the slots themselves): each must be the item that ``__init__`` makes from the same values."""

from __future__ import annotations

import dataclasses

from ctxlab import ApproximateCounter, TokenCache
from ctxlab.manifest import ManifestItem
from ctxlab.messages import TextBlock, UserMessage
from ctxlab.pipeline import message_items
from ctxlab.pipeline._scan import _message_item
from tests.helpers import session


def _slots(item: ManifestItem) -> dict[str, object]:
    return {f.name: getattr(item, f.name) for f in dataclasses.fields(item)}


def test_manifest_item_has_an_init_that_only_sets_its_fields() -> None:
    # `_message_item` skips ``__init__``: sound only while it does nothing but set each field
    # (no ``__post_init__``, no field outside ``__init__``, the generated ``__init__``).
    params = ManifestItem.__dataclass_params__  # type: ignore[attr-defined]
    assert params.frozen and params.init
    assert not hasattr(ManifestItem, "__post_init__")
    assert all(f.init for f in dataclasses.fields(ManifestItem))
    assert ManifestItem.__init__.__code__.co_filename == "<string>"


def test_a_message_item_is_the_item_init_makes() -> None:
    made = _message_item("message/ab#2", 17, "ab", "assistant", 3)
    expected = ManifestItem(
        "message/ab#2", "message", "conversation", 17, "ab", None, None, "assistant", 3
    )
    assert _slots(made) == _slots(expected)
    assert made == expected and hash(made) == hash(expected) and repr(made) == repr(expected)


def test_the_items_of_a_conversation_are_the_items_init_makes() -> None:
    repeated = UserMessage(content=(TextBlock(text="again"),))
    conversation = [*session(6), repeated, repeated]
    cache = TokenCache(ApproximateCounter())
    seen: dict[str, int] = {}
    expected = []
    for message in conversation:
        digest = message.content_hash
        seen[digest] = seen.get(digest, 0) + 1
        item_id = f"message/{digest}" + (f"#{seen[digest]}" if seen[digest] > 1 else "")
        expected.append(
            ManifestItem(
                item_id,
                "message",
                "conversation",
                cache.message(message),
                digest,
                role=message.role,
                blocks=len(message.content) or 1,
            )
        )
    made = message_items(conversation, cache)
    assert [_slots(i) for i in made] == [_slots(i) for i in expected]
    assert made == expected and made[-1].id.endswith("#2")
