"""The patterns rewritten to run in linear time find exactly what the patterns they replace
found: each old pattern is kept here as the definition, and compared with its replacement on
texts made of the pieces that matter to it (hypothesis) — short texts, where the old patterns
are fast — and on every corpus text where one applies."""

from __future__ import annotations

import os
import re

from hypothesis import example, given, settings
from hypothesis import strategies as st

from ctxlab.io.formats.aider import prompts as _aider_prompts
from ctxlab.io.formats.mini_swe_agent import parse as _mini_swe_agent
from ctxlab.models import _demo_reading
from ctxlab.pipeline import _span
from ctxlab.retention import _extract, _paths, _users

SETTINGS = settings(max_examples=int(os.environ.get("CTXLAB_EXAMPLES", 300)), deadline=None)

OLD_ACTION = re.compile(
    r"```(?:mswea_bash_command|bash)[ \t]*\n(.*?)\n?```|<mswea_bash_command>(.*?)</mswea_bash_command>",
    re.DOTALL,
)
OLD_TAGS = re.compile(
    r"<system-reminder>.*?</system-reminder>|<(command-\w+|local-command-\w+)>.*?</\1>", re.DOTALL
)
OLD_REMINDER = re.compile(r"<system-reminder>.*?</system-reminder>", re.DOTALL)
OLD_HARNESS_TAG = re.compile(
    r"<(command-name|command-message|command-args|local-command-stdout|local-command-stderr)>"
    r".*?</\1>",
    re.DOTALL,
)
OLD_TEST_TALLY = re.compile(
    r"=+ (.*\b(?:passed|failed|error|errors|skipped)\b.*?) =+$|^(FAILED \(.*\)|OK(?: \(.*\))?)$"
    r"|^(Ran \d+ tests? in .*)$|^(\d+ (?:passed|failed|errors?|skipped)\b[\w ,]* in [\d.]+s)$",
    re.MULTILINE,
)
OLD_FAILURE = re.compile(
    r"^(?:E +|INTERNALERROR> *)?\s*((?:[\w.]+(?:Error|Exception)\b(?::.*)?)|(?:FAILED|FAIL|ERROR):? \S.*|.*\b[Ee]rror: .*"
    r"|fatal: .*)$",
    re.MULTILINE,
)
OLD_ERROR_LINE = re.compile(
    r"^(?:E\s+)?\s*(?:[\w.]*(?:Error|Exception)\b(?::.*)?|(?:FAILED|FAIL|ERROR)\b.*|.*\b[Ee]rror: .*"
    r"|fatal: .*)$",
    re.MULTILINE,
)
OLD_COUNT = re.compile(
    r"(?P<number>[\d.,]+)\s*(?P<unit>[kKmM]?)\s+(?P<what>sent|received|cache write|cache hit)"
)
OLD_FILE = re.compile(r"[\w./-]+\.(?:py|md|html|txt|csv|log|cfg|toml)\b")


def pieces(*parts: str, size: int = 14) -> st.SearchStrategy[str]:
    return st.lists(st.sampled_from(parts), max_size=size).map("".join)


ACTION_TEXT = pieces(
    "```bash\n",
    "```mswea_bash_command \n",
    "```",
    "\n```",
    "<mswea_bash_command>",
    "</mswea_bash_command>",
    "\n",
    "ls -la",
    " ",
    "`",
    "``",
    "<",
    "```bash",
    "\t",
)


@SETTINGS
@given(ACTION_TEXT)
@example("```bash\nls\n```\n<mswea_bash_command>pwd</mswea_bash_command>")
@example("<mswea_bash_command>a```bash\nb```</mswea_bash_command>")
@example("```bash\n```")
def test_mini_swe_agent_actions_as_the_old_pattern(text: str) -> None:
    spans = _mini_swe_agent.actions_in(text)
    assert [c for _, _, c in spans] == [a or b for a, b in OLD_ACTION.findall(text)]
    assert [(s, e) for s, e, _ in spans] == [m.span() for m in OLD_ACTION.finditer(text)]


TAG_TEXT = pieces(
    "<system-reminder>",
    "</system-reminder>",
    "<command-name>",
    "</command-name>",
    "<command-x1>",
    "</command-x1>",
    "<local-command-stdout>",
    "</local-command-stdout>",
    "<command->",
    "</command-",
    "text",
    "\n",
    "<",
    ">",
    "/",
    size=12,
)


@SETTINGS
@given(TAG_TEXT)
@example("<command-a><command-b>x</command-a></command-b>")
def test_harness_tags_as_the_old_patterns(text: str) -> None:
    assert _span.TAGS.sub(" ", text) == OLD_TAGS.sub(" ", text)
    assert _users._REMINDER.sub(" ", text) == OLD_REMINDER.sub(" ", text)
    assert _users._HARNESS_TAG.sub(" ", text) == OLD_HARNESS_TAG.sub(" ", text)


