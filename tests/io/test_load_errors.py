"""A transcript file's errors name the file and the line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def test_load_transcript_names_file_and_line_for_bad_bytes_and_a_bad_system(
    tmp_path: Path,
) -> None:
    from ctxlab import load_transcript
    from ctxlab.exceptions import MessageFormatError

    meta = json.dumps({"type": "meta", "system": "s"})
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes(meta.encode() + b'\n{"role": "user", "content": "caf\xe9"}\n')
    with pytest.raises(MessageFormatError, match=r"latin1.jsonl line 2: not UTF-8"):
        load_transcript(bad)
    listed = tmp_path / "listed.jsonl"
    listed.write_text(json.dumps({"type": "meta", "system": ["a", 1]}) + "\n")
    with pytest.raises(MessageFormatError, match=r"listed.jsonl line 1: meta.system"):
        load_transcript(listed)
    blocks = tmp_path / "blocks.jsonl"
    blocks.write_text(
        json.dumps(
            {
                "type": "meta",
                "system": [{"type": "text", "text": "A"}, {"type": "text", "text": "B"}],
            }
        )
        + "\n"
        + json.dumps({"role": "user", "content": "hi"})
        + "\n\n"
        + json.dumps({"role": "user", "content": [{"type": "image"}]})  # no source
        + "\n"
    )
    with pytest.raises(MessageFormatError, match=r"blocks.jsonl line 4: "):
        load_transcript(blocks)
    blocks.write_text(blocks.read_text().splitlines()[0] + "\n")
    assert load_transcript(blocks).system == "A\n\nB"


def test_a_wrong_guess_is_refused_with_the_formats_it_could_be() -> None:
    from ctxlab import load
    from ctxlab.exceptions import MessageFormatError

    # Role fields alone made it look like a chat; nothing in it reads as one.
    unknown = [
        {"role": "user", "content": [{"type": "input_audio", "data": "UklGRg=="}]},
        {"role": "assistant", "content": [{"type": "audio_reply"}]},
    ]
    with pytest.raises(MessageFormatError, match=r"no block of it reads as openai") as info:
        load(unknown)
    assert "guessed from its 'role' fields" in str(info.value)
    assert "openai_responses, langchain, pydantic_ai, gemini" in str(info.value)
    # A malformed message of a guessed format says it was a guess.
    with pytest.raises(MessageFormatError, match=r"read as anthropic, guessed"):
        load([{"role": "user", "message": "hi"}, {"role": "assistant", "message": "yo"}])
    # Told the format, the error is the format's alone; a real chat loads.
    with pytest.raises(MessageFormatError) as told:
        load([{"role": "user", "message": "hi"}], format="anthropic")
    assert "guessed" not in str(told.value)
    assert (
        len(
            load(
                [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}]
            ).messages
        )
        == 2
    )
