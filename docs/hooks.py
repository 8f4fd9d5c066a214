"""MkDocs hooks: the pages generated at build time, before MkDocs collects the files.

- ``docs/api/``: one page per public name (``ctxlab.__all__`` and ``ctxlab.PACKAGE_NAMES``,
  documented under its package; mkdocstrings renders its
  docstring and signature), an index grouped by module, and their place in the nav.
- ``docs/howto/formats.md``: the table of the formats `load` reads, one row per registered
  format (``ctxlab.io._registry``): its name, the tool and versions, where it was learned, how it
  is recognised, what its census counts — the registry's own words, never written twice.
- ``docs/notebooks/``: every notebook of ``notebooks/``, executed there (its relative paths hold)
  with nbclient, outputs kept, so the site shows them as a reader of the repository would after
  "Run all". Set ``CTXLAB_DOCS_EXECUTE=0`` to copy them unexecuted (a quick preview).

These are generated (and ignored by git). A file is rewritten only when its content
changed, so ``mkdocs serve`` does not rebuild in a loop.

The built site works opened from disk, offline: each plotly figure of a notebook is written as
HTML that loads nothing (from the figure's JSON, which the kernels output), the pages that draw
one load the plotly.js shipped with the site (``assets/javascripts/``, copied from the plotly
package that made the figures), and search runs with the vendored iframe-worker shim
(``docs/assets/javascripts/``, set in ``mkdocs.yml``) — material's offline plugin would fetch it
from a CDN, and search stays hidden when it cannot.
"""

from __future__ import annotations

import inspect
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]

GROUPS = {
    "agent": "Agent, tools and events",
    "models": "Models",
    "messages": "Messages",
    "pipeline": "Pipeline",
    "manifest": "Manifest",
    "materials": "Sources and materials",
    "tokens": "Token counting",
    "session": "Session log",
    "io": "Importing sessions",
    "config": "Configuration",
    "analysis": "Replay, what-if and calibration",
    "sources": "Step sources (recordings, other frameworks)",
    "fork": "Forks (ctxlab.fork)",
}


def _write(path: Path, text: str) -> None:
    if not path.is_file() or path.read_text(encoding="utf-8") != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")


def _group(obj: Any) -> str:
    module = getattr(obj, "__module__", "") or ""
    parts = module.split(".")
    if len(parts) > 1 and parts[1] in GROUPS:
        return GROUPS[parts[1]]
    return "Configuration, replay and tuning"


def api_pages(folder: Path) -> list[dict[str, Any]]:
    """Write one page per public name; return the nav entries, grouped."""
    import ctxlab

    groups: dict[str, list[str]] = defaultdict(list)
    paths: dict[str, str] = {}  # a name documented under its package: that package
    for name in ctxlab.__all__:
        if name.startswith("__"):
            continue
        obj = getattr(ctxlab, name)
        groups[_group(obj) if inspect.isclass(obj) or callable(obj) else "Constants"].append(name)
        _write(folder / f"{name}.md", f"::: ctxlab.{name}\n")
    # The other public names, documented where they live (importable from ``ctxlab`` too).
    for name, package in sorted(ctxlab.PACKAGE_NAMES.items()):
        obj = getattr(ctxlab, name)
        group = _group(obj) if inspect.isclass(obj) or callable(obj) else "Constants"
        groups[group].append(name)
        paths[name] = package
        _write(folder / f"{name}.md", f"::: {package}.{name}\n")
    # Forks: their own package (``ctxlab.fork`` is the package, so its ``fork`` stays there).
    from ctxlab import fork

    for name in fork.__all__:
        obj = getattr(fork, name)
        groups[GROUPS["fork"] if inspect.isclass(obj) or callable(obj) else "Constants"].append(name)
        paths[name] = "ctxlab.fork"
        _write(folder / f"{name}.md", f"::: ctxlab.fork.{name}\n")
    # The notebook layer: the Lab and the what-if lab, from ``ctxlab.widgets``.
    from ctxlab import widgets

    for name in widgets.__all__:
        if name in ctxlab.__all__:
            continue
        groups["Notebook widgets (ctxlab.widgets)"].append(name)
        _write(folder / f"{name}.md", f"::: ctxlab.widgets.{name}\n")
    lines = [
        "# API reference\n",
        f"Every public name of `ctxlab` (version {ctxlab.__version__}), from its docstring. "
        "`from ctxlab import ...` gives the names a notebook uses (`ctxlab.__all__`); a name "
        "shown with its package lives there (and is importable from `ctxlab` too). The "
        "notebook layer is in `ctxlab.widgets` (`Lab`, `WhatIfLab`, `ForkLab`), forks in "
        "`ctxlab.fork`, the demo in `ctxlab.demo`.\n",
    ]
    nav: list[dict[str, Any]] = [{"Overview": "api/index.md"}]
    for group in sorted(groups):
        names = sorted(groups[group], key=str.lower)
        lines.append(f"\n## {group}\n")
        lines.extend(
            f"- [`{n}`]({n}.md)" + (f" (`{paths[n]}`)" if n in paths else "") for n in names
        )
        nav.append({group: [{n: f"api/{n}.md"} for n in names]})
    _write(folder / "index.md", "\n".join(lines) + "\n")
    return nav


