"""Offload paths stay inside the workspace and never clobber a file (hypothesis)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from ctxlab import (
    WorkspaceOffloader,
)
from tests.strategies import SETTINGS, any_text


@SETTINGS
@given(st.lists(any_text, min_size=1, max_size=6), st.binary(max_size=200))
def test_offload_paths_stay_inside_and_never_clobber(
    tmp_path_factory: Any, ids: list[str], data: bytes
) -> None:
    from ctxlab.pipeline._offload import offload_name

    root = tmp_path_factory.mktemp("off")
    offloader = WorkspaceOffloader(root)
    for index, item in enumerate(ids):
        content = data + str(index).encode()
        path = Path(offloader.write(f"large/{offload_name(item, content)}.txt", content))
        assert path.is_relative_to(root.resolve()) and path.read_bytes() == content
