"""`follow` on a file that changes under it — appended, truncated, replaced, damaged — polls
without raising anything but a typed error, and ends with valid requests (hypothesis)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from ctxlab import ApproximateCounter
from ctxlab.exceptions import CtxlabError
from ctxlab.sources._follow import FollowedSession


def _line(kind: str, text: str, n: int) -> bytes:
    message: dict[str, Any] = {"role": kind, "content": text}
    if kind == "assistant":
        message.update(id=f"m{n}", usage={"input_tokens": 10, "output_tokens": 2})
    return (json.dumps({"type": kind, "sessionId": "s", "message": message}) + "\n").encode()


_operations = st.lists(
    st.one_of(
        st.tuples(st.just("append"), st.integers(0, 3)),
        st.tuples(st.just("garbage"), st.binary(max_size=40)),
        st.tuples(st.just("truncate"), st.integers(0, 200)),
        st.tuples(st.just("replace"), st.integers(1, 4)),
    ),
    max_size=8,
)


@settings(max_examples=40, deadline=None)
@given(operations=_operations)
async def test_follow_survives_a_file_changing_under_it(
    operations: list[Any], tmp_path_factory: Any
) -> None:
    path = tmp_path_factory.mktemp("follow") / "session.jsonl"
    path.write_bytes(_line("user", "start", 0))
    session = FollowedSession(path, context_window=8_000, counter=ApproximateCounter())
    turn = 0
    for kind, value in operations:
        if kind == "append":
            for _ in range(value):
                turn += 1
                with path.open("ab") as file:
                    file.write(
                        _line("assistant", f"reply {turn}", turn)
                        + _line("user", f"go {turn}", turn)
                    )
        elif kind == "garbage":
            with path.open("ab") as file:
                file.write(value + b"\n")
        elif kind == "truncate":
            data = path.read_bytes()
            path.write_bytes(data[: min(value, len(data))])
        else:
            path.write_bytes(
                b"".join(
                    _line("user" if i % 2 == 0 else "assistant", f"new {i}", i)
                    for i in range(value * 2)
                )
            )
        try:
            await session.poll()
        except CtxlabError as exc:
            assert str(exc).strip()
    try:
        await session.poll(final=True)
    except CtxlabError as exc:
        assert str(exc).strip()
    assert all(
        m.validation in ("passed", "budget_exceeded", "invalid_conversation", "invalid_tool_pairs")
        for m in session.manifests
    )
