"""The demo's workspace: a folder it made is removed with it."""

from __future__ import annotations

import os
from pathlib import Path


def test_the_demo_removes_the_folder_it_made(tmp_path: Path) -> None:
    import subprocess
    import sys

    code = (
        "from ctxlab.demo import demo_agent; a = demo_agent(); "
        "print(a.workspace); assert a.workspace.is_dir()"
    )
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True
    )
    made = Path(done.stdout.strip())
    assert made.parent == tmp_path and not made.exists()
    kept = tmp_path / "mine"
    subprocess.run(
        [sys.executable, "-c", f"from ctxlab.demo import demo_agent; demo_agent({str(kept)!r})"],
        env=env,
        check=True,
    )
    assert (kept / "ledger").is_dir()  # a folder the user chose is theirs