def notebooks(source: Path, target: Path) -> None:
    """Execute every notebook of ``source`` in ``source`` and write it, outputs kept, to
    ``target``."""
    import nbformat

    execute = os.environ.get("CTXLAB_DOCS_EXECUTE", "1") != "0"
    # The figures as plotly's JSON (the kernels inherit the renderer): their HTML is made below,
    # without the CDN scripts plotly's HTML renderers add (plotly.js and MathJax).
    os.environ.setdefault("PLOTLY_RENDERER", "plotly_mimetype")
    for path in sorted(source.glob("*.ipynb")):
        notebook = nbformat.read(path, as_version=4)
        if execute:
            from nbclient import NotebookClient

            NotebookClient(
                notebook,
                timeout=600,
                kernel_name="python3",
                # Without widget state the page shows each widget's static HTML (the Lab's
                # snapshot, the what-if table): a static site has no kernel to draw them.
                store_widget_state=False,
                resources={"metadata": {"path": str(source)}},
            ).execute()
        figures_as_html(notebook)
        _write(target / path.name, nbformat.writes(notebook))


PLOTLY_JSON = "application/vnd.plotly.v1+json"


def figures_as_html(notebook: Any) -> int:
    """Give each plotly figure output of ``notebook`` HTML that draws it with the page's
    plotly.js and loads nothing else; returns how many."""
    import plotly.io as pio

    count = 0
    for cell in notebook.cells:
        for output in cell.get("outputs", ()):
            figure = output.get("data", {}).get(PLOTLY_JSON)
            if figure is None:
                continue
            output["data"]["text/html"] = pio.to_html(
                figure,
                include_plotlyjs=False,
                include_mathjax=False,
                full_html=False,
                default_width="100%",
                validate=False,
            )
            count += 1
    return count


def _plotly_js() -> tuple[str, Path]:
    """The site's name for plotly.js, and the file of the plotly package that made the
    figures."""
    from importlib import resources

    from plotly.offline import get_plotlyjs_version

    path = Path(str(resources.files("plotly").joinpath("package_data/plotly.min.js")))
    return f"assets/javascripts/plotly-{get_plotlyjs_version()}.min.js", path


def on_post_page(output: str, page: Any, config: Any) -> str:
    # A page that draws a figure loads plotly.js first (the figures' scripts run as the page is
    # read), from the site itself: a relative path, so it works from disk.
    if "plotly-graph-div" not in output:
        return output
    depth = page.file.url.count("/")
    script = f'<script src="{"../" * depth}{_plotly_js()[0]}"></script>'
    return output.replace("</head>", f"{script}</head>", 1)


def on_post_build(config: Any) -> None:
    import shutil

    name, source = _plotly_js()
    target = Path(config["site_dir"]) / name
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)


def formats_page(path: Path) -> None:
    """The table of every registered format, from its declaration."""
    from ctxlab.io._registry import formats  # at build time: the registry as installed

    lines = [
        "# Every format, from the registry",
        "",
        "Generated from each format's `SessionFormat` declaration (`ctxlab/io/formats/`), in",
        "detection order; a format you register ([Read a format of your own](own-format.md))",
        "joins it. [The session formats, one by one](importers.md) says what each record becomes.",
        "",
        "| `format=` | reads | learned from | recognised by | census counts |",
        "|---|---|---|---|---|",
    ]
    for declared in formats():
        how = [
            label
            for label, detector in (
                ("its JSON object", declared.document),
                ("its JSON list", declared.records),
                ("its JSON Lines", declared.lines),
                ("its first characters", declared.text),
                ("where it lives", declared.place),
            )
            if detector is not None
        ]
        cells = (declared.tool, declared.learned_from, ", ".join(how), declared.census)
        row = " | ".join(c.replace("|", "\\|").replace("\n", " ") for c in cells)
        lines.append(f"| `{declared.name}` | {row} |")
    _write(path, "\n".join(lines) + "\n")


def on_config(config: Any) -> Any:
    docs = Path(config["docs_dir"])
    formats_page(docs / "howto" / "formats.md")
    entries = api_pages(docs / "api")
    for index, entry in enumerate(config["nav"]):
        if isinstance(entry, dict) and "API reference" in entry:
            config["nav"][index] = {"API reference": entries}
    notebooks(REPO / "notebooks", docs / "notebooks")
    return config
