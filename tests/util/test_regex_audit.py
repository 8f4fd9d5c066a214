"""Every regular expression in ``ctxlab/`` runs in time linear in its text (`tests.regex_audit`:
each pattern found in the source, pumped with texts made of its own pieces, timed at n and 4n);
and the audit itself catches quadratic patterns (its controls)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests import regex_audit
from tests.regex_audit import Found, found_patterns, quadratic

ROOT = Path(__file__).resolve().parents[2]


def test_every_pattern_in_ctxlab_is_linear() -> None:
    # In a process of its own: a pattern that backtracks without end is stopped by the timeout,
    # and the last pattern it names is the one.
    try:
        done = subprocess.run(
            [sys.executable, "-m", "tests.regex_audit"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=600,
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
    assert quadratic(Found("fork/_signature.py", _USAGE.pattern, _USAGE.flags)) is None


def test_the_audit_finds_the_patterns_of_the_source() -> None:
    found, dynamic = found_patterns()
    where = {f.where.split(":")[0] for f in found}
    # The ones that were quadratic, among the others.
    assert {
        "io/_aider.py",
        "io/_mini_swe_agent.py",
        "pipeline/_span.py",
        "retention/_users.py",
        "retention/_extract.py",
        "models/_demo.py",
        "io/_specstory.py",
        "pipeline/_changes.py",
    } <= where
    assert len(found) >= 50
    assert all(d.split(":")[0] in regex_audit.DYNAMIC for d in dynamic)


@pytest.mark.parametrize(
    ("pattern", "flags"),
    [
        (r"a[^b]*c", 0),  # from every "a" to the end
        (r"<tag>.*?</tag>", 16),  # re.DOTALL: every unclosed tag scans to the end
        (r"[\d.,]+x", 0),  # aider's kind: a run of digits from each of its digits
    ],
)
def test_the_audit_catches_a_quadratic_pattern(pattern: str, flags: int) -> None:
    assert quadratic(Found("control", pattern, flags)) is not None


def test_a_linear_pattern_passes_the_audit() -> None:
    assert quadratic(Found("control", r"a[^ab]*+c", 0)) is None
    assert quadratic(Found("control", r"(?<![\d.,])[\d.,]++x", 0)) is None
    assert quadratic(Found("control", r"<(tag)>", 0)) is None
