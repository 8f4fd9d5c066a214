"""The distribution as users get it: built, checked by twine, typed, licensed, self-describing."""

from __future__ import annotations

import subprocess
import sys
import tarfile
import tomllib
import zipfile
from email.parser import Parser
from pathlib import Path

import pytest

import ctxlab

REPO = Path(__file__).resolve().parents[1]

pytest.importorskip("build")
pytest.importorskip("twine")
pytest.importorskip("hatchling")


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    # --no-isolation: the build backend comes from this environment, so no test reaches PyPI.
    subprocess.run(
        [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(REPO)],
        check=True,
        capture_output=True,
    )
    return out


def test_twine_accepts_the_wheel_and_the_sdist(dist: Path) -> None:
    files = sorted(str(p) for p in dist.iterdir())
    assert any(f.endswith(".whl") for f in files) and any(f.endswith(".tar.gz") for f in files)
    result = subprocess.run(
        [sys.executable, "-m", "twine", "check", "--strict", *files],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_wheel_is_typed_licensed_and_carries_its_front_ends(dist: Path) -> None:
    wheel = next(dist.glob("*.whl"))
    assert wheel.name.startswith(f"ctxlab-{ctxlab.__version__}-")  # one version, one source
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        info = f"ctxlab-{ctxlab.__version__}.dist-info"
        metadata = Parser().parsestr(archive.read(f"{info}/METADATA").decode())
    assert "ctxlab/py.typed" in names
    assert f"{info}/licenses/LICENSE" in names
    assert f"{info}/licenses/LICENSES/tiktoken-MIT.txt" in names
    assert f"{info}/licenses/LICENSES/plotly.js-MIT.txt" in names  # the vendored bundle's
    # The BPE files travel with their notice.
    assert {"ctxlab/tokens/data/cl100k_base.tiktoken.gz", "ctxlab/tokens/data/NOTICE.txt"} <= names
    for front_end in ("context_map.js", "plot.js", "plotly-basic.min.js", "table.js", "table.css"):
        assert f"ctxlab/widgets/static/{front_end}" in names
    assert metadata["Version"] == ctxlab.__version__
    assert metadata["License-Expression"] == "MIT"
    urls = dict(u.split(", ", 1) for u in metadata.get_all("Project-URL"))
    assert {"Repository", "Documentation", "Issues", "Changelog"} <= set(urls)
    classifiers = metadata.get_all("Classifier")
    assert "Typing :: Typed" in classifiers and "Framework :: Jupyter :: JupyterLab" in classifiers


def test_the_sdist_holds_the_licenses_and_no_build_output(dist: Path) -> None:
    sdist = next(dist.glob("*.tar.gz"))
    with tarfile.open(sdist) as archive:
        names = {n.split("/", 1)[1] for n in archive.getnames() if "/" in n}
    assert {"LICENSE", "LICENSES/tiktoken-MIT.txt", "pyproject.toml", "ctxlab/py.typed"} <= names
    assert not any(n.startswith(("build/", "site/", ".ci/")) for n in names)


def test_the_readme_badge_and_the_project_urls_name_the_same_repository() -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    repository = project["urls"]["Repository"].removeprefix("https://github.com/")
    binder = f"https://mybinder.org/v2/gh/{repository}/main"
    assert project["urls"]["Binder"].startswith(binder)
    readme = (REPO / "README.md").read_text()
    assert f"]({binder}?urlpath=lab/tree/notebooks/01_tour.ipynb)" in readme
