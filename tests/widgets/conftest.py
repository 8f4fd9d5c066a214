"""Fixtures of the notebook layer's tests."""

from __future__ import annotations

import pytest

from tests.helpers import Displays


@pytest.fixture
def displays(monkeypatch: pytest.MonkeyPatch) -> Displays:
    """IPython's ``display`` and ``update_display`` recorded instead of sent (`Displays`)."""
    import IPython.display

    recorded = Displays()
    monkeypatch.setattr(IPython.display, "display", recorded.display)
    monkeypatch.setattr(IPython.display, "update_display", recorded.update_display)
    return recorded
