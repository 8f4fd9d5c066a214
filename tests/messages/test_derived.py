"""Values derived from a frozen message's fields (hashes, rendered forms) are computed once, and
a copy with other fields computes its own."""

from __future__ import annotations

import threading

from ctxlab import TextBlock, ToolUseBlock, UserMessage
from ctxlab.messages._frozen import Frozen, derived


def test_a_copy_with_new_content_has_the_new_contents_hash() -> None:
    block = TextBlock(text="a")
    assert block.content_hash  # computed and kept on the instance
    copy = block.model_copy(update={"text": "b"})
    assert copy.content_hash == TextBlock(text="b").content_hash != block.content_hash
    message = UserMessage(content=(block,))
    assert message.content_hash
    other = message.model_copy(update={"content": (copy,)})
    assert other.content_hash == UserMessage(content=(copy,)).content_hash != message.content_hash
    use = ToolUseBlock(id="c", name="sh", input={"cmd": "é"})
    assert use.input_json == '{"cmd":"é"}'
    assert use.model_copy(update={"input": {"n": 1}}).input_json == '{"n":1}'


def test_a_derived_value_is_computed_once_and_is_not_a_field() -> None:
    calls: list[int] = []

    class Thing(Frozen):
        n: int

        @derived
        def double(self) -> int:
            calls.append(self.n)
            return 2 * self.n

    thing = Thing(n=3)
    assert (thing.double, thing.double) == (6, 6) and calls == [3]
    assert list(Thing.model_fields) == ["n"] and thing.model_dump() == {"n": 3}
    # Read from threads at once: the same value (derived from frozen fields) whoever computes it.
    fresh = Thing(n=5)
    seen: list[int] = []
    threads = [threading.Thread(target=lambda: seen.append(fresh.double)) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == [10] * 4
