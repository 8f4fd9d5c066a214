"""io's own modules (``ctxlab/io/*.py``) are the machinery every format shares — building, the
census, the inventory, the registry, detection, ``load``, ``sessions`` — and know no format: they
import nothing of ``ctxlab.io.formats`` and name no format in their code. What a format knows is
in its module (``ctxlab/io/formats/``), a parser several formats share in its own module there
(``formats/_chat.py``...). Each allowance below says why."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import ctxlab.io
from ctxlab.io.formats import BUILTIN

IO = Path(ctxlab.io.__file__).parent
OWN = sorted(IO.glob("*.py"))

MAY_IMPORT = (
    "ctxlab.io._",  # one another
    "ctxlab.exceptions",
    "ctxlab.messages",
    "ctxlab.models",
    "ctxlab.tokens",
    "ctxlab.util",
    "ctxlab.manifest",  # the compaction events of a ctxlab run (`_compaction_events`)
    "ctxlab.pipeline._record",  # (the same: a run's compaction records)
)
"""What io's own modules may import of ctxlab (anything of the standard library and the
dependencies besides)."""

FORMAT_IMPORTS = {
    ("_registry.py", "ctxlab.io.formats"): "BUILTIN: the list of ctxlab's own formats it registers",
    ("__init__.py", "ctxlab.io.formats.atif.export"): "the public exporters, re-exported",
    ("__init__.py", "ctxlab.io.formats.otel.export"): "(the same)",
}
"""The imports of a format's module io's own may make, and why."""

NAMED = {
    ("_transcript.py", "ctxlab"): "ctxlab's own JSON Lines, the form a Transcript saves itself in",
    ("_folder.py", "ctxlab"): "(the same: a transcript that says no source is ctxlab's own)",
    ("_findings.py", "gemini"): "a role word (Gemini CLI's replies say it) in the inventory's "
    "vocabulary of reply roles, which is every tool's, not a format's",
    ("_save.py", "ctxlab"): "(the same: save_transcript's formats)",
    ("_sessions_disk.py", "ctxlab"): "the cache folder's name (~/.cache/ctxlab/sessions): the "
    "package's, not its format's",
    ("_block_shapes.py", "anthropic"): "anthropic_block: ctxlab's own messages are blocks of "
    "the Messages API, the shape every reader builds (not the anthropic format's reader)",
    ("_save.py", "anthropic"): "save_transcript writes a request of the Messages API",
    ("_save.py", "openai"): "(and of Chat Completions)",
}
"""The format names io's own modules may say in their code or the names they define (not in
docstrings or comments), and why."""


def _imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append(node.module)
        elif isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
    return [name for name in found if name == "ctxlab" or name.startswith("ctxlab.")]


def _strings(path: Path) -> set[str]:
    # The string constants of the code, docstrings left out (they may say what a format is).
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return {
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    }


def _defined(path: Path) -> set[str]:
    # The names the module defines: functions, classes, and names assigned at its top.
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = {
        node.name
        for node in ast.walk(tree)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
    }
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else []
        found |= {t.id for t in targets if isinstance(t, ast.Name)}
    return found


def _says_a_format(identifier: str, names: set[str]) -> set[str]:
    # The formats an identifier is named for: ``from_openai``, ``is_gemini_cli``, ``_GUESSES``
    # not (a format's name as whole words of it).
    words = identifier.lower().strip("_").split("_")
    return {
        name
        for name in names
        if any(words[i : i + len(name.split("_"))] == name.split("_") for i in range(len(words)))
    }


@pytest.mark.parametrize("path", OWN, ids=lambda p: p.name)
def test_io_machinery_imports_no_format(path: Path) -> None:
    for name in _imports(path):
        if name.startswith("ctxlab.io.formats") or name == "ctxlab.io.formats":
            assert (path.name, name) in FORMAT_IMPORTS, f"{path.name} imports a format: {name}"
        else:
            assert name.startswith(MAY_IMPORT), f"{path.name} imports {name}"


@pytest.mark.parametrize("path", OWN, ids=lambda p: p.name)
def test_io_machinery_names_no_format(path: Path) -> None:
    names = {f.name for f in BUILTIN}
    allowed = {n for (p, n) in NAMED if p == path.name}
    said = {s for s in _strings(path) if s in names} - allowed
    assert not said, f"{path.name} names formats in its code: {sorted(said)}"
    for identifier in _defined(path):
        named = _says_a_format(identifier, names) - allowed
        assert not named, f"{path.name} defines {identifier}, named for {sorted(named)}"


def test_the_checks_see_a_format_named_and_imported(tmp_path: Path) -> None:
    # The control: a module of io's that reads one format's field by its name is caught.
    module = tmp_path / "_odd.py"
    module.write_text(
        '"""codex is named here, in a docstring: allowed."""\n'
        "from ctxlab.io.formats._chat import from_openai\n"
        'GUESSES = ("anthropic", "openai")\n'
        "def is_gemini_cli(value): ...\n"
    )
    assert _says_a_format("is_gemini_cli", {"gemini", "gemini_cli", "cli"}) == {
        "gemini",
        "gemini_cli",
        "cli",
    }
    assert _says_a_format("_guesses", {"anthropic", "openai"}) == set()
    assert _imports(module) == ["ctxlab.io.formats._chat"]
    assert {"anthropic", "openai"} <= _strings(module)
    assert "codex is named here, in a docstring: allowed." not in _strings(module)
    with pytest.raises(AssertionError, match="imports a format"):
        test_io_machinery_imports_no_format(module)
    with pytest.raises(
        AssertionError, match=r"names formats in its code: \['anthropic', 'openai'\]"
    ):
        test_io_machinery_names_no_format(module)
