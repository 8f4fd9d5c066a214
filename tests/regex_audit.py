"""Every regular expression in ``ctxlab/`` must run in time linear in the length of the text it
reads: an audit (``python -m tests.regex_audit``; `tests/util/test_regex_linear.py` runs it).

Python's ``re`` backtracks: ``[\\d.,]+\\s+sent`` over thirty thousand digits, or a lazy
``<tag>(.*?)</tag>`` over a reply of unclosed tags, costs the square of the text's length. The
audit finds every pattern in the package's source (a literal given to ``re.compile``,
``re.search`` and the rest — found in the syntax tree, so a pattern added anywhere is audited),
builds adversarial texts from each pattern's own pieces (each character it names repeated, each
literal run repeated, a literal run followed by a repeated character, pairs of its characters
alternated), and times an exhaustive scan (``finditer``) at two lengths, ``n`` and ``4n``: a
linear pattern takes about four times as long, a quadratic one sixteen. A pattern built at run
time must be listed in `DYNAMIC` with the reason it is safe.
"""

from __future__ import annotations

import ast
import itertools
import re
import re._parser as sre_parse  # the standard library's own parser of patterns
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "ctxlab"
SKIPPED = ("demo/project/",)
"""The demo's sample project: code the demo agent edits and tests, not code that reads a user's
text."""

DYNAMIC = {
    "io/_aider.py": "the split on aider's run header: a literal (re.escape) anchored at lines",
    "demo/_tools.py": "the demo's grep tool compiles the model's own pattern, over the sample "
    "project's files",
    "fork/_signature.py": "the usage notice's first sentence (re.escape) with its numbers as "
    "\\d+: it opens with a literal and each \\d+ is followed by one (audited as built: "
    "tests/util/test_regex_audit.py)",
}
"""Modules whose patterns are built at run time, with why each is linear (or not user text)."""

_FUNCTIONS = {
    "compile",
    "search",
    "match",
    "fullmatch",
    "findall",
    "finditer",
    "sub",
    "subn",
    "split",
}
_POOL = " a1.\n\t<>/`-_:=,;\"'()[]{}#*|\\x"
"""Characters every pattern is also pumped with, beside its own."""

N = 16_000
"""The shorter length; the longer is ``4 * N``. A lazy scan to an unclosed tag of 20
characters — the mini-SWE-agent case — takes ~0.2 s at ``4 * N`` when quadratic, ~1 ms when
linear."""
QUICK = 0.02
"""Seconds under which one scan at ``4 * N`` passes without measuring the ratio."""


@dataclass(frozen=True)
class Found:
    where: str
    pattern: str | bytes
    flags: int


def found_patterns() -> tuple[list[Found], list[str]]:
    """Every literal pattern of the package, and the places that build one at run time."""
    found: list[Found] = []
    dynamic: list[str] = []
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative.startswith(SKIPPED):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and isinstance(node.func.value, ast.Name)
                and node.func.value.id == "re"
                and node.func.attr in _FUNCTIONS
                and node.args
            ):
                continue
            first = node.args[0]
            where = f"{relative}:{node.lineno}"
            if not (isinstance(first, ast.Constant) and isinstance(first.value, str | bytes)):
                dynamic.append(where)
                continue
            flags = 0
            position = {"compile": 1, "split": 3, "sub": 4, "subn": 4}.get(node.func.attr, 2)
            given = [k.value for k in node.keywords if k.arg == "flags"]
            if len(node.args) > position:
                given.append(node.args[position])
            for expression in given:
                flags |= eval(compile(ast.Expression(expression), where, "eval"), {"re": re})
            found.append(Found(where, first.value, flags))
    return found, dynamic


_CATEGORY = {
    "CATEGORY_DIGIT": "7",
    "CATEGORY_NOT_DIGIT": "a",
    "CATEGORY_SPACE": " ",
    "CATEGORY_NOT_SPACE": "a",
    "CATEGORY_WORD": "a",
    "CATEGORY_NOT_WORD": " ",
}


