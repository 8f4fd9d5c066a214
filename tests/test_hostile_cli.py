"""The command line on arbitrary arguments: it exits with a status and a message, never a
traceback (hypothesis)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxlab.__main__ import main

_numbers = st.integers(-10, 10).map(str) | st.sampled_from(["0", "-1", "abc", "", "1e9"])
_flags = st.sampled_from(["--window", "--workers", "--preset", "--cache", "--out"])


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(flags=st.lists(st.tuples(_flags, _numbers), max_size=4))
def test_sweep_arguments_exit_with_a_status_and_never_a_traceback(
    flags: list[tuple[str, str]], tmp_path_factory: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path_factory.mktemp("cli")
    argv = ["sweep"]
    for flag, value in flags:
        argv += [flag, str(folder / value) if flag in ("--cache", "--out") else value]
    argv.append(str(Path(folder) / "no-such-session.jsonl"))  # fails fast: nothing is swept
    try:
        status = main(argv)
    except SystemExit as exc:  # argparse's own refusal of a malformed value: its usage line
        status = int(exc.code or 0)
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err and err.strip()
