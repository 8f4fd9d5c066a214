"""Every regular expression in ``ctxlab/`` runs in time linear in its text (`tests.regex_audit`:
each pattern found in the source, refused for nested quantifiers that can share a character,
pumped with texts made of its own pieces — every alternative, each pump also ended by a
character that makes the match fail — and timed at n and 4n); a model's pattern runs under a
time limit; and the audit itself catches what it must (its controls), among them what it missed
before issue 51."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests import regex_audit
from tests.regex_audit import Found, audit, failing_ends, found_patterns, nested, quadratic

ROOT = Path(__file__).resolve().parents[2]

# The grader's and the summarizer's number patterns before issue 51: quadratic over
# '1' * k + 'x', which the audit passed (it never ended a pump with a failing character).
OLD_NUMBER = r"(?<![\w.])(?:v?\d+(?:\.\d+)+(?![\w.]*\w)|\d{2,}(?![\w.]*\w))"
OLD_VALUE = (
    r"(?<![\w.])(?:(?:v?\d+(?:\.\d+)+|\d{2,})(?![\w.]*\w)"
    r"|[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?!\w)"
    r"|_*[a-z][a-z0-9]*(?:_[a-z0-9]+)+(?!\w)"
    r"|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+(?!\w))"
)
# The SpecStory title's pattern: found by the extended audit ('# a (' * k, 17 s at 64,000).
OLD_TITLE = r"^#{1,2} (?P<title>.+?)(?: \((?P<date>[^)]*)\))?\s*$"


def test_every_pattern_in_ctxlab_is_linear() -> None:
    # In a process of its own: a pattern that backtracks without end is stopped by the timeout,
    # and the last pattern it names is the one.
    try:
        done = subprocess.run(
            [sys.executable, "-m", "tests.regex_audit"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
    except subprocess.TimeoutExpired as exc:
        out = exc.stdout.decode() if isinstance(exc.stdout, bytes) else exc.stdout or ""
        pytest.fail(f"the audit did not end: {out.strip().splitlines()[-1:]}")
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "NOT LINEAR" not in done.stdout


def test_the_patterns_built_at_run_time_are_linear() -> None:
    # Audited as they are built: a change of the usage notice's wording cannot make one
    # quadratic unseen.
    from ctxlab.fork._signature import _USAGE

    assert "fork/_signature.py" in regex_audit.DYNAMIC
    assert audit(Found("fork/_signature.py", _USAGE.pattern, _USAGE.flags)) is None
    from ctxlab.pipeline._span_text import _VALUE_ASCII, _WORD_FILE_ASCII

    assert "pipeline/_span_text.py" in regex_audit.DYNAMIC
    for twin in (_VALUE_ASCII, _WORD_FILE_ASCII):
        assert audit(Found("pipeline/_span_text.py", twin.pattern, twin.flags)) is None
    from ctxlab.retention._next_use import command_pattern

    assert "retention/_next_use.py" in regex_audit.DYNAMIC
    assert "retention/_before.py" in regex_audit.DYNAMIC
    for first, argument in (("grep", "foo"), ("python", "x.py"), ("cat", "-")):
        assert audit(Found("retention/_next_use.py", command_pattern(first, argument), 0)) is None
    from ctxlab.fork._run_folder import folder_pattern

    assert "fork/_run_folder.py" in regex_audit.DYNAMIC
    for folder in (Path("/tmp/run-1"), Path("relative/ws"), Path("/a b/c.d-e")):
        built = folder_pattern(folder)
        assert audit(Found("fork/_run_folder.py", built.pattern, built.flags)) is None


def test_a_models_pattern_is_matched_under_its_time_limit() -> None:
    # What the DYNAMIC entry of the model's patterns says, run: a pattern that backtracks
    # (2 to the 25th ways to split the line: 10-30 s without a limit) ends at its limit.
    from ctxlab.util._model_pattern import ModelPattern

    assert "util/_model_pattern.py" in regex_audit.DYNAMIC
    pattern = ModelPattern("(a|a)*$", 0.2)
    started = time.perf_counter()
    with pytest.raises(TimeoutError, match=r"took longer than 0.2 s: simplify it"):
        pattern.search("a" * 25 + "!")
    assert time.perf_counter() - started < 5  # 0.2 s of the processor; a busy machine
    # The budget is the whole search's: spent, the next line is refused at once.
    with pytest.raises(TimeoutError):
        pattern.search("ok")
    assert ModelPattern(r"def \w+", 1.0).search("    def main():")


def test_the_audit_finds_the_patterns_of_the_source() -> None:
    found, dynamic = found_patterns()
    where = {f.where.split(":")[0] for f in found}
    # The ones that were quadratic, among the others, and the tools a fork gives a branch.
    assert {
        "io/formats/aider/chat_history.py",
        "io/formats/mini_swe_agent/parse.py",
        "pipeline/_span.py",
        "retention/_users.py",
        "retention/_extract.py",
        "models/_demo.py",
        "io/formats/specstory/parse.py",
        "pipeline/_changes.py",
        "demo/_tools.py",
    } <= where
    assert len(found) >= 50
    assert all(d.split(":")[0] in regex_audit.DYNAMIC for d in dynamic)
    assert "util/_model_pattern.py" in {d.split(":")[0] for d in dynamic}


def test_the_audit_finds_patterns_under_any_name(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(
        "import re as rx\n"
        "import regex\n"
        "from re import search as look\n"
        "A = rx.compile(r'x+y', rx.IGNORECASE)\n"
        "B = look('(a|b)*c', 'text')\n"
        "C = regex.compile(r'q\\d+')\n"
        "D = regex.compile(given)\n",
        encoding="utf-8",
    )
    found, dynamic = found_patterns(tmp_path)
    assert [(f.where, f.pattern, f.flags, f.engine) for f in found] == [
        ("a.py:4", "x+y", 2, "re"),
        ("a.py:5", "(a|b)*c", 0, "re"),
        ("a.py:6", "q\\d+", 0, "regex"),
    ]
    assert dynamic == ["a.py:7"]


@pytest.mark.parametrize(
    ("pattern", "flags"),
    [
        (r"a[^b]*c", 0),  # from every "a" to the end
        (r"<tag>.*?</tag>", 16),  # re.DOTALL: every unclosed tag scans to the end
        (r"[\d.,]+x", 0),  # aider's kind: a run of digits from each of its digits
        # Missed before issue 51: a run ended by a character that makes the match fail.
        (OLD_NUMBER, 0),
        (OLD_VALUE, 0),
        (r"(?<![\w.])\d{2,}(?![\w.]*\w)", 0),
        (OLD_TITLE, 0),
        # Missed before: a second alternative (the first only was pumped).
        (r"k(?:w\b|ab[^!]*!)", 0),
        (r"q(?:w|e(?:r|ty[^!]*!))", 0),
    ],
)
def test_the_audit_catches_a_quadratic_pattern(pattern: str, flags: int) -> None:
    assert quadratic(Found("control", pattern, flags)) is not None


def test_a_failing_end_is_what_makes_the_number_fail() -> None:
    ends = failing_ends(Found("control", OLD_NUMBER, 0), "", "7")
    assert ends and all(end.isalnum() or end == "_" for end in ends)
    assert failing_ends(Found("control", r"\d+", 0), "", "7") == []  # nothing looks past it


@pytest.mark.parametrize("pattern", [r"(a|a)*$", r"(?:a|aa)+b", r"(\d|\d\d)+x"])
def test_the_audit_stops_an_exponential_pattern_early(pattern: str) -> None:
    started = time.perf_counter()
    found = quadratic(Found("control", pattern, 0))
    assert found is not None and found[1].startswith(("exponential", "slow"))
    assert time.perf_counter() - started < 60


@pytest.mark.parametrize(
    "pattern",
    [r"(a+)+$", r"(\w+\s?)+$", r"(?:\d+x?)*y", r"^(?:[a-z]+\.?)+@", r"(?:(?:ab)+c?)+$"],
)
def test_the_audit_refuses_nested_quantifiers_that_share_a_character(pattern: str) -> None:
    assert nested(Found("control", pattern, 0))
    assert audit(Found("control", pattern, 0)) is not None


@pytest.mark.parametrize(
    "pattern",
    [
        r"(?:\.[A-Za-z_]\w*)+",  # each turn starts with a dot its repeat never takes
        r"(?:_[a-z0-9]+)+(?!\w)",
        r"(?:[A-Z][a-z0-9]*)+",
        r"(?:[\w.-]+/)*[\w-]+\.py",  # each turn ends with "/"
        r"(a++)+$",  # the inner one possessive: it gives nothing back
        r"(?>a+)+$",
    ],
)
def test_nested_quantifiers_that_share_no_character_pass(pattern: str) -> None:
    assert nested(Found("control", pattern, 0)) == []


def test_a_linear_pattern_passes_the_audit() -> None:
    assert audit(Found("control", r"a[^ab]*+c", 0)) is None
    assert audit(Found("control", r"(?<![\d.,])[\d.,]++x", 0)) is None
    assert audit(Found("control", r"<(tag)>", 0)) is None
    # The number pattern as issue 51 rewrote it.
    assert audit(Found("control", r"(?<![\w.])(?:v?\d++(?:\.\d++)++|\d{2,}+)(?!\.*+\w)", 0)) is None