def _member(items: list[tuple[object, object]]) -> str:
    """A character of a set (``[...]``): its first named one, or, negated, one it leaves out."""
    named = [_set_chars(op, value) for op, value in items]
    if items and str(items[0][0]) == "NEGATE":
        excluded = "".join(re.escape(c) for chars in named for c in chars)
        outside = re.compile(f"[^{excluded}]")
        return next((c for c in _POOL if outside.match(c)), "\x00")
    return next((c for chars in named for c in chars), "a")


def _set_chars(op: object, value: object) -> list[str]:
    name = str(op)
    if name == "LITERAL":
        return [chr(value)]  # type: ignore[arg-type]
    if name == "RANGE":
        return [chr(value[0]), chr(value[1])]  # type: ignore[index]
    if name == "CATEGORY":
        return [_CATEGORY.get(str(value), "a")]
    return []


def _inner(op: str, value: object) -> list[list[tuple[object, object]]]:
    """The sub-sequences of one node of a parsed pattern."""
    if op in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
        return [value[2]]  # type: ignore[index]
    if op == "SUBPATTERN":
        return [value[3]]  # type: ignore[index]
    if op == "ATOMIC_GROUP":
        return [value]  # type: ignore[list-item]
    if op == "BRANCH":
        return list(value[1])  # type: ignore[index]
    if op in ("ASSERT", "ASSERT_NOT"):
        return [value[1]]  # type: ignore[index]
    return []


def _sample(items: list[tuple[object, object]], groups: dict[int, str]) -> str:
    """A text the sequence ``items`` matches, or nearly: the first branch, each repeat once."""
    out = ""
    for op, value in items:
        name = str(op)
        if name == "LITERAL":
            out += chr(value)  # type: ignore[arg-type]
        elif name == "NOT_LITERAL":
            out += "a" if chr(value) != "a" else "b"  # type: ignore[arg-type]
        elif name == "IN":
            out += _member(value)  # type: ignore[arg-type]
        elif name == "ANY":
            out += "a"
        elif name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT"):
            out += _sample(value[2], groups) * max(value[0], 1)  # type: ignore[index]
        elif name == "SUBPATTERN":
            text = _sample(value[3], groups)  # type: ignore[index]
            if value[0] is not None:  # type: ignore[index]
                groups[value[0]] = text  # type: ignore[index]
            out += text
        elif name == "ATOMIC_GROUP":
            out += _sample(value, groups)  # type: ignore[arg-type]
        elif name == "BRANCH":
            out += _sample(value[1][0], groups)  # type: ignore[index]
        elif name == "GROUPREF":
            out += groups.get(value, "")  # type: ignore[call-overload]
    return out


def _pieces(pattern: str | bytes, flags: int) -> tuple[set[str], list[str], list[str]]:
    """The characters a pattern names (its literals, the ends of each range, a member of each
    category and set), its literal runs of two or more characters, and samples of the starts of
    its sequences (of the whole, and of each branch): what pumps are made of."""
    text = pattern.decode("latin-1") if isinstance(pattern, bytes) else pattern
    parsed = list(sre_parse.parse(text, flags))
    chars: set[str] = set()
    runs: list[str] = []
    starts: list[str] = []

    def walk(items: list[tuple[object, object]]) -> None:
        run = ""
        for op, value in items:
            name = str(op)
            if name == "LITERAL":
                run += chr(value)  # type: ignore[arg-type]
                continue
            if len(run) > 1:
                runs.append(run)
            chars.update(run)
            run = ""
            if name == "IN":
                for inner_op, inner in value:  # type: ignore[attr-defined]
                    chars.update(_set_chars(inner_op, inner))
                chars.add(_member(value))  # type: ignore[arg-type]
            for sequence in _inner(name, value):
                walk(list(sequence))
            if name == "BRANCH":
                for sequence in value[1]:  # type: ignore[index]
                    starts.extend(_starts(list(sequence)))
        if len(run) > 1:
            runs.append(run)
        chars.update(run)

    def _starts(items: list[tuple[object, object]]) -> list[str]:
        groups: dict[int, str] = {}
        return [_sample(items[: k + 1], groups) for k in range(len(items))]

    walk(parsed)
    starts.extend(_starts(parsed))
    return chars, runs, [s for s in dict.fromkeys(starts) if s]


