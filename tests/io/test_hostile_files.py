"""Arbitrary bytes as a transcript file load or raise a typed error (hypothesis)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ctxlab import (
    load_transcript,
)
from tests.strategies import SETTINGS, json_value, typed


@SETTINGS
@given(
    st.binary(max_size=400)
    | st.lists(json_value, max_size=4).map(
        lambda values: "\n".join(json.dumps(v) for v in values).encode()
    )
)
def test_transcript_files_load_or_raise_a_typed_error(tmp_path_factory: Any, data: bytes) -> None:
    path = tmp_path_factory.mktemp("t") / "session.jsonl"
    path.write_bytes(data)
    typed(load_transcript, path)
