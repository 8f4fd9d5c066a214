"""The counting rules live in one module: `ctxlab.tokens._parts` holds them, and every caller
imports them from there (or from `ctxlab.tokens`, the public door), never through the cache
module they were split out of. A re-export left behind by a split is a second address for the
same name: code keeps reaching for it and the split never finishes."""

from __future__ import annotations

import ast
from pathlib import Path

from ctxlab import tokens
from ctxlab.tokens import _cache, _parts

ROOT = Path(__file__).parents[2]
FOLDERS = ("ctxlab", "tests", "benchmarks")


def _imports_from(module: str) -> list[tuple[str, int, str]]:
    """(file, line, name) of every ``from <module> import name`` under the project's folders."""
    found = []
    for folder in FOLDERS:
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom) and node.module == module:
                    rel = str(path.relative_to(ROOT))
                    found.extend((rel, node.lineno, alias.name) for alias in node.names)
    return found


def test_the_cache_module_offers_only_what_it_defines() -> None:
    assert _cache.__all__ == ["TokenCache", "checked_counter"]
    assert {name: getattr(_cache, name).__module__ for name in _cache.__all__} == {
        "TokenCache": "ctxlab.tokens._cache",
        "checked_counter": "ctxlab.tokens._cache",
    }


def test_no_caller_imports_a_counting_rule_through_the_cache_module() -> None:
    moved = set(_parts.__all__)
    through_cache = [hit for hit in _imports_from("ctxlab.tokens._cache") if hit[2] in moved]
    assert through_cache == []


def test_the_public_counting_rules_keep_their_values() -> None:
    # The public names did not change with the move: the same figures as the rules module's.
    public = {
        "COUNT_RULES": "blocks-2",
        "IMAGE_TOKENS": 1600,
        "MESSAGE_OVERHEAD": 4,
        "PDF_PAGE_TOKENS": 2_250,
        "TOOL_BLOCK_OVERHEAD": 8,
    }
    assert {name: getattr(tokens, name) for name in public} == public
    assert {name: getattr(_parts, name) for name in public} == public
