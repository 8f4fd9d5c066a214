"""Valid values for the parameters the harness does not make bad: objects of every type a
small session's real flows produce — loaded from a file, prepared, replayed, what-if'd,
calibrated, run by an agent, forked — harvested by type (`Pool.valid`), so that a bad value
meets the entry point with every other argument sound and reaches past the first check.

The instances of classes an entry point changes (a what-if, a log, an agent) are made fresh for
each call (`FRESH`); the others are shared, as read-only data."""

from __future__ import annotations

import dataclasses
import shutil
from collections.abc import Callable
from typing import Any

from ctxlab import (
    Agent,
    AnthropicModel,
    ApproximateCounter,
    AssistantMessage,
    ContextBlock,
    ContextConfig,
    DemoModel,
    FunctionModel,
    HintBlock,
    ImageBlock,
    ObservedSession,
    ReplaySession,
    ScriptedModel,
    SessionLog,
    TextBlock,
    TextSource,
    Transcript,
    WhatIf,
    calibrate,
    load,
    prepare,
    recorded_requests,
    replay,
)
from ctxlab.analysis._sync import run_sync
from ctxlab.fork import fork, run_forward
from ctxlab.messages import (
    Base64ImageSource,
    DocumentBlock,
    ProviderBlock,
    ProviderUsage,
    RedactedThinkingBlock,
    ThinkingBlock,
    UrlImageSource,
)
from ctxlab.models import MemorylessModel, ModelResponse, OpenAIModel, ResponseCache
from ctxlab.tokens import CountStore, TokenCache
from tests.fuzz.bad_values import Places
from tests.fuzz.signatures import MISSING, Shape
from tests.helpers import session

_SESSION = session(6, output_chars=2_500)
"""Long enough that a replay at 4,000 tokens truncates and compacts (records, summaries)."""


def _transcript() -> Transcript:
    # A session of tool turns with a bill on each reply (calibration, costs), then a last word.
    messages = (*_SESSION, AssistantMessage(content="Done: f2.py was the one."))
    replies = [i for i, m in enumerate(messages) if isinstance(m, AssistantMessage)]
    usage = {
        index: ProviderUsage(input_tokens=900 + 250 * n, output_tokens=40)
        for n, index in enumerate(replies)
    }
    return Transcript("fuzzed", {"model": "claude-sonnet-4-5"}, "Be brief.", messages, usage=usage)


def _agent(places: Places) -> Agent:
    reply = AssistantMessage(content=(TextBlock(text="ok"),))
    agent = Agent(
        model=ScriptedModel([reply] * 4),
        workspace=places.folder / "workspace",
        tools=[_lookup],
        session_log=places.folder / "agent-log.sqlite",
    )
    agent.context_source("notes", TextSource("Release on Friday.", id="notes"))
    agent.instruction("style", "Answer in one line.")
    return agent


def _lookup(term: str) -> str:
    """Look a term up (a tool for the pool's agent: its schema, its calls)."""
    return term


def _whatif(places: Places) -> WhatIf:
    what = WhatIf(
        _transcript(),
        {"a": ContextConfig(), "b": ContextConfig(trigger_ratio=0.5)},
        context_window=8_000,
        counter=ApproximateCounter(),
    )
    run_sync(what.run())
    return what


FRESH: dict[type, Callable[[Places], Any]] = {
    WhatIf: _whatif,
    Agent: _agent,
    SessionLog: lambda p: SessionLog(p.folder / "fresh.sqlite"),
    ResponseCache: lambda p: ResponseCache(p.folder / "responses"),
    CountStore: lambda p: CountStore(p.folder / "fresh-counts.sqlite"),
    TokenCache: lambda p: TokenCache(ApproximateCounter()),
    ObservedSession: lambda p: ObservedSession(context_window=8_000, counter=ApproximateCounter()),
}
"""Classes whose instances an entry point changes: one made for each call."""


