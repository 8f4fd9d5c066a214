"""Behaviour unchanged by the format registry: every file and folder of tests/fixtures (and of
the corpus's raw files, when ``CTXLAB_CORPUS`` is set) loads exactly as it did before — the
same transcript, field for field, or the same error — by the digests pinned in
``tests/fixtures/load_digests.json``, taken with the code of main before the registry
(`tests.io.digests`). The controls show the digest sees a change of one character of a file and
of one message of a transcript."""

from __future__ import annotations

import json
import shutil
from dataclasses import replace
from pathlib import Path

from ctxlab import load
from tests.io.digests import digest, digests, raw_corpus, shown

FIXTURES = Path(__file__).parents[1] / "fixtures"
PINNED = json.loads((FIXTURES / "load_digests.json").read_text())


def _changed(found: dict[str, str], pinned: dict[str, str]) -> list[str]:
    return [path for path in pinned if path in found and found[path] != pinned[path]]


def test_every_fixture_loads_as_it_did_before_the_registry() -> None:
    found = digests(FIXTURES)
    assert set(PINNED["fixtures"]) <= set(found), "a fixture went missing"
    assert _changed(found, PINNED["fixtures"]) == []


def test_every_raw_corpus_file_loads_as_it_did_before_the_registry() -> None:
    raw = raw_corpus()
    found = digests(raw)
    assert len(set(found) & set(PINNED["corpus"])) >= 60  # the corpus the digests were taken of
    assert _changed(found, PINNED["corpus"]) == []


def test_the_digest_sees_one_character_of_a_file(tmp_path: Path) -> None:
    source = (
        FIXTURES
        / "codex"
        / "rollout-2025-09-24T20-12-23-01997ea4-a70d-7da3-8c20-c736db82a7c5.jsonl"
    )
    copy = tmp_path / source.name
    shutil.copy(source, copy)
    before = digest(copy, tmp_path)
    text = copy.read_text()
    at = text.index('"text":"') + len('"text":"')
    copy.write_text(text[:at] + "X" + text[at + 1 :])
    assert digest(copy, tmp_path) != before


def test_the_digest_sees_one_message_and_one_note_of_a_transcript() -> None:
    transcript = load(
        FIXTURES
        / "codex"
        / "rollout-2025-09-24T20-12-23-01997ea4-a70d-7da3-8c20-c736db82a7c5.jsonl"
    )
    assert len(transcript.messages) > 2  # a real load, not an error's digest
    fewer = replace(transcript, messages=transcript.messages[:-1])
    noted = replace(transcript, meta={**transcript.meta, "note": 1})
    assert len({shown(transcript), shown(fewer), shown(noted)}) == 3
