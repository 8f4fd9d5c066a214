"""Real JupyterLab for the browser tests and the browser benchmark: a server started on loopback
(a free port, no token, the app exposed to the page as ``window.jupyterapp``) and stopped with
everything it started, Chromium's flags for a headless run, and notebooks written or uploaded
with their kernelspec set (no kernel dialog).

Used by `tests/browser/test_tour_in_jupyterlab.py` (the server fixture),
`tests/browser/test_lab_views.py` (`upload`) and `benchmarks/lab_browser_bench.py`. Imports no
pytest: the benchmark runs it as a script.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

__all__ = ["CHROMIUM_ARGS", "notebook", "running_jupyterlab", "upload"]

CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
"""Chromium's flags: headless as root in a container, nothing fetched from outside."""


def notebook(cells: Sequence[str]) -> dict[str, Any]:
    """A notebook of code ``cells``, never run, its kernelspec Python 3 (no kernel dialog)."""
    return {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
        "cells": [
            {
                "cell_type": "code",
                "id": f"cell{n}",
                "metadata": {},
                "execution_count": None,
                "outputs": [],
                "source": source,
            }
            for n, source in enumerate(cells)
        ],
    }


def upload(base: str, path: str, cells: Sequence[str]) -> None:
    """Put a notebook of ``cells`` at ``path`` (under the server's root) through the contents
    API of the server at ``base``."""
    content = {"type": "notebook", "format": "json", "content": notebook(cells)}
    request = urllib.request.Request(
        f"{base}/api/contents/{path}",
        data=json.dumps(content).encode(),
        method="PUT",
        headers={"Content-Type": "application/json"},
    )
    urllib.request.urlopen(request, timeout=30).close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _command(port: int, root: Path, options: Mapping[str, str]) -> list[str]:
    # No token, no password, no XSRF check: loopback only. No news, no update check.
    fixed = {
        "ServerApp.ip": "127.0.0.1",
        "ServerApp.token": "",
        "ServerApp.password": "",
        "ServerApp.disable_check_xsrf": "True",
        "ServerApp.root_dir": str(root),
        "LabApp.expose_app_in_browser": "True",
        "LabApp.news_url": "None",
        "LabApp.check_for_updates_class": "jupyterlab.NeverCheckForUpdate",
    }
    settings = [f"--{key}={value}" for key, value in {**fixed, **options}.items()]
    return [
        sys.executable,
        "-m",
        "jupyter",
        "lab",
        "--no-browser",
        "--allow-root",
        f"--port={port}",
        *settings,
    ]


@contextmanager
def running_jupyterlab(
    root: Path,
    log: Path,
    *,
    options: Mapping[str, str] | None = None,
    env: Mapping[str, str] | None = None,
    start_seconds: float = 60.0,
) -> Iterator[str]:
    """JupyterLab serving ``root``, its output in ``log``: yields its base URL once it answers,
    and stops it (and all it started) on the way out. ``options``: more ``--Class.trait`` settings
    (``{"LabApp.workspaces_dir": ...}``); ``env``: the server's environment (default: this
    process's). A `RuntimeError` naming the log when it does not answer in ``start_seconds``."""
    port = _free_port()
    with log.open("w") as out:
        server = subprocess.Popen(
            _command(port, root, options or {}),
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group: the kernels go with it
            env=dict(env) if env is not None else None,
        )
        base = f"http://127.0.0.1:{port}"
        try:
            _wait_until_up(base, server, start_seconds, log)
            yield base
        finally:
            _stop(server)


def _wait_until_up(base: str, server: subprocess.Popen[bytes], seconds: float, log: Path) -> None:
    deadline = time.monotonic() + seconds
    while True:
        try:
            urllib.request.urlopen(base + "/api/status", timeout=1).close()
            return
        except Exception:
            if time.monotonic() > deadline or server.poll() is not None:
                msg = f"JupyterLab did not start in {seconds:.0f} s; see {log}"
                raise RuntimeError(msg) from None
            time.sleep(0.25)


def _stop(server: subprocess.Popen[bytes]) -> None:
    os.killpg(server.pid, signal.SIGTERM)
    try:
        server.wait(15)
    except subprocess.TimeoutExpired:
        os.killpg(server.pid, signal.SIGKILL)
        server.wait(5)
