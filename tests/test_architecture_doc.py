"""`docs/architecture.md` names only what exists: every module path, every dotted name, the
layers `tests/test_layers.py` enforces, the agent's collaborators in their modules, the
pipeline's stage functions, and every arrow of its drawings an import the code makes.

A module moved or renamed without the page following fails here, naming the stale reference.
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

import pytest

from ctxlab.io._registry import ENTRY_POINTS
from tests.test_layers import LAYERS, _imports

ROOT = Path(__file__).parents[1]
PACKAGE = ROOT / "ctxlab"
PAGE = ROOT / "docs" / "architecture.md"

PATH = re.compile(r"(?<![\w/<>.-])((?:[A-Za-z_][\w]*/)+[A-Za-z_][\w]*(?:\.py|/))(?![\w<>])")
"""A path with at least one folder: ``io/_load.py``, ``tests/widgets/``, ``ctxlab/io/formats/``
(a template such as ``_<provider>.py`` is no path)."""
DOTTED = re.compile(r"`((?:ctxlab\.)?[a-z_]+(?:\.[A-Za-z_]\w*)+)`")
"""A dotted name in backticks: ``ctxlab.io``, ``messages._request.WIRE_FORMATS``."""
NOT_NAMES = {ENTRY_POINTS: "the entry-point group formats are registered under"}
"""Dotted words the page uses that name no module or attribute (checked: what each is)."""


def _page() -> str:
    return PAGE.read_text(encoding="utf-8")


def _section(title: str) -> str:
    text = _page()
    start = text.index(title)
    end = text.find("\n#", start + len(title))
    return text[start : end if end != -1 else None]


def paths_named(text: str) -> list[str]:
    """Every module or folder path ``text`` names, once each, in order."""
    return list(dict.fromkeys(PATH.findall(text)))


def _exists(path: str) -> bool:
    # Relative to the repository (``tests/...``, ``docs/...``, ``ctxlab/...``) or the package.
    return (ROOT / path).exists() or (PACKAGE / path).exists()


def _resolves(name: str) -> bool:
    # The longest module prefix of ``name`` (under ``ctxlab``), then attributes of it.
    parts = name.removeprefix("ctxlab.").split(".")
    for cut in range(len(parts), -1, -1):
        try:
            value: object = importlib.import_module(".".join(["ctxlab", *parts[:cut]]))
        except ModuleNotFoundError:
            continue
        for attribute in parts[cut:]:
            if not hasattr(value, attribute):
                return False
            value = getattr(value, attribute)
        return True
    return False


def _dotted_names(text: str) -> list[str]:
    # Only names that claim to be ctxlab's: ``ctxlab.x`` or a private module path (``x._y``);
    # ``manifest.request_id`` is an attribute of an object, not a module's.
    found = [n for n in DOTTED.findall(text) if n.startswith("ctxlab.") or "._" in n]
    return list(dict.fromkeys(n for n in found if n not in NOT_NAMES))


def test_every_path_the_page_names_exists() -> None:
    named = paths_named(_page())
    assert len(named) >= 30, named  # the reader found the page's paths
    missing = [path for path in named if not _exists(path)]
    assert not missing, f"docs/architecture.md names paths that do not exist: {missing}"


def test_a_module_named_without_its_folder_is_one_module() -> None:
    # ``_load.py`` alone is stale or ambiguous as soon as two packages hold one: the page
    # names a module by its path (``io/_load.py``), but a package's own ``__init__.py``.
    bare = set(re.findall(r"`(\w+\.py)`", _page())) - {"__init__.py", "__main__.py"}
    unclear = {name: len(list(PACKAGE.rglob(name))) for name in bare}
    assert {n: c for n, c in unclear.items() if c != 1} == {}


def test_every_dotted_name_the_page_names_resolves() -> None:
    named = _dotted_names(_page())
    assert "messages._request.WIRE_FORMATS" in named
    stale = [name for name in named if not _resolves(name)]
    assert not stale, f"docs/architecture.md names what ctxlab does not have: {stale}"


def test_the_words_that_are_no_names_are_what_the_page_says() -> None:
    assert ENTRY_POINTS == "ctxlab.formats"
    assert f"`{ENTRY_POINTS}`" in _page()


def test_the_layer_table_is_the_layers_the_imports_keep() -> None:
    rows = re.findall(r"^\| (\d+) \| ([^|]+) \|", _section("## Layers"), re.MULTILINE)
    drawn = [tuple(re.findall(r"`([^`]+)`", packages)) for _, packages in rows]
    assert [int(n) for n, _ in rows] == list(range(len(rows)))
    kept = [layer for layer in LAYERS if layer not in (("(root)",), ("__main__",))]
    assert drawn == kept


def _defined(path: Path) -> set[str]:
    # The classes and functions a module defines (none: it does not exist).
    if not path.is_file():
        return set()
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }


def test_each_collaborator_is_defined_in_the_module_the_table_gives() -> None:
    rows = re.findall(
        r"^\| `(\w+)` \|.*\| `([\w/]+\.py)` \|$",
        _section("### The agent's collaborators"),
        re.MULTILINE,
    )
    assert len(rows) == 8, rows
    wrong = [
        f"{name} in {module}" for name, module in rows if name not in _defined(PACKAGE / module)
    ]
    assert not wrong, f"collaborators not where the table says: {wrong}"


def test_the_stage_functions_are_the_pipelines() -> None:
    section = _section("### The pipeline's stages")
    pipeline = set().union(*(_defined(p) for p in (PACKAGE / "pipeline").glob("*.py")))
    table = [line.split("|")[2] for line in section.splitlines() if re.match(r"\| \d", line)]
    functions = {n for cell in table for n in re.findall(r"`([a-z_]+)`", cell)}
    # The calls `prepare`'s body makes, named in the paragraph above the table.
    calls = set(re.findall(r"`(_[a-z_]+|lay_out_sent|validate)`", section.split("|")[0]))
    prepare = _defined(PACKAGE / "pipeline" / "_prepare.py")
    assert len(functions) >= 10, functions
    assert functions - pipeline == set()
    assert {c for c in calls if c.startswith("_")} - prepare == set()


@pytest.mark.parametrize(
    ("text", "stale"),
    [
        ("the compaction (`pipeline/_compactor.py`)", ["pipeline/_compactor.py"]),
        ("a folder `tests/nowhere/`", ["tests/nowhere/"]),
        ('Node["io/_registry_old.py: gone"]', ["io/_registry_old.py"]),
    ],
)
def test_a_stale_path_is_caught(text: str, stale: list[str]) -> None:
    # Controls: the reader finds a path in backticks, a folder, and one in a diagram's node.
    assert [p for p in paths_named(text) if not _exists(p)] == stale


def test_a_stale_dotted_name_is_caught() -> None:
    assert not _resolves("messages._request.NO_SUCH_TABLE")
    assert not _resolves("ctxlab.no_such_package")
    assert _resolves("config._config.PRESET_FACTORIES")


NODE = re.compile(r'(?:subgraph )?(\w+)\["([^"]*)"\]')
ARROW = re.compile(r'(\w+)(?:\["[^"]*"\]|\[[^\]]*\])?\s*-->\s*(\w+)')


def _owner(label: str) -> str | None:
    # The module or package a node's label names first: ``ctxlab.io: ...`` or ``io/_load.py``.
    package = re.search(r"ctxlab\.(\w+)", label)
    if package is not None:
        return f"ctxlab.{package.group(1)}"
    path = next((p for p in paths_named(label) if (PACKAGE / p).exists()), None)
    return (
        None if path is None else "ctxlab." + path.removesuffix(".py").strip("/").replace("/", ".")
    )


def arrows(diagram: str) -> list[tuple[str, str]]:
    """The arrows of a mermaid flowchart between nodes that name ctxlab's modules, as (the
    module that uses, the module used)."""
    owners = {node: _owner(label) for node, label in NODE.findall(diagram)}
    return [
        (a, b)
        for x, y in ARROW.findall(diagram)
        if (a := owners.get(x)) is not None and (b := owners.get(y)) is not None and a != b
    ]


def _under(module: str, owner: str) -> bool:
    return module == owner or module.startswith(owner + ".")


def untrue(pairs: list[tuple[str, str]]) -> list[str]:
    """The arrows no import of the code makes."""
    made = {(module, target) for module, target, *_ in _imports()}
    return [
        f"{a} --> {b}" for a, b in pairs if not any(_under(m, a) and _under(t, b) for m, t in made)
    ]


def test_every_arrow_drawn_is_an_import() -> None:
    diagrams = re.findall(r"```mermaid\nflowchart TD\n(.*?)```", _page(), re.DOTALL)
    drawn = [pair for diagram in diagrams for pair in arrows(diagram)]
    assert len(diagrams) == 2 and len(drawn) >= 40, drawn
    assert untrue(drawn) == []


def test_an_arrow_no_import_makes_is_caught() -> None:
    # Controls: the manifest does not import the token counter, nor the census the loader; the
    # loader does import detection.
    drawn = arrows(
        'M["ctxlab.manifest: x"] --> T["ctxlab.tokens"]\n'
        'C["io/_census.py"] --> L["io/_load.py"]\n'
        "L --> D\n"
        'D["io/_detect.py"]\n'
    )
    assert drawn == [
        ("ctxlab.manifest", "ctxlab.tokens"),
        ("ctxlab.io._census", "ctxlab.io._load"),
        ("ctxlab.io._load", "ctxlab.io._detect"),
    ]
    assert untrue(drawn) == [
        "ctxlab.manifest --> ctxlab.tokens",
        "ctxlab.io._census --> ctxlab.io._load",
    ]
