"""Binder as repo2docker would build it, without Docker.

repo2docker, finding a ``binder/`` folder, reads only the files in it: ``runtime.txt`` names the
Python, ``requirements.txt`` is installed with ``pip install -r binder/requirements.txt`` from the
repository's root, then ``postBuild`` runs if there is one. This test does the same in a fresh
virtual environment on that Python, then runs the tour there with nbval, as a Binder user would
open it (offline, no API key).

Packages come from ``build/wheelhouse`` (``make binder`` downloads it, a setup step like any
install): the test itself never reaches the network.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
BINDER = REPO / "binder"
WHEELHOUSE = Path(os.environ.get("CTXLAB_WHEELHOUSE", REPO / "build" / "wheelhouse"))


def runtime_python() -> tuple[int, int]:
    """The Python version ``binder/runtime.txt`` names (repo2docker's ``python-X.Y``)."""
    text = (BINDER / "runtime.txt").read_text().strip()
    match = re.fullmatch(r"python-(\d+)\.(\d+)", text)
    assert match, f"binder/runtime.txt must read python-X.Y, not {text!r}"
    return int(match.group(1)), int(match.group(2))


def test_runtime_satisfies_requires_python() -> None:
    # repo2docker ignores requires-python once binder/ exists: the runtime must satisfy it.
    import tomllib

    major, minor = runtime_python()
    required = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["requires-python"]
    low = re.fullmatch(r">=\s*(\d+)\.(\d+)", required)
    assert low, required
    assert (major, minor) >= (int(low.group(1)), int(low.group(2)))


def _interpreter(major: int, minor: int) -> str | None:
    if sys.version_info[:2] == (major, minor):
        return sys.executable
    return shutil.which(f"python{major}.{minor}")


def test_binder_environment_runs_the_tour(tmp_path: Path) -> None:
    major, minor = runtime_python()
    python = _interpreter(major, minor)
    if python is None:
        pytest.skip(f"no python{major}.{minor} on this machine (binder/runtime.txt names it)")
    if not (WHEELHOUSE / ".done").is_file():
        pytest.skip(f"no wheelhouse at {WHEELHOUSE}: run `make binder`, which downloads it")
    env_dir = tmp_path / "binder-env"
    subprocess.run([python, "-m", "venv", str(env_dir)], check=True)
    env_python = str(env_dir / "bin" / "python")
    offline = ["--no-index", "--find-links", str(WHEELHOUSE), "--no-cache-dir", "--quiet"]

    def run(*command: str) -> None:
        result = subprocess.run(command, cwd=REPO, capture_output=True, text=True)
        assert result.returncode == 0, f"{command}:\n{result.stdout[-4000:]}{result.stderr[-4000:]}"

    # What repo2docker runs, from the repository's root.
    run(env_python, "-m", "pip", "install", *offline, "-r", "binder/requirements.txt")
    if (BINDER / "postBuild").is_file():
        run("bash", str(BINDER / "postBuild"))
    version = subprocess.run(
        [env_python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    assert version == f"{major}.{minor}"
    # The test's own tool, then the tour as a Binder user opens it: no API key.
    run(env_python, "-m", "pip", "install", *offline, "nbval")
    # The project's pytest settings name plugins of the dev environment: not Binder's.
    ini = tmp_path / "pytest.ini"
    ini.write_text("[pytest]\n")
    result = subprocess.run(
        [
            env_python,
            "-m",
            "pytest",
            "-c",
            str(ini),
            "--rootdir",
            str(REPO),
            "--nbval-lax",
            "--nbval-current-env",
            "-p",
            "no:cacheprovider",
            "-q",
            "notebooks/01_tour.ipynb",
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "ANTHROPIC_API_KEY": "", "PYTHONPATH": ""},
    )
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]
    assert "passed" in result.stdout
