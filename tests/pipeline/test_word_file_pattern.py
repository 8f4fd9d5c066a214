"""The files a command names (`ctxlab.pipeline._span_text.files_named`: the pattern with its
guard that sets aside a run without a dot, or its ASCII twin on an ASCII command) are those the
pattern without the guard finds: on every text of the corpus, on made-up texts, and on long
runs (read in linear time)."""

from __future__ import annotations

import re
from collections.abc import Callable

from hypothesis import given
from hypothesis import strategies as st

from ctxlab.pipeline._span_text import files_named
from tests.conftest import requires_corpus
from tests.helpers import corpus_texts
from tests.hostile import assert_linear
from tests.strategies import SETTINGS

# The definition: the pattern before i67-summ.
WORD_FILE = re.compile(
    r"(?<![\w/.-])(?:\.{0,2}/)?(?:[\w.-]+/)*[\w-]+\.(?:py|pyi|js|ts|tsx|md|rst|txt|json|toml|"
    r"ya?ml|cfg|ini|rs|go|java|c|h|cpp|sh|html|css|ex|exs|rb)\b"
)
PIECES = st.sampled_from([*"a_./-1 é\n:", "src/", "..", "x.py", ".txt", "pyi", "é.py", "c"])


@requires_corpus
def test_the_same_files_in_every_corpus_text() -> None:
    texts = corpus_texts()
    assert len(texts) > 5_000
    assert [files_named(t) for t in texts] == [WORD_FILE.findall(t) for t in texts]


@SETTINGS
@given(text=st.lists(PIECES, max_size=20).map("".join))
def test_the_same_files_in_made_up_text(text: str) -> None:
    assert files_named(text) == WORD_FILE.findall(text)


def test_the_files_a_command_names() -> None:
    command = "cd ../repo && python tests/test_x.py > out.txt; cat ./a/b.cfg c/d e.py.bak é/f.rs"
    found = ["tests/test_x.py", "out.txt", "./a/b.cfg", "e.py", "é/f.rs"]
    assert files_named(command) == WORD_FILE.findall(command) == found
    assert files_named(command.replace("é", "e")) == [*found[:-1], "e/f.rs"]


def test_a_long_run_without_a_dot_is_read_in_linear_time() -> None:
    def make(n: int) -> Callable[[], object]:
        text = "see a.py and " + "ab/" * (n // 3) + " then b.py"
        return lambda: files_named(text)

    assert_linear(make, 20_000, 2.0)
