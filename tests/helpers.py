"""Builders shared by the tests: conversations, and one preparation of them."""

from __future__ import annotations

import threading
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from functools import cache
from typing import Any

from ctxlab import (
    ApproximateCounter,
    AssistantMessage,
    ContextConfig,
    Preparation,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    Transcript,
    UserMessage,
    WhatIf,
    WorkingState,
    prepare,
    replay,
)
from ctxlab.agent import Agent, ContextBuildEvent
from ctxlab.analysis import ReplayStep
from ctxlab.manifest import ContextManifest, ManifestItem, Thresholds
from ctxlab.messages import Summary
from ctxlab.messages._request import ModelRequest
from ctxlab.pipeline import SummaryRequest, extractive_summarizer
from ctxlab.tokens import TokenCache, TokenCounter


def summary_request(
    span: Sequence[UserMessage | AssistantMessage],
    previous: Summary | None = None,
    *,
    budget: int | None = None,
    **options: Any,
) -> SummaryRequest:
    """A request to summarize ``span`` (after ``previous``) under the default schema with no
    prompt, in ``budget`` tokens counted approximately; ``options`` go to `SummaryRequest`."""
    count = TokenCache(ApproximateCounter()).text
    schema = ContextConfig().summary_schema
    return SummaryRequest(
        tuple(span), previous, schema, "", budget_tokens=budget, count=count, **options
    )


async def extractive_fields(
    span: Sequence[UserMessage | AssistantMessage],
    previous: Summary | None = None,
    *,
    budget: int | None = None,
    **options: Any,
) -> dict[str, str]:
    """The fields of ctxlab's extractive summary of the `summary_request` of the same."""
    return await extractive_summarizer(summary_request(span, previous, budget=budget, **options))


async def ctxlab_what_if(transcript: Transcript, context_window: int, **options: Any) -> WhatIf:
    """The what-if of ``transcript`` under ctxlab's preset alone (named ``ctxlab``), counted
    approximately, already run; ``options`` go to `WhatIf`."""
    what = WhatIf(
        transcript,
        {"ctxlab": ContextConfig.preset("ctxlab")},
        context_window=context_window,
        counter=ApproximateCounter(),
        **options,
    )
    await what.run()
    return what


Message = UserMessage | AssistantMessage
Conversation = list[Message]


SONNET_META = {"models": ["claude-sonnet-4-6"]}
"""A recording's meta naming Claude Sonnet 4.6: its costs are priced as that model's."""


def bash_loop(
    name: str,
    task: str,
    calls: Iterable[tuple[str, str]],
    done: str,
    *,
    system: str,
    meta: Mapping[str, Any] = SONNET_META,
) -> Transcript:
    """A recorded tool loop: the user's ``task``, then for each ``(command, output)`` of
    ``calls`` a ``bash`` call (ids ``c0``, ``c1``, …) and its result, then the reply ``done``."""
    messages: Conversation = [UserMessage(content=task)]
    for n, (command, output) in enumerate(calls):
        messages += exchange(f"c{n}", "bash", output, command=command)
    messages.append(AssistantMessage(content=done))
    return Transcript(name, dict(meta), system, tuple(messages))


def tool_call(
    call_id: str,
    name: str = "bash",
    *,
    saying: str | None = None,
    thinking: str | None = None,
    **input: Any,
) -> AssistantMessage:
    """An assistant's one tool call ``name(**input)``, after its ``thinking`` (signed
    ``s<call_id>``) and the text ``saying``, each if given."""
    thought = (ThinkingBlock(thinking=thinking, signature=f"s{call_id}"),) if thinking else ()
    said = (TextBlock(text=saying),) if saying is not None else ()
    use = ToolUseBlock(id=call_id, name=name, input=input)
    return AssistantMessage(content=(*thought, *said, use))


def tool_result(call_id: str, output: str) -> UserMessage:
    """The user message carrying the result ``output`` of call ``call_id``."""
    return UserMessage(content=(ToolResultBlock(tool_use_id=call_id, content=output),))


