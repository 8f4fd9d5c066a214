"""Every regular expression in ``ctxlab/`` must run in time linear in the length of the text it
reads: an audit (``python -m tests.regex_audit``; `tests/util/test_regex_audit.py` runs it).

Python's ``re`` backtracks: ``[\\d.,]+\\s+sent`` over thirty thousand digits, or a lazy
``<tag>(.*?)</tag>`` over a reply of unclosed tags, costs the square of the text's length, and
``(a+)+$`` over thirty ``a`` and a ``!`` costs two to the thirtieth. The audit finds every
pattern in the package's source — a literal given to ``re.compile``, ``re.search`` and the rest,
or to the ``regex`` package's, under any name they are imported as; found in the syntax tree, so
a pattern added anywhere is audited — and then:

- refuses **nested quantifiers that can share a character** (`nested`): a repeated group whose
  own repeat may end an iteration with a character the next iteration may start with, such as
  ``(a+)+`` or ``(\\w+\\s?)+`` — the text can be split between them in exponentially many ways;
- builds adversarial texts from each pattern's own pieces (`pumps`): each character it names
  repeated, each literal run repeated, a literal run followed by a repeated character, pairs of
  its characters alternated, the start of each of its sequences, and each repeated part pumped
  after the text that leads to it — **every alternative** of each alternation, not its first;
- ends each such text as it is and with **a character that makes the match fail**
  (`failing_ends`): one that, put after a short pump, changes what the pattern finds in it (a
  look-ahead that refuses it, what must follow the run) — ``'1' * k + 'x'`` for a number that
  must not run into a word;
- times an exhaustive scan (``finditer``) of each: first from four units up, a quarter more text
  at a time, where a pattern whose time grows fourfold in a step is exponential (and stopped
  there, before it takes hours); then at two lengths, ``n`` and ``4n``: a linear pattern takes
  about four times as long, a quadratic one sixteen.

A pattern built at run time must be listed in `DYNAMIC` with the reason it is safe.
"""

from __future__ import annotations

import ast
import functools
import itertools
import re
import re._compiler as sre_compile  # the standard library's own compiler of parsed patterns
import re._parser as sre_parse  # the standard library's own parser of patterns
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import regex

PACKAGE = Path(__file__).resolve().parents[1] / "ctxlab"
DYNAMIC = {
    "io/formats/aider/chat_history.py": "the split on aider's run header: a literal (re.escape) anchored at lines",
    "util/_model_pattern.py": "a pattern the model gives (the fork's and the demo's grep tool), "
    "matched by the regex package under a deadline: never linear, always bounded "
    "(tests/util/test_regex_audit.py runs (a+)+$ through the tool)",
    "retention/_next_use.py": "a command's first word and argument (re.escape) around options "
    "that each start with '-' after space (audited as built: tests/util/test_regex_audit.py)",
    "retention/_before.py": "next_use's command patterns (retention/_next_use.py), compiled "
    "there to be matched at each occurrence of their first word (audited as built: "
    "tests/util/test_regex_audit.py)",
    "fork/_signature.py": "the usage notice's first sentence (re.escape) with its numbers as "
    "\\d+: it opens with a literal and each \\d+ is followed by one (audited as built: "
    "tests/util/test_regex_audit.py)",
    "fork/_run_folder.py": "a run's folder: an alternation of escaped literal paths (re.escape), "
    "then a separator run or a one-character look-ahead (audited as built: "
    "tests/util/test_regex_audit.py)",
    "pipeline/_span_text.py": "the value and file patterns (literals, audited with the others) "
    "compiled again with re.ASCII for ASCII texts: the same steps, \\w and \\d read from the "
    "ASCII table (audited as built: tests/util/test_regex_audit.py)",
}
"""Modules whose patterns are built at run time, with why each is linear or bounded."""

