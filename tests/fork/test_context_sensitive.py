"""A context-sensitive scripted server separates configs: its model can finish the task only
while a fact it needs — a token at the end of an early tool result — is still in the request.
Forked under the origin's config and under a starved one (tool results cut to a short head),
each run ten times and more through `AnthropicModel` against the local server, with some
randomness seeded per run (how many logs it reads, a slip now and then, its guess when the token
is gone), the starved config's pass rate falls below the origin's. The Wilson intervals of the
outcome table are checked against intervals computed here from the formula."""

from __future__ import annotations

import itertools
import json
import math
import random
import re
from pathlib import Path
from statistics import NormalDist
from typing import Any

from ctxlab import Agent, ContextConfig
from ctxlab.fork import fork, run_forward
from ctxlab.fork._branch import BranchRun
from ctxlab.models import AnthropicModel
from tests.models._local_server import JSONHandler, LocalServer
from tests.models.messages_api import message, sonnet

TOKEN = "k7f3q9"
GUESSES = ("k7f3q9", "m2x8w1", "p5r6t4", "z9y8x7")
FILLER = "\n".join(
    f"line {i}: the service started worker {i} and it reported ready" for i in range(120)
)


def fetch_ticket() -> str:
    """Fetch the ticket: its log, with the token at the very end."""
    return f"{FILLER}\nTICKET TOKEN: {TOKEN}"


def read_log(part: int) -> str:
    """Read part ``part`` of the service log."""
    return f"log part {part}: all workers idle"


class ContextSensitive(LocalServer):
    """A Messages API server whose model reads the request: it fetches the ticket, reads a
    few log parts (how many: drawn per run), then answers with the token it finds in the
    request — a guess among `GUESSES` when the token is gone — and slips (answers a wrong
    token) one time in ten. A run is told by the path of its base URL (``/run-N``)."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, dict[str, Any]]] = []
        server = self

        class Handler(JSONHandler):
            def do_POST(self) -> None:
                body = self.read_json()
                run = self.path.split("/")[1]
                server.requests.append((run, body))
                self.send_json(200, server.answer(run, body))

            def do_GET(self) -> None:
                self.send_json(404, {"type": "error", "error": {"type": "not_found_error"}})

        super().__init__(Handler)

    def answer(self, run: str, body: dict[str, Any]) -> dict[str, Any]:
        draw = random.Random(run)  # the run's own randomness, the same at every request
        logs, slips = draw.randint(2, 4), draw.random() < 0.1
        guess = draw.choice(GUESSES)
        text = json.dumps(body)
        results = [
            b
            for m in body["messages"]
            if m["role"] == "user" and isinstance(m["content"], list)
            for b in m["content"]
            if b.get("type") == "tool_result"
        ]
        calls = [
            b
            for m in body["messages"]
            if m["role"] == "assistant" and isinstance(m["content"], list)
            for b in m["content"]
            if b.get("type") == "tool_use"
        ]
        step = len(calls)
        if not results:
            return _call("t0", "fetch_ticket", {})
        if step <= logs:
            return _call(f"t{step}", "read_log", {"part": step})
        found = re.search(r"TICKET TOKEN: (\w+)", text)
        said = found.group(1) if found else guess
        if slips:
            said = next(g for g in GUESSES if g != TOKEN)
        return message(f"The ticket's token is {said}.", input_tokens=500, output_tokens=12)


def _call(id_: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return message(
        [{"type": "tool_use", "id": id_, "name": name, "input": arguments}],
        input_tokens=500,
        output_tokens=20,
    )


def passed(run: BranchRun) -> bool:
    return run.reply is not None and TOKEN in run.reply


def wilson(k: int, n: int, confidence: float = 0.95) -> tuple[float, float]:
    """The Wilson score interval, from its formula (Wilson 1927; Newcombe 1998, method 3)."""
    z = NormalDist().inv_cdf(0.5 + confidence / 2)
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return centre - half, centre + half


RUNS = 12


async def test_a_starved_config_passes_less_often_with_true_intervals(tmp_path: Path) -> None:
    numbers = itertools.count()
    with ContextSensitive() as server:

        def model() -> AnthropicModel:
            return sonnet(f"{server.url}/run-{next(numbers)}", max_tokens=256)

        origin = Agent(
            model=model(),
            tools=[fetch_ticket, read_log],
            context_config=ContextConfig(tool_result_limit=20_000),
        )
        await origin("What is the ticket's token?")
        branches = [
            await fork(
                origin,
                at=0,
                name=name,
                config=ContextConfig(tool_result_limit=limit),
                model=model,
                safe_tools=True,
                root=tmp_path,
            )
            for name, limit in (("origin", 20_000), ("starved", 200))
        ]
        outcomes = await run_forward(
            branches, runs=RUNS, concurrency=1, check=passed, max_steps=10, budget_usd=5.0
        )
    frame = outcomes.frame()
    assert frame["error"].isna().all(), list(frame["error"])
    # The starved runs' requests never held the token after the fetch; the origin's always.
    summary = outcomes.summary().set_index("branch")
    wins = {name: int(frame[frame["branch"] == name]["passed"].sum()) for name in summary.index}
    assert wins["starved"] < wins["origin"]
    assert summary.loc["starved", "pass_rate"] < summary.loc["origin", "pass_rate"]
    for name, row in summary.iterrows():
        low, high = wilson(wins[name], RUNS)
        assert row["verdicts"] == RUNS
        assert row["pass_rate"] == wins[name] / RUNS
        assert math.isclose(row["pass_low"], low, abs_tol=1e-9), (name, row["pass_low"], low)
        assert math.isclose(row["pass_high"], high, abs_tol=1e-9), (name, row["pass_high"], high)
    # What separates them: no request of a starved run held the token, every origin run's
    # last request did.
    for run in outcomes.runs:
        held = [_holds(r) for r in run.requests if r is not None]
        if run.branch.name == "starved":
            assert held and not any(held)
        else:
            assert held[-1]


def _holds(request: Any) -> bool:
    return any(TOKEN in m.model_dump_json() for m in request.messages)
