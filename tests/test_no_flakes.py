"""A test that leaves an object unclosed fails in its own teardown, every run, and fails CI: the
garbage collection each test ends with (tests/conftest.py) turns the object's warning into an
error there (``filterwarnings = error``), pytest exits non-zero, and ``.ci/run`` stops on it —
never a later test failing by chance when the collector happens to run."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

LEAKY = """
import socket


def test_leaves_a_socket_in_a_cycle():
    cycle = [socket.socket()]
    cycle.append(cycle)  # only the collector frees it: at this test's teardown


def test_after_it():
    assert True
"""


def test_a_test_that_leaks_errors_in_its_own_teardown(tmp_path: Path) -> None:
    (tmp_path / "test_leaky.py").write_text(LEAKY)
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            str(tmp_path / "test_leaky.py"),
            "-c",
            str(ROOT / "pyproject.toml"),
            "--rootdir",
            str(tmp_path),
            "-p",
            "tests.conftest",  # the suite's own fixtures, the collection at each teardown
            "-p",
            "no:cacheprovider",
            "-q",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 1, done.stdout[-2000:]
    assert re.search(r"ERROR .*test_leaves_a_socket_in_a_cycle", done.stdout)
    assert "2 passed, 1 error" in done.stdout  # the error is the leaking test's, no other's


def test_ci_stops_on_a_failing_test() -> None:
    run = (ROOT / ".ci" / "run").read_text()
    assert "set -euo pipefail" in run and re.search(r"^make test$", run, re.M)
    makefile = (ROOT / "Makefile").read_text()
    assert re.search(r"^test: .*\bunit\b", makefile, re.M)
    assert re.search(r"^unit: .*\n\t\$\(PY\) -m pytest tests ", makefile, re.M)