_MODULES = {"re": re, "regex": regex}
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
_ENDS = " xA_7é.!\n\"'<>/-:,;)]}#*|=\x00"
"""Characters tried after a pump, beside the pattern's own: one of each kind a pattern tests
(a letter of either case, a digit, a non-ASCII letter, white space, punctuation)."""
_ALPHABET = "".join(map(chr, range(128))) + "éßЖ中٣\u00a0\u2028"
"""The characters a character set is compared on (`nested`)."""
_REPEATS = ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT")
_SAMPLES = 32
"""At most this many sample texts of one sequence (each alternative of a branch is one)."""

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
    engine: str = "re"
    """The module that compiles it: ``re`` or ``regex``."""

    def compiled(self) -> Any:
        return _MODULES[self.engine].compile(self.pattern, self.flags)


def _imports(tree: ast.Module) -> tuple[dict[str, str], dict[str, tuple[str, str]]]:
    """The names the modules ``re`` and ``regex`` are bound to in a module (``import re as
    x``), and the names their functions are (``from re import compile``)."""
    modules: dict[str, str] = {}
    functions: dict[str, tuple[str, str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name in _MODULES:
                    modules[alias.asname or alias.name] = alias.name
        elif isinstance(node, ast.ImportFrom) and node.module in _MODULES:
            for alias in node.names:
                if alias.name in _FUNCTIONS:
                    functions[alias.asname or alias.name] = (node.module, alias.name)
    return modules, functions


def _called(
    node: ast.Call, modules: dict[str, str], functions: dict[str, tuple[str, str]]
) -> tuple[str, str] | None:
    """(module, function) of ``re`` or ``regex`` that ``node`` calls, if it calls one."""
    func = node.func
    if (
        isinstance(func, ast.Attribute)
        and isinstance(func.value, ast.Name)
        and func.value.id in modules
        and func.attr in _FUNCTIONS
    ):
        return modules[func.value.id], func.attr
    if isinstance(func, ast.Name) and func.id in functions:
        return functions[func.id]
    return None


def found_patterns(package: Path = PACKAGE) -> tuple[list[Found], list[str]]:
    """Every literal pattern of the package, and the places that build one at run time."""
    found: list[Found] = []
    dynamic: list[str] = []
    for path in sorted(package.rglob("*.py")):
        relative = path.relative_to(package).as_posix()
        tree = ast.parse(path.read_text(encoding="utf-8"))
        modules, functions = _imports(tree)
        namespace = {name: _MODULES[module] for name, module in modules.items()}
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call) or not node.args:
                continue
            called = _called(node, modules, functions)
            if called is None:
                continue
            engine, function = called
            first = node.args[0]
            where = f"{relative}:{node.lineno}"
            if not (isinstance(first, ast.Constant) and isinstance(first.value, str | bytes)):
                dynamic.append(where)
                continue
            flags = 0
            position = {"compile": 1, "split": 3, "sub": 4, "subn": 4}.get(function, 2)
            given = [k.value for k in node.keywords if k.arg == "flags"]
            if len(node.args) > position:
                given.append(node.args[position])
            for expression in given:
                flags |= eval(compile(ast.Expression(expression), where, "eval"), namespace)
            found.append(Found(where, first.value, flags, engine))
    return found, dynamic


_CATEGORY = {
    "CATEGORY_DIGIT": "7",
    "CATEGORY_NOT_DIGIT": "a",
    "CATEGORY_SPACE": " ",
    "CATEGORY_NOT_SPACE": "a",
    "CATEGORY_WORD": "a",
    "CATEGORY_NOT_WORD": " ",
}

Items = list[tuple[Any, Any]]


def _member(items: Items) -> str:
    """A character of a set (``[...]``): its first named one, or, negated, one it leaves out."""
    named = [_set_chars(op, value) for op, value in items]
    if items and str(items[0][0]) == "NEGATE":
        excluded = "".join(re.escape(c) for chars in named for c in chars)
        outside = re.compile(f"[^{excluded}]")
        return next((c for c in _POOL if outside.match(c)), "\x00")
    return next((c for chars in named for c in chars), "a")


def _set_chars(op: object, value: Any) -> list[str]:
    name = str(op)
    if name == "LITERAL":
        return [chr(value)]
    if name == "RANGE":
        return [chr(value[0]), chr(value[1])]
    if name == "CATEGORY":
        return [_CATEGORY.get(str(value), "a")]
    return []


def _inner(op: str, value: Any) -> list[Items]:
    """The sub-sequences of one node of a parsed pattern."""
    if op in _REPEATS:
        return [value[2]]
    if op == "SUBPATTERN":
        return [value[3]]
    if op == "ATOMIC_GROUP":
        return [value]
    if op == "BRANCH":
        return list(value[1])
    if op in ("ASSERT", "ASSERT_NOT"):
        return [value[1]]
    if op == "GROUPREF_EXISTS":
        return [s for s in value[1:] if s is not None]
    return []


def _combine(left: list[str], right: list[str]) -> list[str]:
    """Each text of ``left`` followed by each of ``right``: first every one of each side at
    least once (paired in turn), then the other pairs, at most `_SAMPLES` (or as many as the
    longer side, so that no alternative is left out)."""
    count = max(len(left), len(right))
    paired = [left[i % len(left)] + right[i % len(right)] for i in range(count)]
    others = (a + b for a, b in itertools.product(left, right))
    chosen = itertools.islice(itertools.chain(paired, others), count + 4 * _SAMPLES)
    return list(dict.fromkeys(chosen))[: max(_SAMPLES, count)]


def _samples(items: Items, groups: dict[int, str]) -> list[str]:
    """Texts the sequence ``items`` matches, or nearly: every alternative of each branch, each
    repeat its least number of times (once when that is none, and none), the first first."""
    out = [""]
    for op, value in items:
        out = _combine(out, _node_samples(str(op), value, groups))
    return out


def _node_samples(name: str, value: Any, groups: dict[int, str]) -> list[str]:
    if name == "LITERAL":
        return [chr(value)]
    if name == "NOT_LITERAL":
        return ["a" if chr(value) != "a" else "b"]
    if name == "IN":
        return [_member(value)]
    if name == "ANY":
        return ["a"]
    if name in _REPEATS:
        texts = [t * max(value[0], 1) for t in _samples(value[2], groups)]
        return [*texts, ""] if value[0] == 0 else texts
    if name == "SUBPATTERN":
        texts = _samples(value[3], groups)
        if value[0] is not None:
            groups[value[0]] = texts[0]
        return texts
    if name == "ATOMIC_GROUP":
        return _samples(value, groups)
    if name == "BRANCH":
        return [t for sequence in value[1] for t in _samples(sequence, groups)]
    if name == "GROUPREF":
        return [groups.get(value, "")]
    if name == "GROUPREF_EXISTS":
        return _samples(value[1], groups)
    return [""]  # an anchor or a look-around: no text of its own


def _parsed(pattern: str | bytes, flags: int) -> Any:
    text = pattern.decode("latin-1") if isinstance(pattern, bytes) else pattern
    try:
        return sre_parse.parse(text, flags)
    except re.error:
        return None  # the regex package's own syntax: pumped with the pool alone


def _pieces(parsed: Any) -> tuple[set[str], list[str]]:
    """The characters a pattern names (its literals, the ends of each range, a member of each
    category and set) and its literal runs of two or more characters."""
    chars: set[str] = set()
    runs: list[str] = []

    def walk(items: Items) -> None:
        run = ""
        for op, value in items:
            name = str(op)
            if name == "LITERAL":
                run += chr(value)
                continue
            if len(run) > 1:
                runs.append(run)
            chars.update(run)
            run = ""
            if name == "IN":
                for inner_op, inner in value:
                    chars.update(_set_chars(inner_op, inner))
                chars.add(_member(value))
            for sequence in _inner(name, value):
                walk(list(sequence))
        if len(run) > 1:
            runs.append(run)
        chars.update(run)

    walk(list(parsed))
    return chars, runs


def _led(items: Items, lead: str, groups: dict[int, str]) -> Iterator[tuple[str, str]]:
    """Pumps (prefix, unit) walking the pattern with the text that leads to each place in it,
    into every alternative of each branch: ``("", start)`` for the start of each sequence up to
    each of its items, and for every sample of the whole sequence, each after the text leading
    to the sequence; ``(before, turn)`` for each repeat that may turn more than once — the text
    leading to it, then one turn of its body, each alternative (the ReDoS pump: `failing_ends`
    gives what comes after it)."""
    for whole in _samples(items, dict(groups)):
        yield "", lead + whole
    for k, (op, value) in enumerate(items):
        name = str(op)
        before = lead + _samples(items[:k], dict(groups))[0]
        yield "", before + _node_samples(name, value, dict(groups))[0]
        if name in _REPEATS and value[1] > 1:
            for turn in _samples(value[2], dict(groups)):
                yield before, turn
        if name not in ("ASSERT", "ASSERT_NOT"):  # a look-around reads text, leads to none
            for sequence in _inner(name, value):
                yield from _led(list(sequence), before, groups)


def _root(unit: str) -> str:
    """The shortest text ``unit`` repeats (``"77"`` → ``"7"``): one pump, not two."""
    for size in range(1, len(unit)):
        if len(unit) % size == 0 and unit[:size] * (len(unit) // size) == unit:
            return unit[:size]
    return unit


def pumps(pattern: str | bytes, flags: int) -> Iterator[tuple[str, str]]:
    """(prefix, unit): texts ``prefix + unit * k`` to scan, built from the pattern's pieces."""
    parsed = _parsed(pattern, flags)
    chars, runs = _pieces(parsed) if parsed is not None else (set(), [])
    own = sorted(chars)
    made = [("", unit) for unit in [*sorted(set(own) | set(_POOL)), *runs]]
    made += [(run, unit) for run in runs[:6] for unit in own[:30]]
    made += [("", a + b) for a, b in itertools.combinations(own[:12], 2)]
    if parsed is not None:
        made += list(_led(list(parsed), "", {}))
    yield from dict.fromkeys((prefix, _root(unit)) for prefix, unit in made if unit)


def _spans(compiled: Any, text: str | bytes) -> list[tuple[int, int]]:
    return [m.span() for m in compiled.finditer(text)]


@functools.cache
def _own(pattern: str | bytes, flags: int) -> list[str]:
    """The characters a pattern names (`_pieces`)."""
    parsed = _parsed(pattern, flags)
    return sorted(_pieces(parsed)[0]) if parsed is not None else []


def failing_ends(found: Found, prefix: str, unit: str) -> list[str]:
    """Characters that, put after ``prefix + unit * k``, change what the pattern finds within
    it, and are not taken into a match — an end a match of the run looks at and refuses (a
    look-ahead, what must follow the run) — one for each different outcome, at most three."""
    compiled = found.compiled()
    binary = isinstance(found.pattern, bytes)
    # A few units (8 characters at least): an exponential pattern is fast there.
    base = _text(prefix, unit, max(4 * len(unit), 8), binary)
    plain = _spans(compiled, base)
    outcomes: dict[tuple[tuple[int, int], ...], str] = {}
    for end in dict.fromkeys([*_ENDS, *_own(found.pattern, found.flags)]):
        ended = base + (end.encode("latin-1", "replace") if binary else end)  # type: ignore[operator]
        spans = _spans(compiled, ended)
        if any(start <= len(base) < stop for start, stop in spans):
            continue  # taken into a match: a longer run, not a failing end
        within = tuple(span for span in spans if span[1] <= len(base))
        if within != tuple(plain):
            outcomes.setdefault(within, end)
    return list(outcomes.values())[:3]


def _text(prefix: str, unit: str, length: int, binary: bool, end: str = "") -> str | bytes:
    text = prefix + unit * max(length // len(unit), 1) + end
    return text.encode("latin-1", "replace") if binary else text


def _scan(compiled: Any, text: str | bytes) -> float:
    """Seconds of the processor one exhaustive scan takes: on a machine shared by other jobs
    the wall clock counts the time the scan waited its turn (ten times the scan, at times)."""
    started = time.process_time()
    for _ in compiled.finditer(text):
        pass
    return time.process_time() - started


def _linear(compiled: Any, texts: list[str | bytes]) -> bool:
    """Whether scanning ``texts[1]`` (four times ``texts[0]``) takes at most about four times
    as long: twice is allowed, and 50 ms, for a busy machine."""
    # The least of several runs: a busy machine slows a run, never speeds one up. The long
    # text is scanned again only when once looks quadratic (it may take seconds then), and
    # both again when that still does: a quadratic pattern fails each time.
    short = min(_scan(compiled, texts[0]) for _ in range(3))
    long = _scan(compiled, texts[1])
    for _ in range(2):
        if long <= 8 * short + 0.05:
            return True
        long = min(long, _scan(compiled, texts[1]))
        short = min(short, *(_scan(compiled, texts[0]) for _ in range(3)))
    return long <= 8 * short + 0.05


def _ramp(compiled: Any, prefix: str, unit: str, end: str, binary: bool) -> str | None:
    """Why the scans of ``prefix + unit * k + end``, ``k`` growing by a quarter from four units
    to N / 4 characters, show far worse than the square, or None: the time growing fourfold for
    a quarter more text (exponential; the square grows 1.6-fold, a busy machine adds noise), or
    a second already. Each step costs at most about four times the last: the scans stop before
    one takes hours."""
    units, previous = 4, None
    while True:
        text = _text(prefix, unit, units * len(unit), binary, end)
        seconds = _scan(compiled, text)
        if seconds > QUICK:  # the least of two: a busy machine slows a run, never speeds it
            seconds = min(seconds, _scan(compiled, text))
        if seconds > 1.0:
            return f"slow: {seconds:.1f} s over {len(text):,} characters"
        if previous is not None and seconds > QUICK and seconds > 4 * previous:
            return f"exponential: {previous:.3f} s → {seconds:.3f} s for a quarter more text"
        if units * len(unit) >= N // 4:
            return None
        previous = seconds
        units = max(units + 1, units * 5 // 4)


def _slow(found: Found, prefix: str, unit: str, end: str) -> str | None:
    """Why ``prefix + unit * k + end`` is not linear (the lengths, or `_ramp`'s), or None."""
    compiled = found.compiled()
    binary = isinstance(found.pattern, bytes)
    worse = _ramp(compiled, prefix, unit, end, binary)
    if worse is not None:
        return worse
    texts = [_text(prefix, unit, n, binary, end) for n in (N // 4, N, 4 * N)]
    # A pattern quadratic and slow already at N / 4 is compared there (at 4 N it could
    # take minutes); one fast there is at most 256 times slower at 4 N.
    if _scan(compiled, texts[0]) >= QUICK / 16 and not _linear(compiled, texts[:2]):
        return f"{N // 4:,} → {N:,} characters"
    if _scan(compiled, texts[2]) >= QUICK and not _linear(compiled, texts[1:]):
        return f"{N:,} → {4 * N:,} characters"
    return None


def quadratic(found: Found) -> tuple[str, str] | None:
    """The first pump over which ``found`` is not linear, and the lengths; None if none.

    Each pump is scanned as it is and ended by each of its `failing_ends`. Lengths grow by four
    (N / 4, N, 4 N) and stop at the first that shows the square: a quadratic pattern is never
    scanned at a length where it would take minutes."""
    for prefix, unit in pumps(found.pattern, found.flags):
        for end in ["", *failing_ends(found, prefix, unit)]:
            slow = _slow(found, prefix, unit, end)
            if slow is not None:
                return f"{prefix!r} + {unit!r} * k + {end!r}", slow
    return None


def _chars(state: Any, node: tuple[Any, Any], flags: int) -> frozenset[str]:
    """The characters of `_ALPHABET` one node matching one character matches."""
    compiled = sre_compile.compile(sre_parse.SubPattern(state, [node]), flags)
    return frozenset(c for c in _ALPHABET if compiled.fullmatch(c))


def _first(state: Any, items: Items, flags: int) -> tuple[frozenset[str], bool]:
    """The characters a match of ``items`` can start with, and whether it can match nothing."""
    out: set[str] = set()
    for op, value in items:
        name = str(op)
        if name in ("LITERAL", "NOT_LITERAL", "IN", "ANY"):
            return frozenset(out | _chars(state, (op, value), flags)), False
        if name in _REPEATS:
            chars, empty = _first(state, value[2], flags)
            out |= chars
            if value[0] > 0 and not empty:
                return frozenset(out), False
        elif name in ("SUBPATTERN", "ATOMIC_GROUP", "BRANCH"):
            inner = _inner(name, value)
            local = (flags | value[1]) & ~value[2] if name == "SUBPATTERN" else flags
            firsts = [_first(state, sequence, local) for sequence in inner]
            out.update(*(chars for chars, _ in firsts))
            if not any(empty for _, empty in firsts):
                return frozenset(out), False
        elif name in ("GROUPREF", "GROUPREF_EXISTS"):
            out.update(_ALPHABET)  # what a group held: anything
    return frozenset(out), True


def _ending(state: Any, items: Items, flags: int) -> Iterator[tuple[Any, Any]]:
    """The repeats (that may turn more than once, and give back) a match of ``items`` can end
    with: its last item's, and each one's before it while what follows can match nothing."""
    for op, value in reversed(items):
        name = str(op)
        if name in ("MAX_REPEAT", "MIN_REPEAT") and value[1] > 1:
            yield op, value
        elif name in ("SUBPATTERN", "BRANCH"):
            local = (flags | value[1]) & ~value[2] if name == "SUBPATTERN" else flags
            for sequence in _inner(name, value):
                yield from _ending(state, list(sequence), local)
        if (
            name in ("ATOMIC_GROUP", "POSSESSIVE_REPEAT")
            or not _first(state, [(op, value)], flags)[1]
        ):
            return  # what comes before it cannot end the match (or is never given back)


def nested(found: Found) -> list[str]:
    """The nested quantifiers of ``found`` that can share a character: a repeat whose turn can
    end with a repeat of characters the next turn can start with (``(a+)+``, ``(\\w+\\s?)+``)
    tries every split of a run between them — exponentially many where the match then fails."""
    parsed = _parsed(found.pattern, found.flags)
    if parsed is None:
        return []
    state = parsed.state
    shared: list[str] = []

    def walk(items: Items, flags: int) -> None:
        for op, value in items:
            name = str(op)
            if name in ("MAX_REPEAT", "MIN_REPEAT") and value[1] > 1:
                starts, _ = _first(state, value[2], flags)
                for inner in _ending(state, value[2], flags):
                    common = starts & _first(state, inner[1][2], flags)[0]
                    if common:
                        shared.append(
                            f"a repeat whose turn ends in a repeat of {sorted(common)[:3]}, "
                            "which its next turn starts with (make the inner one possessive)"
                        )
            local = (flags | value[1]) & ~value[2] if name == "SUBPATTERN" else flags
            for sequence in _inner(name, value):
                walk(list(sequence), local)

    walk(list(parsed), state.flags)
    return list(dict.fromkeys(shared))


def audit(found: Found) -> str | None:
    """Why ``found`` is not linear (`nested`, then `quadratic`), or None."""
    shared = nested(found)
    if shared:
        return f"nested quantifiers: {shared[0]}"
    slow = quadratic(found)
    return None if slow is None else f"not linear over {slow[0]} ({slow[1]})"


def main() -> int:
    found, dynamic = found_patterns()
    unlisted = sorted({w for w in dynamic if w.split(":")[0] not in DYNAMIC})
    failures = [f"{w}: a pattern built at run time; list it in DYNAMIC with why" for w in unlisted]
    for item in found:
        print(f"auditing {item.where} {item.pattern!r}", flush=True)
        why = audit(item)
        if why is not None:
            failures.append(f"{item.where} {item.pattern!r}: {why}")
    print(f"{len(found)} patterns audited, {len(dynamic)} built at run time")
    for failure in failures:
        print("NOT LINEAR:", failure)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