class Pool:
    """Objects by type, harvested from a session's real flows (`build`)."""

    def __init__(self, places: Places) -> None:
        self.places = places
        self.by_type: dict[type, list[Any]] = {}
        self.sequences: list[tuple[Any, ...]] = []
        self.session_file = places.folder / "session.jsonl"
        self._seen: set[int] = set()

    def build(self) -> Pool:
        """Run the flows and harvest what they made."""
        transcript = _transcript()
        transcript.save(self.session_file)
        loaded = load(self.session_file)
        counter = ApproximateCounter()
        run_sync(self._flows(loaded, counter))
        what = _whatif(self.places)
        self.harvest(
            transcript,
            loaded,
            counter,
            what,
            what.table(),
            calibrate(transcript, counter),
            recorded_requests(transcript),
            ContextConfig(),
            MemorylessModel(),
        )
        return self

    async def _flows(self, transcript: Transcript, counter: ApproximateCounter) -> None:
        from ctxlab import WorkingState

        state = WorkingState(conversation=transcript.messages)
        prepared = await prepare(state, context_window=8_000, counter=counter)
        steps = [
            s async for s in replay(transcript.messages, context_window=4_000, counter=counter)
        ]
        agent = _agent(self.places)
        await agent("Go on.")
        branch = await fork(
            transcript, at=1, model=MemorylessModel(), root=self.places.folder / "forks"
        )
        outcomes = await run_forward(branch, prompt="Go on.", max_steps=2)
        self.harvest(prepared, steps, agent, branch, outcomes, agent.log, *_made(transcript))
        self.harvest(*await _labs(transcript, outcomes))

    def harvest(self, *roots: Any) -> None:
        """Record every ctxlab object reachable from ``roots`` (a few levels deep) by type."""
        for root in roots:
            self._walk(root, 0)

    def _walk(self, value: Any, depth: int) -> None:
        if depth > 5 or id(value) in self._seen or isinstance(value, str | bytes | int | float):
            return
        self._seen.add(id(value))
        kind = type(value)
        if kind.__module__.startswith(("ctxlab", "pandas")):
            found = self.by_type.setdefault(kind, [])
            if len(found) < 3:
                found.append(value)
        if isinstance(value, tuple | list) and value:
            self.sequences.append(tuple(value))
            for item in list(value)[:20]:
                self._walk(item, depth + 1)
        elif isinstance(value, dict):
            for item in list(value.values())[:20]:
                self._walk(item, depth + 1)
        elif kind.__module__.startswith("ctxlab"):
            for item in _fields(value):
                self._walk(item, depth + 1)

    def instance(self, cls: type) -> Any:
        """An instance of ``cls`` (fresh for the classes of `FRESH`), or `MISSING`."""
        for kind, make in FRESH.items():
            if _is(kind, cls):
                return make(self.places)
        return next(self._instances(cls), MISSING)

    def _instances(self, cls: type) -> Any:
        for kind, found in self.by_type.items():
            if _is(kind, cls):
                yield from found
            elif getattr(cls, "_is_protocol", False):  # (issubclass refuses some protocols)
                yield from (v for v in found if _instance(v, cls))

    def has(self, cls: type) -> bool:
        """Whether an instance of ``cls`` can be had (for its methods to be fuzzed)."""
        return cls in FRESH or next(self._instances(cls), MISSING) is not MISSING

    def valid(self, shape: Shape, name: str) -> Any:
        """A value a parameter named ``name`` of ``shape`` takes, or `MISSING`."""
        kinds = shape.kinds
        for cls in shape.classes:
            value = self.instance(cls)
            if value is not MISSING:
                return value
        if "seq" in kinds:
            return self._sequence(shape.items[0] if shape.items else None, name)
        if "map" in kinds:
            inner = self.valid(shape.items[0], name) if shape.items else MISSING
            return {} if inner is MISSING else {"a": inner}
        if "path" in kinds:
            return self._path(name)
        for kind, make in _PLAIN_VALID:
            if kind in kinds:
                return make(shape, name)
        return MISSING

    def _sequence(self, item: Shape | None, name: str) -> Any:
        if item is None or "any" in item.kinds:
            return ()
        if item.classes:
            for found in self.sequences:
                if all(any(_is(type(v), c) for c in item.classes) for v in found):
                    return found
            value = self.valid(item, name)
            return MISSING if value is MISSING else (value,)
        value = self.valid(item, name)
        return MISSING if value is MISSING else (value,)

    def _path(self, name: str) -> Any:
        # A folder for what names one, else a copy of the session file (read, or written over).
        if any(w in name for w in ("folder", "root", "dir", "workspace")):
            made = self.places.folder / f"{name}-folder"
            made.mkdir(exist_ok=True)
            return made
        copy = self.places.folder / f"{name}.jsonl"
        shutil.copyfile(self.session_file, copy)
        return copy


