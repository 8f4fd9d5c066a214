"""The public surface: what ``from ctxlab import ...`` offers a notebook, where the other public
names live, and the deprecated names that still work for one release."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest

import ctxlab


def test_the_root_offers_what_a_notebook_imports() -> None:
    assert len(ctxlab.__all__) <= 60
    assert {"Agent", "ContextConfig", "load", "WhatIf", "sweep", "Transcript"} <= set(
        ctxlab.__all__
    )
    assert not set(ctxlab.__all__) & set(ctxlab.PACKAGE_NAMES)


@pytest.mark.parametrize("name", sorted(ctxlab.PACKAGE_NAMES))
def test_every_other_public_name_lives_in_its_package_and_still_imports_from_the_root(
    name: str,
) -> None:
    package = importlib.import_module(ctxlab.PACKAGE_NAMES[name])
    assert name in package.__all__
    assert getattr(ctxlab, name) is getattr(package, name)


def test_an_unknown_root_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'Nope'"):
        ctxlab.Nope  # noqa: B018


def test_a_star_import_gives_only_the_notebook_names() -> None:
    code = (
        "from ctxlab import *; import sys; print(sorted(k for k in dir() if not k.startswith('_')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    names = set(eval(out.stdout))  # a printed list of strings
    assert names == {n for n in ctxlab.__all__ if not n.startswith("_")} | {"sys"}


def test_renamed_names_warn_and_still_work() -> None:
    from ctxlab.manifest import Purpose

    with pytest.warns(DeprecationWarning, match="ctxlab.manifest.Purpose"):
        from ctxlab.models import RequestPurpose  # type: ignore[attr-defined]
    assert RequestPurpose is Purpose
