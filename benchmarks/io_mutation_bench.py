"""Issue 55's mutation check: mutmut's score of a sample of io's functions before and after the
move of every format's code into ``ctxlab/io/formats/``, each tree against its own ``tests/io``.

    nice python benchmarks/io_mutation_bench.py BEFORE [--after ROOT] [--named] [--children 1]

BEFORE is a checkout of the tree before the move (commit 3b075b5: ``git worktree add --detach
/tmp/before 3b075b5``); ``--after`` defaults to this checkout. The sample: in each module pair of
``PAIRS`` (one concept's module before and after the move), the functions of the same name in
both (top-level functions and methods, as mutmut names them), and of their mutants those whose
number ends in 1 (1, 11, 21, …: one in ten, and at least one of every function). A function the
move left unchanged has the same mutants on both sides. Both trees run at once, under the same
load, with the same mutmut, each copied to ``build/io-mutation/<side>`` (no ``PYTHONPATH``:
mutmut puts its mutated copy first on the tests' path). Printed, per module and in total:
mutants, killed, survived, timed out, not covered, score = killed / (killed + survived + timed
out + suspicious); the unchanged functions' mutants killed on one side only; the changed
functions apart. The tests are each side's tests/io (``--named``: its files named for one of
``CONCEPTS``, the same rule on both sides), but for ``DESELECT``. Hours on two shared cores for
the whole sample; the figures of a run cut short (``--tally`` reads what is decided) count only
the mutants decided on both sides.

Other io modules (the same path on both sides: a change of tests alone) with ``--modules``, the
tests named for ``--concepts``, a sparser sample with ``--sample`` (a pattern of the mutant
number's tail: ``[05]1`` is 1, 51, 101, …, one in fifty), and one side at a time with ``--side``
(a side's run is long: the before side can start while the after side is still being written;
each side's statuses stay in its work folder for ``--tally``).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import subprocess
import sys
from collections import Counter
from fnmatch import fnmatch
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.mutate import configure, copy_project  # noqa: E402

WORK = REPO / "build" / "io-mutation"
PAIRS = [
    # detection, the census, the readers of Claude Code, Codex, Gemini, OpenHands, the inventory
    ("ctxlab/io/_detect.py", "ctxlab/io/_detect.py"),
    ("ctxlab/io/_census.py", "ctxlab/io/_census.py"),
    ("ctxlab/io/_claude_code.py", "ctxlab/io/formats/claude_code/parse.py"),
    ("ctxlab/io/_codex.py", "ctxlab/io/formats/codex/parse.py"),
    ("ctxlab/io/_gemini.py", "ctxlab/io/formats/_gemini.py"),
    ("ctxlab/io/_openhands.py", "ctxlab/io/formats/openhands/events.py"),
    ("ctxlab/io/_inventory.py", "ctxlab/io/_inventory.py"),
]
DESELECT = [
    # Inputs nested to just under Python's recursion limit: mutmut's trampolines add a frame to
    # each mutated function, so these fail on every side, mutated or not (mutmut then stops).
    "tests/io/test_hostile_imports.py::test_phoenix_attributes_nested_a_thousand_levels",
    "tests/io/test_inventory.py::test_a_file_nested_past_the_limit_is_walked_as_far_as_it_goes",
    "tests/io/test_inventory_walk.py::test_a_value_nested_near_the_limit_is_cut_where_it_was",
    "tests/io/test_inventory_walk.py::test_a_text_in_lists_past_the_limit_says_the_walk_was_cut",
]
CONCEPTS = ["census", "contract", "codex", "gemini", "openhands", "claude", "detect", "inventory"]
"""``--named``: only the test files of tests/io named for these (test_<concept>*.py)."""
SIDES = ("before", "after")
STATUS = {0: "survived", 1: "killed", 3: "killed", 5: "no tests", 33: "no tests", 34: "skipped"}
STATUS |= {code: "timeout" for code in (36, -24, 24, 152, 255)}
TESTED = ("killed", "survived", "timeout", "suspicious")


def functions(path: Path) -> dict[str, str]:
    """The module's top-level functions and methods, mutmut's key (``x_name``, ``xǁClassǁname``)
    → the function's code, normalised by ``ast.unparse``."""
    found: dict[str, str] = {}
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            found[f"x_{node.name}"] = ast.unparse(node)
        elif isinstance(node, ast.ClassDef):
            for sub in node.body:
                if isinstance(sub, ast.FunctionDef | ast.AsyncFunctionDef):
                    found[f"xǁ{node.name}ǁ{sub.name}"] = ast.unparse(sub)
    return found


