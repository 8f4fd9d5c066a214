"""Tool results a harness writes back as text (Cline, Roo Code: ``[tool for 'x'] Result:``)
are the results of the calls they answer, not orphans beside invented errors."""

from __future__ import annotations

import json

from ctxlab.io import load
from ctxlab.messages import find_tool_pair_problems
from tests.io.contracts.anthropic import TEXT_RESULTS

# The shape of Cline's api_conversation_history.json (cline/cline src/core/task: a
# "[name for 'path'] Result:" text block, then the output, then the environment details).
HISTORY = json.loads(TEXT_RESULTS.read_text())
"""Its census the contract checks (tests/io/contracts/anthropic.py)."""


def test_text_encoded_results_are_paired_with_their_calls() -> None:
    transcript = load(HISTORY, format="anthropic")
    results = transcript.messages[2].tool_results  # type: ignore[union-attr]
    assert [(r.tool_use_id, r.text) for r in results] == [
        ("toolu_1", "# Projcet\nA tool."),
        ("toolu_2", "README.md\nsrc/"),
    ]
    assert not any(r.is_error for r in results)
    # The environment details stay the user's text, after the results.
    assert transcript.messages[2].content[-1].text.startswith("<environment_details>")  # type: ignore[union-attr]
    assert transcript.meta["text_results_paired"] == 2
    assert "repairs" not in transcript.meta and find_tool_pair_problems(transcript.messages) == []


def test_a_user_message_with_real_results_is_left_as_it_is() -> None:
    history = [
        *HISTORY[:2],
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "toolu_1",
                    "content": "[read_file] Result: x",
                },
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "y"},
            ],
        },
    ]
    transcript = load(history, format="anthropic")
    results = transcript.messages[2].tool_results  # type: ignore[union-attr]
    assert [r.text for r in results] == ["[read_file] Result: x", "y"]
    assert "text_results_paired" not in transcript.meta
