"""A real Dask LocalCluster (two worker processes) for the sweep tests."""

from __future__ import annotations

import gc
import logging
from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture
def cluster() -> Iterator[tuple[Any, Any]]:
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        # The scheduler's HTTP server on a free loopback port: ``None`` binds 8787, and a
        # cluster of an earlier test still closing may hold it (a "port in use" warning, an
        # error here, and the half-started scheduler's socket leaked).
        dashboard_address="127.0.0.1:0",
        host="127.0.0.1",
        silence_logs=logging.CRITICAL,
    )
    client = distributed.Client(cluster)
    try:
        yield cluster, client
    finally:
        client.close(timeout=30)
        cluster.close(timeout=30)
        # What a closed (or deliberately killed) cluster leaves unreferenced is collected
        # here, so a socket it leaked fails this test every time, never a later test by chance.
        gc.collect()