def dotted(module: str) -> str:
    """``ctxlab/io/_census.py`` → ``ctxlab.io._census``, as mutmut names a module's mutants."""
    return module.removesuffix(".py").replace("/", ".")


def sample(
    roots: dict[str, Path], pairs: list[tuple[str, str]], tail: str = "1"
) -> dict[str, list[str]]:
    """Each side's mutmut patterns: the functions both sides of a pair hold, mutants whose
    number ends in ``tail`` (a glob)."""
    patterns: dict[str, list[str]] = {side: [] for side in SIDES}
    for pair in pairs:
        found = [functions(roots[side] / module) for side, module in zip(SIDES, pair, strict=True)]
        for side, module in zip(SIDES, pair, strict=True):
            patterns[side] += [
                f"{dotted(module)}.{k}__mutmut_*{tail}"
                for k in sorted(set.intersection(*(set(f) for f in found)))
            ]
    return patterns


def test_files(root: Path, named: bool, concepts: list[str] = CONCEPTS) -> list[str]:
    """tests/io, or with ``named`` its files named for one of ``concepts``."""
    if not named:
        return ["tests/io"]
    found = {p for c in concepts for p in (root / "tests" / "io").glob(f"test_{c}*.py")}
    return sorted(str(p.relative_to(root)) for p in found)


def start(
    side: str, root: Path, work: Path, patterns: list[str], args: argparse.Namespace
) -> subprocess.Popen[bytes]:
    """Copy ``root`` to its work folder, configure mutmut there and start it, logging to
    ``<work>.log``."""
    copy_project(root, work / side)
    modules = [pair[SIDES.index(side)] for pair in args.pairs]
    configure(modules, test_files(root, args.named, args.concepts), work / side, DESELECT)
    # Without PYTHONPATH: a checkout on it would be imported by the tests' subprocesses.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env.setdefault("CTXLAB_CORPUS", str(REPO.parent / "shared" / "corpus"))
    command = [
        sys.executable,
        "-m",
        "mutmut",
        "run",
        "--max-children",
        str(args.children),
        *patterns,
    ]
    log = (work / f"{side}.log").open("wb")
    return subprocess.Popen(command, cwd=work / side, env=env, stdout=log, stderr=subprocess.STDOUT)


def statuses(work: Path, side: str, module: str, tail: str = "1") -> dict[str, str]:
    """The decided mutants of the sample (numbers ending in ``tail``) of one module: the
    function's key and number → status."""
    meta = work / side / "mutants" / f"{module}.meta"
    codes = json.loads(meta.read_text())["exit_code_by_key"] if meta.is_file() else {}
    return {
        key.rpartition(".")[2]: STATUS.get(code, "suspicious")
        for key, code in codes.items()
        if code is not None and fnmatch(key, f"*__mutmut_*{tail}")
    }


def score(counts: Counter[str]) -> str:
    """Killed over the mutants the tests decided, as a percentage (``-`` when none)."""
    tested = sum(counts[s] for s in TESTED)
    return f"{counts['killed'] / tested:.1%}" if tested else "-"