def exchange(
    call_id: str,
    name: str,
    output: str,
    *,
    saying: str | None = None,
    thinking: str | None = None,
    **input: Any,
) -> Conversation:
    """A tool call ``name(**input)`` (after its ``thinking`` and the text ``saying``, as
    `tool_call` puts them) and the user message carrying its result ``output``."""
    call = tool_call(call_id, name, saying=saying, thinking=thinking, **input)
    return [call, tool_result(call_id, output)]


def tool_turn(call_id: str, output: str, *, name: str = "bash", arg: str = "ls") -> Conversation:
    """An assistant tool call (its argument ``cmd``) and the user message carrying its result."""
    return exchange(call_id, name, output, cmd=arg)


def edit_turn(
    call_id: str, path: str, old: str, new: str, *, saying: str | None = None
) -> Conversation:
    """An assistant's ``edit`` of ``path`` (old → new, Claude Code's shape), after the text
    ``saying`` if given, and its result."""
    edit = {"file_path": path, "old_string": old, "new_string": new}
    return exchange(call_id, "edit", "edited", saying=saying, **edit)


def session(turns: int, output_chars: int = 400, task: str = "Fix src/app.py") -> Conversation:
    """A user request followed by ``turns`` tool exchanges."""
    messages: Conversation = [UserMessage(content=task)]
    for i in range(turns):
        messages += tool_turn(f"call_{i}", f"line {i}\n" + "x" * output_chars, arg=f"cat f{i}.py")
    return messages


async def prepared(
    messages: Sequence[UserMessage | AssistantMessage],
    *,
    context_window: int,
    config: ContextConfig | None = None,
    **options: Any,
) -> Preparation:
    """``messages`` prepared once from an empty working state, counted approximately (the
    pipeline tests' usual call; ``options`` go to `prepare`)."""
    return await prepare(
        WorkingState(conversation=tuple(messages)),
        context_window=context_window,
        counter=ApproximateCounter(),
        config=config,
        **options,
    )


def lines_of(**fields: int) -> Thresholds:
    """The tests' standard lines, for a 10,000-token window: the usage notice above 6,000, a
    compaction above 8,000 keeping a 1,000-token tail, an input limit of 9,000 (800 kept for
    the answer, 200 as a margin); ``fields`` stand in place of any of these."""
    made = {
        "context_size": 10_000,
        "notice_tokens": 6_000,
        "trigger_tokens": 8_000,
        "reserve_tokens": 1_000,
        "input_limit": 9_000,
        "output_reservation": 800,
        "safety_margin": 200,
    }
    return Thresholds(**made | fields)


