"""The stop reasons `RecordedModel` gives: each replayed reply's is the one its recording's
reply had (``tool_use`` for a call, ``end_turn`` for a text reply), and the parting reply —
the note a run ends on when the branch asks past the recording or its contexts part — is a
reply that ends the turn, so the agent stops there and takes the note as its reply."""

from __future__ import annotations

from ctxlab.analysis import recorded_requests
from ctxlab.fork import RecordedModel
from ctxlab.io._transcript import Transcript
from ctxlab.messages import AssistantMessage, TextBlock, ToolUseBlock, UserMessage
from ctxlab.messages._request import ModelRequest


def _recording() -> Transcript:
    use = ToolUseBlock(id="toolu_1", name="read", input={"path": "a.txt"})
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "alpha"}
    messages = (
        UserMessage(content="Read a.txt."),
        AssistantMessage(content=(use,)),
        UserMessage(content=[result]),
        AssistantMessage(content="It says alpha."),
    )
    return Transcript(name="stops", meta={}, system="", messages=messages)


async def test_replayed_and_parting_replies_carry_their_own_stop_reasons() -> None:
    recording = _recording()
    model = RecordedModel(recording)
    stops = []
    for recorded in recorded_requests(recording):
        response = await model.request(ModelRequest("", tuple(recorded.messages), ()))
        stops.append(response.stop_reason)
    assert stops == ["tool_use", "end_turn"]
    # Asked past the recording's last reply (a text reply): the parting reply ends the turn.
    past = ModelRequest("", (*recording.messages, UserMessage(content="And then?")), ())
    parting = await model.request(past)
    assert model.parted_at == 2
    assert parting.stop_reason == "end_turn"
    assert parting.message.content == (
        TextBlock(text="[unknown after request 2 — the recording ends here]"),
    )
    assert parting.usage is None and parting.model == "recorded"
