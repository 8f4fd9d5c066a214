"""Every benchmark still imports: they are run by hand and by `make bench`, not by the tests, so
a name they import that moved (the sessions bench's ``SUFFIXES`` when io/ became a registry)
was found only when `make bench` ran — minutes in."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"


@pytest.mark.parametrize("path", sorted(BENCHMARKS.glob("*.py")), ids=lambda p: p.name)
def test_a_benchmark_imports(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # they import their siblings by name
    spec = importlib.util.spec_from_file_location(f"_bench_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, spec.name, module)  # dataclasses look their module up
    try:
        spec.loader.exec_module(module)  # `main` runs only under __name__ == "__main__"
    except ModuleNotFoundError as exc:
        if exc.name and not exc.name.startswith(("ctxlab", "_")) and exc.name not in sys.modules:
            pytest.skip(f"{path.name} needs {exc.name}, not installed here")
        raise
    if '__name__ == "__main__"' in path.read_text(encoding="utf-8"):
        assert callable(getattr(module, "main", None)), f"{path.name} runs no main()"