OUTPUT_LINE = st.sampled_from(
    [
        "",
        "   ",
        "\t",
        "E",
        "E   ",
        "E   ValueError: bad",
        "E  Error: x",
        "KeyError: 'x'",
        "FAILED t.py::a - boom",
        "FAILED (failures=2)",
        "OK",
        "OK (skipped=1)",
        "Ran 3 tests in 0.1s",
        "3 passed in 0.12s",
        "1 failed, 2 passed, 1 warning in 1.5s",
        "2 passed in x",
        "INTERNALERROR> ValueError: bad",
        "INTERNALERROR>   Error: x",
        "Ran 3 tests in == 2 passed ==",
        "===== 2 failed in 0.3s =====",
        "== error ==",
        "= = passed =",
        "=== ===",
        "== x == 3 passed ==",
        "passed ==",
        "fatal: no",
        "an Error inside",
        "ERROR",
        "tail error: gone",
        "x.Exception: y",
    ]
)
OUTPUT = st.lists(OUTPUT_LINE, max_size=10).map("\n".join)


@SETTINGS
@given(OUTPUT)
def test_failure_and_tally_lines_as_the_old_patterns(text: str) -> None:
    assert _span._FAILURE.findall(text) == OLD_FAILURE.findall(text)
    assert _span._tallies(text) == [next(filter(None, t), "") for t in OLD_TEST_TALLY.findall(text)]

    def read(found: str) -> str:  # the grader's reading of a match (`_scan_outcomes`)
        return re.sub(r"^E\s+", "", _extract.collapse(found))

    assert [read(f) for f in _extract._ERROR_LINE.findall(text)] == [
        read(f) for f in OLD_ERROR_LINE.findall(text)
    ]


def _old_usage(line: str) -> object:
    match = _aider_prompts._TOKENS.match(line)
    if match is None:
        return None
    counts = {"sent": 0, "received": 0, "cache write": 0, "cache hit": 0}
    parts = list(OLD_COUNT.finditer(match.group("body")))
    if not parts:
        return None  # (the old reader billed zeros for a line with no count)
    for part in parts:
        number = float(part.group("number").replace(",", ""))
        scale = {"k": 1_000, "m": 1_000_000}.get(part.group("unit").lower(), 1)
        counts[part.group("what")] = round(number * scale)
    return counts


@SETTINGS
@given(
    pieces(
        "Tokens: ",
        "2.4",
        "1,200",
        "180",
        "k",
        "K",
        "m",
        " ",
        "  ",
        "sent",
        "received",
        "cache write",
        "cache hit",
        ", ",
        ".",
        size=12,
    )
)
@example("Tokens: 2.4k sent, 1.1k cache hit, 180 received.")
@example("Tokens: 12 k sent, 3 m received")
def test_aider_token_reports_as_the_old_pattern(line: str) -> None:
    try:
        old = _old_usage(line)
    except ValueError:
        old = "unreadable"  # "1.2.3 sent": the old reader raised; the new one reads no report
    new = _aider_prompts.usage_of(line)
    if old is None or old == "unreadable":
        assert new is None
        return
    assert isinstance(old, dict)
    sent = old["sent"]
    assert new is not None
    assert (new.output_tokens, new.cache_read_input_tokens) == (old["received"], old["cache hit"])
    assert new.cache_creation_input_tokens == old["cache write"]
    assert new.input_tokens == max(sent - old["cache write"] - old["cache hit"], 0)


@SETTINGS
@given(pieces("src/app.py", "-", "/", ".", "a", " ", ".py", ".pyx", ".md", "x", "é", ".txt."))
@example("please fix src/app.py.bak and notes.md")
def test_the_demo_models_file_name_as_the_old_pattern(prompt: str) -> None:
    old = OLD_FILE.search(prompt)
    assert _demo_reading.file_named(prompt) == (old.group(0) if old else None)


OLD_EDITS_IN_PLACE = re.compile(r"\bsed\s+(?:-\w+\s+)*-i|\bperl\s+-p?i|\bpatch\b|\bgit\s+apply\b")


@SETTINGS
@given(
    pieces(
        "sed",
        " ",
        "  ",
        "-i",
        "-n",
        "-e",
        "-sed",
        "-i.bak",
        "x",
        "perl",
        "-pi",
        "patch",
        "git",
        "apply",
        "\t",
        "-",
        ";",
        size=12,
    )
)
@example("sed -n -e s/a/b/ -i f")
@example("sed -a -sed -i")
@example("xsed -i")
def test_in_place_edits_as_the_old_pattern(command: str) -> None:
    assert _paths._edits_in_place(command) == bool(OLD_EDITS_IN_PLACE.search(command))
