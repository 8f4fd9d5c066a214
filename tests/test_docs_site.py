"""The docs site, built as `make docs` builds it: strict, every public name, every notebook."""

from __future__ import annotations

import html
import inspect
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import ctxlab
from tests.helpers import offline_context

REPO = Path(__file__).resolve().parents[1]

pytest.importorskip("mkdocs")
pytest.importorskip("mkdocstrings")
pytest.importorskip("mkdocs_jupyter")


def _build(config: Path, site: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config), "-d", str(site)],
        cwd=REPO,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1", **env},
        timeout=1200,
    )


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("site")
    result = _build(REPO / "mkdocs.yml", out)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-6000:]
    return out


def _text(page: Path) -> str:
    raw = page.read_text(encoding="utf-8")
    raw = re.sub(r"<script.*?</script>", " ", raw, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", raw)))


def _plain(text: str) -> str:
    # Markup and spacing apart (markdown turns `x` into code, and tags leave spaces around it).
    return re.sub(r"[\s`*]+", "", text)


def test_every_public_name_has_a_page_with_its_docstring(site: Path) -> None:
    missing = []
    for name in [*ctxlab.__all__, *ctxlab.PACKAGE_NAMES]:
        if name == "__version__":
            continue
        page = site / "api" / f"{name}.html"
        if not page.is_file():
            missing.append(f"{name}: no page")
            continue
        text = _plain(_text(page))
        obj = getattr(ctxlab, name)
        if inspect.isclass(obj) or inspect.isfunction(obj):
            first = _plain((inspect.getdoc(obj) or "").split("\n\n")[0])
            if not first or first[:60] not in text:
                missing.append(f"{name}: docstring {first[:60]!r} not on its page")
        elif "doc doc-contents" not in page.read_text(encoding="utf-8"):
            missing.append(f"{name}: no documentation on its page")
    assert not missing, missing
    index = _text(site / "api" / "index.html")
    assert all(
        name in index for name in [*ctxlab.__all__, *ctxlab.PACKAGE_NAMES] if name != "__version__"
    )


def test_every_notebook_is_rendered_with_its_outputs(site: Path) -> None:
    notebooks = sorted((REPO / "notebooks").glob("*.ipynb"))
    assert notebooks
    for notebook in notebooks:
        page = site / "notebooks" / f"{notebook.stem}.html"
        assert page.is_file(), f"{notebook.name} is not in the site"
        assert "jp-OutputArea" in page.read_text(encoding="utf-8"), f"{notebook.name}: no output"
    tour = _text(site / "notebooks" / "01_tour.html")
    assert re.search(r"\d+ requests in all", tour)  # an output of the executed tour
    assert "ctxlab Lab" in tour  # the Lab's static snapshot, not "Loading widget…"
    assert re.search(r"window [\d,]+ tokens · [1-9]\d* requests", tour)  # after the session


def test_the_concept_and_howto_pages_are_there_and_cite_the_guides_by_name(site: Path) -> None:
    for page in ("getting-started", "concepts/pipeline", "concepts/compaction", "howto/sweep"):
        assert (site / f"{page}.html").is_file(), page
    pipeline = _text(site / "concepts" / "pipeline.html")
    assert "Context management" in pipeline and "Compress Context" in pipeline
    for source in [*(REPO / "docs").rglob("*.md"), REPO / "README.md"]:
        if "api" in source.parts or "notebooks" in source.parts:
            continue
        numbers = re.findall(r"(?<![\d,.])\b00[02]\b(?![\d,])", source.read_text(encoding="utf-8"))
        assert not numbers, f"{source}: cites an internal document number"


def test_a_broken_link_fails_the_build(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    shutil.copytree(REPO / "docs", docs, ignore=shutil.ignore_patterns("api", "notebooks"))
    (docs / "getting-started.md").write_text("# Start\n\nSee [the missing page](nowhere.md).\n")
    config = (REPO / "mkdocs.yml").read_text()
    config = config.replace("docs_dir: docs", f"docs_dir: {docs}")
    config = config.replace("  - docs/hooks.py", f"  - {docs / 'hooks.py'}")
    (tmp_path / "mkdocs.yml").write_text(config)
    result = _build(tmp_path / "mkdocs.yml", tmp_path / "site", CTXLAB_DOCS_EXECUTE="0")
    assert result.returncode != 0
    assert "nowhere.md" in result.stdout + result.stderr


def test_the_site_works_opened_from_disk(site: Path) -> None:
    # Links name pages (``x.html``), not folders a file:// browser would list.
    broken = []
    for page in site.rglob("*.html"):
        if page.name == "404.html":
            continue  # a served site's error page: its links are absolute by design
        for href in re.findall(r'href="([^"#?]+)', page.read_text(encoding="utf-8")):
            if re.match(r"[a-z]+:|//", href):
                continue
            target = (page.parent / href).resolve()
            if target.is_dir() or not target.exists():
                broken.append(f"{page.relative_to(site)} → {href}")
    assert not broken, broken[:20]
    # The search index travels with the pages (the offline plugin): nothing to fetch.
    assert list(site.rglob("search_index.js")) or "search_index" in _text(site / "index.html")


def test_the_lab_and_the_whatif_lab_have_api_pages(site: Path) -> None:
    from ctxlab.widgets import Lab, WhatIfLab

    for obj in (Lab, WhatIfLab):
        page = site / "api" / f"{obj.__name__}.html"
        first = _plain((inspect.getdoc(obj) or "").split("\n\n")[0])
        assert page.is_file() and first[:60] in _plain(_text(page)), obj.__name__
    assert "Lab" in _text(site / "api" / "index.html")


def test_getting_started_shows_a_picture_of_the_lab(site: Path) -> None:
    page = (site / "getting-started.html").read_text(encoding="utf-8")
    images = re.findall(r'<img[^>]+src="([^"]+)"', page)
    assert any("lab" in src for src in images), images
    for src in images:
        assert (site / src).is_file(), src


_FETCHES = re.compile(
    r"""<script\b[^>]*\bsrc=["'](?:https?:)?//[^"']+["']"""
    r"""|<link\b[^>]*\brel=["']stylesheet["'][^>]*\bhref=["'](?:https?:)?//[^"']+["']"""
    r"""|<link\b[^>]*\bhref=["'](?:https?:)?//[^"']+["'][^>]*\brel=["']stylesheet["']"""
    r"""|\bimport\s*["'](?:https?:)?//[^"']+["']"""
)
"""A script, a stylesheet or a module a page would fetch from the network."""


def test_no_page_loads_a_script_or_a_stylesheet_from_the_network(site: Path) -> None:
    # A page opened from disk offline has only what the site ships: search's worker shim,
    # plotly.js, the theme's fonts (the system's) — not a CDN's.
    fetched = {
        f"{page.relative_to(site)}: {match}"
        for page in site.rglob("*.html")
        for match in _FETCHES.findall(page.read_text(encoding="utf-8"))
    }
    assert not fetched, sorted(fetched)[:10]
    assert (site / "assets" / "javascripts" / "iframe-worker-shim.js").is_file()
    assert list((site / "assets" / "javascripts").glob("plotly-*.min.js"))


def test_opened_from_disk_offline_search_finds_pages_and_figures_draw(site: Path) -> None:
    playwright = pytest.importorskip("playwright.sync_api", reason="pip install playwright")
    chromium = Path(os.environ.get("CTXLAB_CHROMIUM", "/usr/bin/chromium"))
    if not chromium.exists():
        if os.environ.get("CTXLAB_REQUIRE_BROWSER"):
            pytest.fail(f"CTXLAB_REQUIRE_BROWSER is set but there is no Chromium at {chromium}")
        pytest.skip(f"no Chromium at {chromium}: apt-get install chromium")
    figures = [
        p for p in (site / "notebooks").glob("*.html") if "plotly-graph-div" in p.read_text()
    ]
    assert figures  # notebook 05 draws the sweep's charts
    asked: list[str] = []
    with playwright.sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=str(chromium), headless=True, args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            page = offline_context(browser, asked).new_page()
            page.goto((site / "index.html").as_uri(), wait_until="load")
            search = page.locator(".md-search__input")
            search.wait_for(state="visible", timeout=15_000)
            search.click()
            page.keyboard.type("compaction", delay=20)
            page.wait_for_function(
                "document.querySelectorAll('.md-search-result__item').length > 0",
                timeout=30_000,
            )
            for notebook in figures:
                page.goto(notebook.as_uri(), wait_until="load")
                drawn = page.evaluate(
                    "() => [...document.querySelectorAll('.plotly-graph-div')]"
                    ".map(d => d.querySelectorAll('.main-svg').length > 0)"
                )
                assert drawn and all(drawn), (notebook.name, drawn)
        finally:
            browser.close()
    # Only the theme's repository widget asks (GitHub's API, for the star count); it fails
    # quietly offline.
    assert {u.split("/")[2] for u in asked} <= {"api.github.com"}, asked
