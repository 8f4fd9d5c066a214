"""A transcript file's errors name the file and the line."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st


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


def test_a_path_too_long_for_the_system_is_a_format_error_that_says_so() -> None:
    from ctxlab import load, sessions
    from ctxlab.exceptions import MessageFormatError, UsageError

    long = "x" * 5000
    with pytest.raises(MessageFormatError) as caught:
        load(long)
    # The message names the problem and shows the start of the path, not all 5,000 characters.
    assert str(caught.value) == (
        f"cannot read {'x' * 256}… (5,000 characters): a name of 5,000 characters is too long "
        "for a file path"
    )
    # A name over 255 characters no file system holds either: shown by its start too.
    with pytest.raises(MessageFormatError, match=r"…  ?\(300 characters\): a name of 300"):
        load("y" * 300)
    for format in ("cline", "opencode", "aider", "ctxlab", "openhands"):
        with pytest.raises(MessageFormatError, match="5,000 characters is too long"):
            load(long, format=format)  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=r"is not a folder \(a name of 5,000 characters"):
        sessions(long)
    # A session's text passed where its path goes: said, with what to pass instead.
    text = json.dumps([{"role": "user", "content": "hi " * 2000}])
    with pytest.raises(MessageFormatError, match=r"looks like a session's text.*json\.loads"):
        load(text)
    with pytest.raises(MessageFormatError, match="cannot hold a NUL character"):
        load("a\0b.jsonl")


@settings(max_examples=60, deadline=None, database=None)
@given(st.text(min_size=1, max_size=12), st.integers(1, 800))
def test_any_string_as_a_path_loads_or_raises_a_ctxlab_error(part: str, times: int) -> None:
    from ctxlab import load
    from ctxlab.exceptions import CtxlabError

    source = part * times
    with tempfile.TemporaryDirectory() as folder:
        here = os.getcwd()
        os.chdir(folder)  # an empty folder: a drawn name is no file of the checkout
        try:
            load(source)
        except CtxlabError as exc:
            assert str(exc).strip()
            if len(source) > 4096:  # longer than any path: named by its start, not whole
                assert source not in str(exc) and len(str(exc)) < 1000
        finally:
            os.chdir(here)


def test_a_long_real_path_is_named_whole_and_once(tmp_path: Path) -> None:
    from ctxlab import load
    from ctxlab.exceptions import MessageFormatError

    folder = tmp_path / ("project-" * 12)  # a path of some 170 characters, as real ones run
    folder.mkdir()
    path = folder / "session.jsonl"
    path.write_text('{"role": "user", "content": [{"type": "nonsense"}]}\n')
    with pytest.raises(MessageFormatError) as caught:
        load(path)
    assert str(caught.value).count(str(path)) == 1 and "characters)" not in str(caught.value)
    deep = tmp_path / ("p" * 100) / ("q" * 100) / ("r" * 100)  # over 256: still named whole
    deep.mkdir(parents=True)
    (deep / path.name).write_text(path.read_text())
    with pytest.raises(MessageFormatError) as caught:
        load(deep / path.name)
    assert str(caught.value).count(str(deep / path.name)) == 1
    assert "characters)" not in str(caught.value)


@pytest.mark.parametrize("schema", [5, "object", ["a"]])
def test_a_tool_schema_that_is_no_object_is_named(tmp_path: Path, schema: object) -> None:
    from ctxlab import load
    from ctxlab.exceptions import MessageFormatError

    document = {
        "messages": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "yo"}],
        "tools": [{"type": "function", "function": {"name": "bash", "parameters": schema}}],
    }
    path = tmp_path / "session.json"
    path.write_text(json.dumps(document))
    kind = type(schema).__name__
    with pytest.raises(
        MessageFormatError, match=rf"tool 'bash': its input schema is {kind}, not an object"
    ):
        load(path)
    # Control: an object schema loads, kept as it was written.
    document["tools"][0]["function"]["parameters"] = {"type": "object", "properties": {}}  # type: ignore[index]
    path.write_text(json.dumps(document))
    (tool,) = load(path).tools
    assert (tool.name, tool.input_schema) == ("bash", {"type": "object", "properties": {}})
