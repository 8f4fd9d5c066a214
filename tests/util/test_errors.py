"""Every error ctxlab raises is a `CtxlabError`, typed by what went wrong."""

from __future__ import annotations

from ctxlab.exceptions import CtxlabError, InvalidConversation


def test_error_classes_are_typed() -> None:
    assert issubclass(InvalidConversation, CtxlabError)
