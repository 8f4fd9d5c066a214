"""Mutation testing of ctxlab with mutmut: ``make mutate`` (see docs/contributing.md).

Usage: ``python tests/mutate.py [MODULE ...] [--tests PATH ...]``. MODULE defaults to the
modules of ``ctxlab/`` that the working tree or the last commit changed; ``--tests`` defaults
to each module's package folder (``ctxlab/analysis/_cost.py`` → ``tests/analysis``). The
project is copied to ``build/mutate/`` (mutmut rewrites the code it mutates, so it never runs in
the checkout), mutmut runs there, and the survivors are printed with their diffs, then the
score. Not part of ``make test``: a module takes from seconds to minutes on two cores.

A survivor is a change to the code that no test noticed: either a behaviour no test asserts
(write the test), or an equivalent change (the code is the same either way). Values computed
when a module is imported (a price table, a compiled pattern) show as survivors too: mutmut
switches mutants on at call time, after the import.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
WORK = REPO / "build" / "mutate"
SKIP = ("notebooks/", "docs/", "binder/", "benchmarks/")
"""Not needed to run the unit tests: not copied."""


def _changed_modules() -> list[str]:
    # What the working tree changed, else what the last commit did.
    for command in (
        ["git", "diff", "--name-only", "HEAD"],
        ["git", "diff", "--name-only", "HEAD~1"],
    ):
        out = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=False)
        found = [
            line
            for line in out.stdout.split()
            if line.startswith("ctxlab/") and line.endswith(".py") and (REPO / line).is_file()
        ]
        if found:
            return sorted(set(found))
    return []


def _tests_for(module: str) -> str:
    parts = Path(module).parts
    folder = REPO / "tests" / parts[1] if len(parts) > 2 else REPO / "tests"
    return str(folder.relative_to(REPO)) if folder.is_dir() else "tests"


def copy_project(repo: Path = REPO, work: Path = WORK) -> None:
    """Copy ``repo``'s tracked files (but ``SKIP``) to a fresh ``work`` folder."""
    if work.exists():
        shutil.rmtree(work)
    files = subprocess.run(
        ["git", "ls-files"], cwd=repo, capture_output=True, text=True, check=True
    ).stdout.split("\n")
    for name in files:
        if not name or name.startswith(SKIP) or not (repo / name).is_file():
            continue
        target = work / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(repo / name, target)


def configure(
    modules: list[str], tests: list[str], work: Path = WORK, deselect: list[str] | None = None
) -> None:
    """Append mutmut's settings to ``work``'s pyproject: mutate ``modules``, run ``tests``
    (but the test ids ``deselect`` names)."""

    def toml_list(items: list[str]) -> str:
        return "[" + ", ".join(f'"{i}"' for i in items) + "]"

    section = (
        "\n[tool.mutmut]\n"
        'source_paths = ["ctxlab"]\n'
        # The views' ESM and CSS (top-level widgets/): the Lab's tests load them from there.
        'also_copy = ["widgets"]\n'
        f"only_mutate = {toml_list(modules)}\n"
        f"pytest_add_cli_args_test_selection = {toml_list(tests)}\n"
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "-q", "-x"'
        + "".join(f', "--deselect", "{test}"' for test in deselect or ())
        + "]\n"
    )
    pyproject = work / "pyproject.toml"
    pyproject.write_text(pyproject.read_text(encoding="utf-8") + section, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="make mutate", description=__doc__.split("\n")[0])
    parser.add_argument("modules", nargs="*", help="modules of ctxlab/ to mutate")
    parser.add_argument("--tests", nargs="*", default=None, help="test paths to run")
    args = parser.parse_args(argv)
    modules = args.modules or _changed_modules()
    if not modules:
        print("nothing to mutate: name a module, e.g. make mutate MODULE=ctxlab/analysis/_cost.py")
        return 2
    missing = [m for m in modules if not (REPO / m).is_file()]
    if missing:
        print(f"no such module: {', '.join(missing)} (give paths like ctxlab/analysis/_cost.py)")
        return 2
    tests = args.tests or sorted({_tests_for(m) for m in modules})
    print(f"mutating {', '.join(modules)} against {', '.join(tests)} in {WORK}", flush=True)
    copy_project()
    configure(modules, tests)
    env = {**os.environ, "CTXLAB_CORPUS": os.environ.get("CTXLAB_CORPUS", "../shared/corpus")}
    mutmut = [sys.executable, "-m", "mutmut"]
    # mutmut redraws a progress line; only its last state is kept.
    run = subprocess.run([*mutmut, "run"], cwd=WORK, env=env, capture_output=True, text=True)
    progress = re.findall(
        r"(\d+)/(\d+)\s+🎉 (\d+) 🫥 (\d+)\s+⏰ (\d+)\s+🤔 (\d+)\s+🙁 (\d+)", run.stdout
    )
    if run.returncode != 0 or not progress:
        print(run.stdout[-3000:], run.stderr[-3000:], sep="\n")
        print("mutmut did not finish: see its output above")
        return 1
    done, total, killed, no_tests, timeout, suspicious, survived = map(int, progress[-1])
    results = subprocess.run(
        [*mutmut, "results"], cwd=WORK, env=env, capture_output=True, text=True, check=False
    )
    names = [
        line.split(":")[0].strip() for line in results.stdout.splitlines() if "survived" in line
    ]
    for name in names:
        shown = subprocess.run(
            [*mutmut, "show", name], cwd=WORK, env=env, capture_output=True, text=True, check=False
        )
        print(shown.stdout.rstrip(), "\n")
    tested = killed + survived + timeout + suspicious
    score = killed / tested if tested else 0.0
    print(
        f"{done}/{total} mutants: {killed} killed, {survived} survived, {timeout} timed out, "
        f"{suspicious} suspicious, {no_tests} not covered by the tests run · score {score:.0%}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