def counted_calls(monkeypatch: Any, owner: object, name: str) -> list[int]:
    """A list that grows by one at every call of ``owner.name`` from now on (the function
    still runs; ``monkeypatch`` undoes it after the test): how often a path was taken."""
    calls: list[int] = []
    real = getattr(owner, name)

    def counting(*args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(owner, name, counting)
    return calls


def raised_at_once(work: Callable[[], object], threads: int) -> list[BaseException]:
    """What ``work`` raised, run in ``threads`` threads that start together (each waits at one
    barrier): the tests of two processes writing one file at once."""
    barrier = threading.Barrier(threads)
    raised: list[BaseException] = []

    def run() -> None:
        barrier.wait()
        try:
            work()
        except BaseException as exc:  # what the test reports
            raised.append(exc)

    started = [threading.Thread(target=run) for _ in range(threads)]
    for thread in started:
        thread.start()
    for thread in started:
        thread.join()
    return raised


def manifest_of(items: Sequence[ManifestItem], **fields: Any) -> ContextManifest:
    """The manifest of a request holding ``items`` (their tokens its estimate): a reasoning
    request to Claude Sonnet 4.6, counted approximately, under a 100,000-token limit, passed;
    ``fields`` stand in place of any of these."""
    made: dict[str, Any] = {
        "request_id": "r",
        "purpose": "reasoning",
        "model": "claude-sonnet-4-6",
        "estimated_input_tokens": sum(i.tokens for i in items),
        "input_limit": 100_000,
        "counting_method": "approximate",
        "exact": False,
        "items": tuple(items),
        "transforms": (),
        "validation": "passed",
    }
    return ContextManifest(**made | fields)


def results_of(messages: Sequence[Message]) -> dict[str, str]:
    """Call id → the result's text, in ctxlab's messages."""
    return {
        r.tool_use_id: r.text
        for m in messages
        if isinstance(m, UserMessage)
        for r in m.tool_results
    }


def requests_sent(agent: Agent) -> list[ModelRequest]:
    """The requests ``agent`` sends for its replies from now on (its summary calls left out),
    in order: a list that grows as it runs."""
    sent: list[ModelRequest] = []

    def keep(event: object) -> None:
        if isinstance(event, ContextBuildEvent) and event.manifest.purpose == "reasoning":
            assert event.request is not None  # a reasoning request is always built whole
            sent.append(event.request)

    agent.subscribe(keep)
    return sent


class CountingCounter(ApproximateCounter):
    """The approximation, remembering every text it counted (in ``calls``)."""

    def __init__(self) -> None:
        super().__init__()
        self.calls: list[str] = []

    def count_text(self, text: str) -> int:
        self.calls.append(text)
        return super().count_text(text)


@cache
def corpus_texts() -> tuple[str, ...]:
    """Every text ctxlab counts in the corpus (empty without it): each block's texts — text,
    tool output, a call's input — System prompts and tool schemas."""
    from ctxlab.io._transcript import load_transcript
    from ctxlab.tokens._parts import block_parts
    from tests.conftest import corpus_files

    texts: list[str] = []
    for path in corpus_files():
        transcript = load_transcript(path)
        texts.extend(t for t in (transcript.system, *(s.rendered for s in transcript.tools)) if t)
        for message in transcript.messages:
            for block in message.content:
                texts.extend(block_parts(block)[1])
    return tuple(texts)


def offline_context(browser: Any, asked: list[str]) -> Any:
    """A Playwright browser context with the network cut: ``file:`` URLs load, every other
    request is aborted and its URL kept in ``asked`` (what a page opened offline would fetch)."""
    context = browser.new_context(offline=True)
    context.route(
        "**/*",
        lambda route: (
            route.continue_()
            if route.request.url.startswith("file:")
            else (asked.append(route.request.url), route.abort())
        ),
    )
    return context


class Displays:
    """IPython's ``display`` and ``update_display``, recorded: what a notebook's outputs
    became (monkeypatch them onto ``IPython.display``)."""

    def __init__(self) -> None:
        self.shown: list[Any] = []
        self.updates: list[tuple[str, dict[str, str]]] = []

    def display(self, obj: Any, raw: bool = False, display_id: Any = None) -> Any:
        self.shown.append(obj)
        if display_id is True:

            class Handle:
                display_id = f"d{len(self.shown)}"

            return Handle()
        return None

    def update_display(self, obj: Any, raw: bool = False, display_id: str = "") -> None:
        self.updates.append((display_id, obj))

    def latest(self, display_id: str) -> str:
        """The HTML display ``display_id`` (``d<n>``: the n-th output) shows now."""
        bundles = [self.shown[int(display_id[1:]) - 1]]
        bundles += [b for d, b in self.updates if d == display_id]
        html: str = bundles[-1]["text/html"]
        return html


def replayed(
    transcript: Transcript,
    *,
    context_window: int,
    counter: TokenCounter | None = None,
    **options: Any,
) -> AsyncIterator[ReplayStep]:
    """The steps of ``transcript`` replayed at ``context_window`` under its System prompt,
    counted approximately unless ``counter`` is given (the tests' usual replay: ``options`` go
    to `replay`; a ``system`` among them stands in place of the transcript's)."""
    options.setdefault("system", transcript.system)
    return replay(
        transcript.messages,
        context_window=context_window,
        counter=ApproximateCounter() if counter is None else counter,
        **options,
    )


async def validations(transcript: Transcript, window: int) -> list[str]:
    """The validation of every request of ``transcript`` replayed at ``window`` (what an
    importer hands over must be a conversation the pipeline can send)."""
    steps = replayed(transcript, context_window=window, tools=transcript.tools)
    return [step.manifest.validation async for step in steps]