def _instance(value: Any, cls: type) -> bool:
    try:
        return isinstance(value, cls)
    except TypeError:  # a protocol that is not runtime-checkable
        return False


def _made(transcript: Transcript) -> list[Any]:
    # What no flow above makes: the other models (the provider ones made offline, with a key
    # that is never used: their requests are not called, `NEEDS`), a replayed session, blocks
    # of every kind, a source.
    image = ImageBlock(source=Base64ImageSource(media_type="image/png", data="iVBORw0KGgo="))
    link = ImageBlock(source=UrlImageSource(url="https://example.com/a.png"))
    return [
        DemoModel(),
        FunctionModel(lambda request, info: "ok"),
        AnthropicModel(api_key="offline-fuzz"),
        OpenAIModel(api_key="offline-fuzz"),
        ModelResponse(AssistantMessage(content="A cached reply."), usage=ProviderUsage(10, 2)),
        ReplaySession(transcript, context_window=8_000, counter=ApproximateCounter()),
        [image, link],
        [ThinkingBlock(thinking="Hmm.", signature="sig"), RedactedThinkingBlock(data="abc")],
        [HintBlock(hint="A hint."), ProviderBlock(data={"type": "server_tool_use"})],
        DocumentBlock(source={"type": "text", "media_type": "text/plain", "data": "notes"}),
        ContextBlock("notes/1", "Release on Friday."),
    ]


async def _labs(transcript: Transcript, outcomes: Any) -> list[Any]:
    # The notebook's views, when the widgets extra is installed.
    try:
        from ctxlab.widgets import ForkLab, Lab, WhatIfLab
    except ImportError:
        return []
    lab = await Lab.open(transcript, context_window=8_000, counter=ApproximateCounter())
    what = await WhatIfLab.open(
        transcript, {"a": ContextConfig()}, context_window=8_000, counter=ApproximateCounter()
    )
    return [lab, what, ForkLab(outcomes)]


def _is(kind: type, cls: type) -> bool:
    try:
        return issubclass(kind, cls)
    except TypeError:  # a protocol that is not runtime-checkable, a generic alias
        return False


def _fields(value: Any) -> list[Any]:
    if dataclasses.is_dataclass(value):
        return [getattr(value, f.name, None) for f in dataclasses.fields(value)]
    found = getattr(value, "__dict__", None)
    return list(found.values()) if isinstance(found, dict) else []


def _number(shape: Shape, name: str) -> Any:
    if any(w in name for w in ("window", "limit", "tokens", "budget")):
        return 8_000
    if "int" in shape.kinds:
        return 1
    return 0.5


def _text(shape: Shape, name: str) -> Any:
    return "Hello." if name in ("prompt", "text", "summary", "content") else "x"


_PLAIN_VALID: tuple[tuple[str, Callable[[Shape, str], Any]], ...] = (
    ("literal", lambda shape, name: shape.literals[0]),
    ("int", _number),
    ("float", _number),
    ("str", _text),
    ("bool", lambda shape, name: False),
    ("bytes", lambda shape, name: b"x"),
    ("callable", lambda shape, name: len),  # (a `Callable[[str], int]` is the usual one)
    ("none", lambda shape, name: None),
    ("any", lambda shape, name: "x"),
)