def compare(
    pair: tuple[str, str], roots: dict[str, Path], work: Path, tail: str = "1"
) -> tuple[list[str], list[str], list[Counter[str]]]:
    """One module pair's rows (both sides: the unchanged functions' mutants decided on both,
    then the changed functions'), its unchanged mutants killed on one side only, and the
    unchanged functions' counts of each side."""
    code = [functions(roots[side] / module) for side, module in zip(SIDES, pair, strict=True)]
    seen = [statuses(work, side, module, tail) for side, module in zip(SIDES, pair, strict=True)]
    same = {k for k in set(code[0]) & set(code[1]) if code[0][k] == code[1][k]}
    changed = (set(code[0]) & set(code[1])) - same
    both = {m for m in set(seen[0]) & set(seen[1]) if m.rpartition("__mutmut_")[0] in same}
    rows, differ, totals = [], [], []
    for i, side in enumerate(SIDES):
        counts = Counter(seen[i][m] for m in both)
        moved = Counter(s for m, s in seen[i].items() if m.rpartition("__mutmut_")[0] in changed)
        rows.append(_row(pair[i], side, counts))
        totals.append(counts)
        if moved:
            rows.append(_row(f"{pair[i]} (changed functions)", side, moved))
    for m in sorted(both):
        if (seen[0][m] == "killed") != (seen[1][m] == "killed"):
            differ.append(f"{pair[1]} {m}: before {seen[0][m]}, after {seen[1][m]}")
    return rows, differ, totals


def _row(name: str, side: str, counts: Counter[str]) -> str:
    figures = [counts[s] for s in ("killed", "survived", "timeout", "no tests", "suspicious")]
    return (
        f"{name:56} {side:6} {sum(counts.values()):5} "
        + " ".join(f"{n:5}" for n in figures)
        + f"  {score(counts)}"
    )


def tally(
    roots: dict[str, Path], work: Path, pairs: list[tuple[str, str]] = PAIRS, tail: str = "1"
) -> None:
    """Print the table, the totals of the unchanged functions, and the mutants that differ."""
    print(
        f"{'module':56} {'side':6} {'all':>5} {'kill':>5} {'surv':>5} {'tout':>5} "
        f"{'none':>5} {'susp':>5}  score"
    )
    differ: list[str] = []
    totals = [Counter[str](), Counter[str]()]
    for pair in pairs:
        rows, found, counts = compare(pair, roots, work, tail)
        print("\n".join(rows))
        differ += found
        for total, more in zip(totals, counts, strict=True):
            total.update(more)
    for side, total in zip(SIDES, totals, strict=True):
        print(_row("all, the unchanged functions", side, total))
    print("killed on one side only (unchanged functions):", *differ or ["none"], sep="\n  ")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("before", type=Path, help="a checkout of the tree before (3b075b5)")
    parser.add_argument("--after", type=Path, default=REPO, help="the tree after (this one)")
    parser.add_argument("--children", type=int, default=1, help="mutmut's workers per side")
    parser.add_argument("--work", type=Path, default=WORK, help="where the copies run")
    parser.add_argument("--named", action="store_true", help="only the test files named so")
    parser.add_argument("--tally", action="store_true", help="only print what is decided")
    parser.add_argument("--modules", nargs="*", help="io modules at the same path on both sides")
    parser.add_argument("--concepts", nargs="*", default=CONCEPTS, help="--named's test names")
    parser.add_argument("--sample", default="1", help="the mutant numbers' tail, a glob")
    parser.add_argument("--side", choices=SIDES, help="run this side only")
    args = parser.parse_args(argv)
    args.pairs = [(m, m) for m in args.modules] if args.modules else PAIRS
    roots = {"before": args.before.resolve(), "after": args.after.resolve()}
    if not args.tally:
        patterns = sample(roots, args.pairs, args.sample)
        args.work.mkdir(parents=True, exist_ok=True)
        sides = [args.side] if args.side else SIDES
        runs = [start(side, roots[side], args.work, patterns[side], args) for side in sides]
        if any(run.wait() != 0 for run in runs):
            print(f"mutmut failed: see the logs in {args.work}")
            return 1
    tally(roots, args.work, args.pairs, args.sample)
    return 0


if __name__ == "__main__":
    sys.exit(main())