def pumps(pattern: str | bytes, flags: int) -> Iterator[tuple[str, str]]:
    """(prefix, unit): texts ``prefix + unit * k`` to scan, built from the pattern's pieces."""
    chars, runs, starts = _pieces(pattern, flags)
    own = sorted(chars)
    units = list(dict.fromkeys([*sorted(set(own) | set(_POOL)), *runs, *starts]))
    for unit in units:
        yield "", unit
    for run in runs[:6]:
        for unit in own[:30]:
            yield run, unit
    for a, b in itertools.combinations(own[:12], 2):
        yield "", a + b


def _text(prefix: str, unit: str, length: int, binary: bool) -> str | bytes:
    text = prefix + unit * max(length // len(unit), 1)
    return text.encode("latin-1", "replace") if binary else text


def _scan(compiled: re.Pattern[str] | re.Pattern[bytes], text: str | bytes) -> float:
    started = time.perf_counter()
    for _ in compiled.finditer(text):  # type: ignore[arg-type]
        pass
    return time.perf_counter() - started


def _linear(compiled: re.Pattern[str] | re.Pattern[bytes], texts: list[str | bytes]) -> bool:
    """Whether scanning ``texts[1]`` (four times ``texts[0]``) takes at most about four times
    as long: twice is allowed, and 50 ms, for a busy machine."""
    # The least of several runs: a busy machine slows a run, never speeds one up. The long
    # text is scanned again only when once looks quadratic (it may take seconds then).
    short = min(_scan(compiled, texts[0]) for _ in range(3))
    long = _scan(compiled, texts[1])
    if long > 8 * short + 0.05:
        long = min(long, _scan(compiled, texts[1]))
    return long <= 8 * short + 0.05


def quadratic(found: Found) -> tuple[str, str] | None:
    """The first pump over which ``found`` is not linear, and the times; None if none.

    Lengths grow by four (N / 4, N, 4 N) and stop at the first that shows the square: a
    quadratic pattern is never scanned at a length where it would take minutes."""
    compiled = re.compile(found.pattern, found.flags)
    binary = isinstance(found.pattern, bytes)
    for prefix, unit in pumps(found.pattern, found.flags):
        texts = [_text(prefix, unit, n, binary) for n in (N // 4, N, 4 * N)]
        # A pattern quadratic and slow already at N / 4 is compared there (at 4 N it could
        # take minutes); one fast there is at most 256 times slower at 4 N.
        if _scan(compiled, texts[0]) >= QUICK / 16 and not _linear(compiled, texts[:2]):
            return f"{prefix!r} + {unit!r} * k", f"{N // 4:,} → {N:,} characters"
        if _scan(compiled, texts[2]) >= QUICK and not _linear(compiled, texts[1:]):
            return f"{prefix!r} + {unit!r} * k", f"{N:,} → {4 * N:,} characters"
    return None


def main() -> int:
    found, dynamic = found_patterns()
    unlisted = sorted({w for w in dynamic if w.split(":")[0] not in DYNAMIC})
    failures = [f"{w}: a pattern built at run time; list it in DYNAMIC with why" for w in unlisted]
    for item in found:
        print(f"auditing {item.where} {item.pattern!r}", flush=True)
        result = quadratic(item)
        if result is not None:
            pump, lengths = result
            failures.append(f"{item.where} {item.pattern!r}: not linear over {pump} ({lengths})")
    print(f"{len(found)} patterns audited, {len(dynamic)} built at run time")
    for failure in failures:
        print("NOT LINEAR:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
