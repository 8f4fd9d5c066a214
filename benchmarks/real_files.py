"""Held-out real session files, loaded by ctxlab and checked against an independent census.

    python benchmarks/real_files.py [FOLDER] [--episodes 20] [--json OUT]

``FOLDER`` (or ``$CTXLAB_REAL_FILES``) holds one folder per format, named as ctxlab names it
(``codex/``, ``gemini_cli/``, ``copilot/``, ...), each holding session files or session folders
(a Copilot session's ``<id>/events.jsonl``, an OpenCode ``storage/``, an OpenHands V1
conversation, a folder of OpenHands completion logs — each log one entry). Files of the
project's own fixtures or corpus do not belong there: they are not held out.

For each file the census of `_real_census.py` — a small parser per format, written from the
tool's file layout and sharing nothing with ctxlab's readers — counts what the file holds:
messages and replies, tool calls, billed requests (deduplicated as the format requires),
reasoning texts, models, and what it could not classify. Then ``ctxlab.load`` reads the file
(every episode of a file of several) and the row says:

- ``load``: loaded, or the error;
- ``tools``, ``usage``, ``reasoning``: kept by ctxlab / held by the file — a tool call not
  kept, a usage report on no reply, a reasoning text neither kept (a thinking block) nor
  counted in ctxlab's own census is a loss;
- ``census``: ctxlab's census adds up, or what it says does not (and anything it reports
  unaccounted); ``inv?``: this census's own unaccounted records (what it could not classify:
  a format change this benchmark should learn);
- ``requests``: every request of the recorded view (`ctxlab.ReplaySession`, view
  ``recorded``) and of a replay under the default config prepared with validation
  ``passed``;
- ``calib``: where the file has bills, `ctxlab.calibrate`'s median error out of sample, the
  worst calibrated estimate against its bill (as a ratio), and how many requests are more
  than 1.5× off with no flag; bills that differ from the census's own are said;
- ``price``: the model's price as ctxlab picks it — its own provider's, ``unpriced``, or
  priced as another provider's model (a failure).

The control: the first file with tool calls and usage is loaded again and damaged in memory —
one reply's tool calls (and their results) removed, one usage dropped — and its row must show
both losses; the script exits 1 when it does not (a comparison that cannot see a loss proves
nothing).
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import os
import re
import statistics
import sys
import time
from collections import Counter
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# benchmarks/ is on sys.path when run as a script
from _real_census import Holdings, census_of, provider_of

from ctxlab import PRICES, ContextConfig, CtxlabError, WhatIf, calibrate, load
from ctxlab.analysis._prices import price_for
from ctxlab.io._census import Census
from ctxlab.io._transcript import Transcript
from ctxlab.messages import (
    AssistantMessage,
    ProviderBlock,
    RedactedThinkingBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
    UserMessage,
)
from ctxlab.sources._replay import ReplaySession

RECORDED_WINDOW = 2_000_000
"""The window of the recorded view: large, so that a request is judged on its structure, not
on a window this benchmark would have to guess."""
REPLAY_WINDOW = 200_000
"""The window of the replay under the default config (ctxlab's pipeline fits each request)."""
FAR_OFF = 1.5
"""A calibrated estimate this many times off its bill (either way) must carry a flag."""
SKIP = {"MANIFEST.md", "README.md", "LICENSE", "NOTICE"}


@dataclass
class Row:
    """One file's comparison; every field a figure or a reason, never a guess."""

    fmt: str
    name: str
    census: Holdings | None = None
    error: str | None = None
    episodes: int = 0
    replies: int = 0
    kept_tools: int = 0
    counted_tools: int = 0
    placed_usage: int = 0
    zero_usage: int = 0
    kept_reasoning: int = 0
    counted_reasoning: int = 0
    ctxlab_census: list[str] = field(default_factory=list)
    recorded: tuple[int, int] = (0, 0)
    replayed: tuple[int, int] = (0, 0)
    replay_stop: str | None = None
    bills: list[int] = field(default_factory=list)
    oos: float | None = None
    worst: float | None = None
    unflagged: int = 0
    model: str | None = None
    price: str = ""
    price_ok: bool = True
    seconds: float = 0.0

    def losses(self) -> list[str]:
        """Each failure of this row, in words (empty: the file loads whole)."""
        if self.error:
            return [f"does not load: {self.error}"]
        held, out = self.census, []
        if held is not None:
            if self.kept_tools + self.counted_tools < held.tool_calls:
                lost = held.tool_calls - self.kept_tools - self.counted_tools
                out.append(
                    f"{lost} of {held.tool_calls} tool calls lost (kept {self.kept_tools}, "
                    f"counted {self.counted_tools})"
                )
            if self.placed_usage < held.usage_reports:
                out.append(
                    f"usage on {self.placed_usage} replies of {held.usage_reports} usage reports"
                )
            accounted = self.kept_reasoning + self.counted_reasoning
            if accounted < held.reasoning:
                out.append(
                    f"{held.reasoning - accounted} of {held.reasoning} reasoning texts neither "
                    "kept nor counted"
                )
            if held.zero_bills and self.zero_usage:
                out.append(f"{self.zero_usage} all-zero usage taken at face value")
            mismatch = _bills_differ(held.bills, self.bills)
            if mismatch:
                out.append(mismatch)
        out += [f"ctxlab census: {p}" for p in self.ctxlab_census]
        if self.recorded[0] < self.recorded[1]:
            out.append(f"recorded view: {self.recorded[1] - self.recorded[0]} requests not valid")
        if self.replay_stop or self.replayed[0] < self.replayed[1]:
            out.append(f"replay stopped: {self.replay_stop or 'a request not valid'}")
        if self.unflagged:
            out.append(f"{self.unflagged} requests over {FAR_OFF}× off their bill, unflagged")
        if not self.price_ok:
            out.append(f"price: {self.price}")
        return out


def _bills_differ(census: list[int], ctxlab: list[int]) -> str | None:
    """How ctxlab's billed inputs differ from the census's (as multisets: the order of
    placement is ctxlab's business), or None."""
    census, ctxlab = [b for b in census if b], [b for b in ctxlab if b]
    if not census or not ctxlab or sorted(census) == sorted(ctxlab):
        return None
    extra = Counter(ctxlab) - Counter(census)
    missing = Counter(census) - Counter(ctxlab)
    if not extra and not missing:
        return None
    return (
        f"bills differ: ctxlab has {sum(extra.values())} the file does not "
        f"(e.g. {next(iter(extra), '-')}), lacks {sum(missing.values())} "
        f"(e.g. {next(iter(missing), '-')})"
    )


# --- the files -----------------------------------------------------------------------------


def entries(folder: Path) -> Iterator[tuple[str, Path]]:
    """(format, path) of every held-out session under ``folder``; see the module."""
    for fmt_dir in sorted(p for p in folder.iterdir() if p.is_dir() and not p.name.startswith(".")):
        fmt = fmt_dir.name
        for child in sorted(fmt_dir.iterdir()):
            if child.name.startswith(".") or child.name in SKIP:
                continue
            yield from _entries_of(fmt, child)


def _entries_of(fmt: str, child: Path) -> Iterator[tuple[str, Path]]:
    if child.is_file():
        yield fmt, child
    elif fmt == "copilot" and (child / "events.jsonl").is_file():
        yield fmt, child / "events.jsonl"
    elif fmt == "opencode" and (child / "session").is_dir():
        for session in sorted((child / "session").glob("*/*.json")):
            yield fmt, session
    elif fmt == "openhands" and not (child / "base_state.json").exists():
        for log in sorted(child.glob("*.json")):
            yield fmt, log
    else:
        yield fmt, child


# --- ctxlab's side -------------------------------------------------------------------------


def loaded(path: Path, episodes: int, refused: list[str] | None = None) -> list[Transcript]:
    """Every episode ctxlab reads from ``path`` (at most ``episodes``; 1: the file's default
    conversation): a file of several (Inspect's samples, aider's runs, an OpenHands evaluation's
    instances) is read episode by episode; an episode ctxlab refuses is said in ``refused``."""
    first = load(path)
    if episodes <= 1:
        return [first]
    out = []
    for number in range(episodes):
        try:
            out.append(load(path, episode=number))
        except CtxlabError as exc:
            if refused is not None:
                refused.append(f"episode {number} refused: {_one_line(exc)[:160]}")
    return out or [first]


def held_by(transcripts: list[Transcript], row: Row) -> None:
    """What ctxlab kept: tool calls, usage, thinking, and what its census says."""
    for transcript in transcripts:
        for message in transcript.messages:
            row.replies += isinstance(message, AssistantMessage)
            for block in message.content:
                if isinstance(block, ToolUseBlock) or (
                    isinstance(block, ProviderBlock) and block.kind.endswith(_SERVER_CALLS)
                ):
                    row.kept_tools += 1
                elif isinstance(block, ThinkingBlock | RedactedThinkingBlock):
                    row.kept_reasoning += 1
        row.placed_usage += len(transcript.usage)
        for usage in transcript.usage.values():
            if usage.total_input_tokens == 0 and usage.output_tokens == 0:
                row.zero_usage += 1
            elif usage.total_input_tokens:
                row.bills.append(usage.total_input_tokens)
        row.counted_reasoning += _counted(transcript.meta.get("census"), _REASONING)
        row.counted_tools += _counted(transcript.meta.get("census"), _CALLS)
        row.ctxlab_census += _census_problems(transcript.meta.get("census"))


_SERVER_CALLS = ("_call", "server_tool_use", "mcp_tool_use")
"""A provider-side call kept as the provider wrote it (a web search, an image generation)."""
_REASONING = ("reason", "thought", "think")
_CALLS = ("_call", "tool call", "function call", "tool_use", "tool use")


def _counted(raw: Any, words: tuple[str, ...]) -> int:
    """What ctxlab's census counted without keeping it — parts left out and records skipped
    for a reason naming one of ``words`` (reasoning; a tool call ctxlab does not model, such as
    a provider-side search), never a result or an output."""
    if not isinstance(raw, Mapping):
        return 0
    total = 0
    for key in ("left_out", "skipped"):
        for reason, count in (raw.get(key) or {}).items():
            said = str(reason).lower()
            if said.startswith("event"):
                continue  # a UI event repeating an item counted as the item
            if any(w in said for w in words) and not any(
                w in said for w in ("output", "result", "_end", "response", "request")
            ):
                total += int(count)
    return total


def _census_problems(raw: Any) -> list[str]:
    census = Census.from_meta(raw)
    if census is None:
        return ["no census"]
    out = list(census.problems())
    # Whatever else the census reports as unaccounted (a format-blind inventory's fields).
    for key, value in raw.items():
        if "unaccounted" in key and key != "unaccounted" and value:
            out.append(f"{key}: {value}")
    if census.unaccounted and not out:
        out.append(f"unaccounted: {census.unaccounted}")
    return out


def requests_valid(transcript: Transcript, row: Row) -> None:
    """Every recorded request, and every request of a replay under the default config,
    prepared valid."""
    recorded = ReplaySession(transcript, context_window=RECORDED_WINDOW, view="recorded")
    manifests = asyncio.run(recorded.run())
    passed = sum(m.validation == "passed" for m in manifests)
    row.recorded = (row.recorded[0] + passed, row.recorded[1] + len(manifests))
    replayed = ReplaySession(transcript, context_window=REPLAY_WINDOW, view="replayed")
    manifests = asyncio.run(replayed.run())
    passed = sum(m.validation == "passed" for m in manifests)
    row.replayed = (row.replayed[0] + passed, row.replayed[1] + len(manifests))
    row.replay_stop = row.replay_stop or replayed.stopped


def calibration_of(transcript: Transcript, row: Row) -> None:
    """The calibration's out-of-sample median error, its worst request, and the requests far
    off their bill that carry no flag."""
    if not transcript.usage:
        return
    calibration = calibrate(transcript)
    row.oos = calibration.out_of_sample_error
    worst = 1.0
    for r in calibration.rows:
        billed, calibrated = float(r["billed"]), float(r["calibrated"])  # type: ignore[arg-type]
        if billed <= 0 or calibrated <= 0:
            continue
        ratio = max(calibrated / billed, billed / calibrated)
        worst = max(worst, ratio)
        if ratio > FAR_OFF and not r["flag"]:
            row.unflagged += 1
    row.worst = worst if calibration.rows else None


def priced(transcript: Transcript, census: Holdings | None, row: Row) -> None:
    """Each model's price as ctxlab picks it (``price_for``, and the what-if's own price and
    cache rules), against the model's own provider."""
    models = [m for m in transcript.meta.get("models") or [] if isinstance(m, str) and m]
    if not models and isinstance(transcript.meta.get("model"), str):
        models = [transcript.meta["model"]]
    if not models and census is not None:
        models = [m for m, _ in census.models.most_common() if m and m != "None"]
    if not models:
        row.price = "no model named"
        return
    row.model = models[0]
    said = []
    for model in models:
        verdict, ok = _price_of(model)
        said.append(f"{model}: {verdict}")
        row.price_ok = row.price_ok and ok
    said.append(_whatif_price(transcript, models[0]))
    row.price = "; ".join(said)
    if "another" in said[-1]:
        row.price_ok = False


def _price_of(model: str) -> tuple[str, bool]:
    """``price_for(model)``: whose price it is, and whether that is the model's own (its name,
    give or take a provider prefix and a date or ``-latest`` suffix) — a newer model priced as
    an older one of its family, or as another provider's, is priced as another's."""
    try:
        price = price_for(model)
    except CtxlabError as exc:
        return f"unpriced ({_one_line(exc)[:60]})", True
    if price is None:
        return "unpriced", True
    names = [n for n, p in PRICES.items() if p is price] or [
        n for n, p in PRICES.items() if p == price
    ]
    if not names:
        return "a price of no listed model", True
    if any(_own_name(model, n) for n in names):
        return names[0], True
    own, theirs = provider_of(model), {provider_of(n) for n in names}
    whose = "another provider's" if own is not None and own not in theirs else "another model's"
    return f"priced as {names[0]} ({whose})", False


def _own_name(model: str, name: str) -> bool:
    bare = model.rsplit("/", 1)[-1]
    return (
        re.fullmatch(re.escape(name) + r"(-\d{8}|-\d{4}-\d{2}-\d{2}|-latest|@\d+)?", bare)
        is not None
    )


def _whatif_price(transcript: Transcript, model: str) -> str:
    """The what-if's price and cache rules for this recording (what a user sees priced)."""
    try:
        whatif = WhatIf(transcript, {"default": ContextConfig()}, context_window=REPLAY_WINDOW)
    except Exception as exc:
        return f"what-if: {type(exc).__name__}: {_one_line(exc)[:80]}"
    price, rules = whatif.price, whatif.rules
    names = [n for n, p in PRICES.items() if p is price] or [
        n for n, p in PRICES.items() if p == price
    ]
    kind = str(getattr(rules, "kind", rules))
    own = provider_of(model)
    theirs = {provider_of(n) for n in names}
    bad_price = bool(names) and not any(_own_name(model, n) for n in names)
    bad_provider = own is not None and bool(names) and own not in theirs
    # Google caches implicitly, as OpenAI does: Anthropic's breakpoints are another's rules.
    bad_rules = own is not None and (kind == "anthropic") != (own == "anthropic")
    priced_as = names[0] if names else ("unpriced" if price is None else "unlisted price")
    said = f"what-if prices {model} as {priced_as}, {kind} cache rules"
    if bad_provider or bad_rules:
        whose = (
            "price and rules"
            if bad_provider and bad_rules
            else "price"
            if bad_provider
            else "rules"
        )
        return f"{said} (another provider's {whose})"
    return said + (" (another model's price)" if bad_price else "")


def examine(fmt: str, path: Path, episodes: int) -> Row:
    """One file: the census, then ctxlab's load, requests, calibration and price."""
    started = time.perf_counter()
    row = Row(fmt, _shown(path))
    try:
        found = census_of(fmt, path)
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        found = None
        row.ctxlab_census.append(f"(this census failed: {type(exc).__name__}: {exc})")
    # A file of several conversations is compared whole, episode by episode, up to the cap.
    several = found is not None and len(found) > 1
    count = min(len(found), episodes) if found is not None and several else 1
    row.census = _summed(found[:count]) if found is not None else None
    try:
        transcripts = loaded(path, count, row.ctxlab_census)
    except CtxlabError as exc:
        row.error = f"{type(exc).__name__}: {_one_line(exc)}"
        row.seconds = time.perf_counter() - started
        return row
    except Exception as exc:  # an untyped error is itself the finding
        row.error = f"UNTYPED {type(exc).__name__}: {_one_line(exc)}"
        row.seconds = time.perf_counter() - started
        return row
    row.episodes = len(transcripts)
    compare(transcripts, row)
    row.seconds = time.perf_counter() - started
    return row


def compare(transcripts: list[Transcript], row: Row) -> None:
    """Everything ctxlab's side of a row says about ``transcripts``."""
    held_by(transcripts, row)
    for transcript in transcripts:
        try:
            requests_valid(transcript, row)
        except Exception as exc:  # a replay that raises is a failure of the row
            row.replay_stop = f"{type(exc).__name__}: {_one_line(exc)}"
        try:
            calibration_of(transcript, row)
        except Exception as exc:
            row.ctxlab_census.append(f"calibrate raised {type(exc).__name__}: {_one_line(exc)}")
    priced(transcripts[0], row.census, row)


def _summed(found: list[Holdings]) -> Holdings:
    total = Holdings()
    for held in found:
        for name in ("messages", "replies", "tool_calls", "reasoning", "outputs", "zero_bills"):
            setattr(total, name, getattr(total, name) + getattr(held, name))
        total.bills += held.bills
        total.models.update(held.models)
        total.unaccounted.update(held.unaccounted)
    return total


def _shown(path: Path) -> str:
    parts = path.parts
    return "/".join(parts[-3:]) if len(parts) >= 3 else str(path)


def _one_line(exc: BaseException) -> str:
    text = " ".join(str(exc).split())
    return text if len(text) <= 300 else text[:297] + "..."


# --- the control ---------------------------------------------------------------------------


def damaged(transcript: Transcript) -> Transcript:
    """``transcript`` with the first reply's tool calls (and their results) removed and the
    first usage dropped: what a reader that loses records would hand over."""
    messages = list(transcript.messages)
    target = next(
        (
            i
            for i, m in enumerate(messages)
            if isinstance(m, AssistantMessage)
            and any(isinstance(b, ToolUseBlock) for b in m.content)
        ),
        None,
    )
    if target is None:  # an episode without calls (a file's other conversation): left whole
        return transcript
    reply = messages[target]
    ids = {b.id for b in reply.content if isinstance(b, ToolUseBlock)}
    kept = [b for b in reply.content if not isinstance(b, ToolUseBlock)]
    messages[target] = reply.model_copy(update={"content": kept})
    for i, message in enumerate(messages):
        if isinstance(message, UserMessage):
            rest = [
                b
                for b in message.content
                if not (isinstance(b, ToolResultBlock) and b.tool_use_id in ids)
            ]
            messages[i] = message.model_copy(update={"content": rest})
    messages = [m for m in messages if m.content]
    usage = dict(transcript.usage)
    usage.pop(min(usage))
    return dataclasses.replace(transcript, messages=tuple(messages), usage=usage)


def control(rows: list[Row], paths: dict[str, Path], episodes: int) -> tuple[Row | None, bool]:
    """The control row (a damaged copy of the first file with tool calls and usage) and
    whether it shows both losses."""
    for row in rows:
        held = row.census
        if row.error or held is None or not row.kept_tools or not row.placed_usage:
            continue
        if held.tool_calls != row.kept_tools or held.usage_reports != row.placed_usage:
            continue  # the control needs a file whose counts agree, to damage
        path = paths[row.name]
        copy = Row(row.fmt, f"CONTROL (damaged {row.name})", census=held)
        held_by([damaged(t) for t in loaded(path, max(row.episodes, 1))], copy)
        losses = copy.losses()
        shown = any("tool calls lost" in x for x in losses) and any("usage on" in x for x in losses)
        return copy, shown
    return None, False


# --- the report ----------------------------------------------------------------------------


def _ratio(kept: int, held: int | None) -> str:
    return f"{kept}/{held}" if held is not None else f"{kept}/?"


def table(rows: list[Row]) -> str:
    """One line per file, then each file's failures in words."""
    head = (
        f"{'format':<14} {'file':<58} {'load':<5} {'replies':>9} {'tools':>9} {'usage':>9} "
        f"{'reason':>9} {'recorded':>9} {'replayed':>9} {'oos':>6} {'worst':>6} "
        f"{'price':<28} {'inv?':>4}"
    )
    lines = [head, "-" * len(head)]
    for r in rows:
        held = r.census
        inventory = sum(held.unaccounted.values()) if held else 0
        reasoning = r.kept_reasoning + r.counted_reasoning
        lines.append(
            f"{r.fmt:<14} {r.name[-58:]:<58} {'ERR' if r.error else 'ok':<5} "
            f"{_ratio(r.replies, held.replies if held else None):>9} "
            f"{_ratio(r.kept_tools, held.tool_calls if held else None):>9} "
            f"{_ratio(r.placed_usage, held.usage_reports if held else None):>9} "
            f"{_ratio(reasoning, held.reasoning if held else None):>9} "
            f"{r.recorded[0]}/{r.recorded[1]:<7} {r.replayed[0]}/{r.replayed[1]:<7} "
            f"{_pct(r.oos):>6} {_times(r.worst):>6} {r.price[:28]:<28} {inventory:>4}"
        )
    lines.append("")
    for r in rows:
        losses = r.losses()
        unknown = dict(r.census.unaccounted) if r.census else {}
        if losses or unknown:
            lines.append(f"{r.fmt}/{r.name}:")
            lines += [f"    - {x}" for x in losses]
            if unknown:
                lines.append(f"    . this census could not classify: {unknown}")
    return "\n".join(lines)


def _pct(value: float | None) -> str:
    return f"{value:.1%}" if value is not None else "-"


def _times(value: float | None) -> str:
    return f"{value:.2f}×" if value is not None else "-"


def summary(rows: list[Row]) -> str:
    """Per format: files, loaded, whole, and the totals kept against held."""
    by_format: dict[str, list[Row]] = {}
    for r in rows:
        by_format.setdefault(r.fmt, []).append(r)
    head = (
        f"{'format':<14} {'files':>5} {'loaded':>6} {'whole':>5} {'tools':>11} {'usage':>11} "
        f"{'reasoning':>11} {'req valid':>11} {'oos med':>8} {'unflag':>6} {'mispriced':>9}"
    )
    lines = [head, "-" * len(head)]
    for fmt, group in sorted(by_format.items()):
        ok = [r for r in group if not r.error]
        held = [r.census for r in ok if r.census]
        errors = [r.oos for r in ok if r.oos is not None]
        lines.append(
            f"{fmt:<14} {len(group):>5} {len(ok):>6} {sum(not r.losses() for r in group):>5} "
            f"{sum(r.kept_tools for r in ok):>5}/{sum(h.tool_calls for h in held):<5} "
            f"{sum(r.placed_usage for r in ok):>5}/{sum(h.usage_reports for h in held):<5} "
            f"{sum(r.kept_reasoning + r.counted_reasoning for r in ok):>5}/"
            f"{sum(h.reasoning for h in held):<5} "
            f"{sum(r.recorded[0] + r.replayed[0] for r in ok):>5}/"
            f"{sum(r.recorded[1] + r.replayed[1] for r in ok):<5} "
            f"{_pct(statistics.median(errors)) if errors else '-':>8} "
            f"{sum(r.unflagged for r in ok):>6} {sum(not r.price_ok for r in ok):>9}"
        )
    total = len(rows)
    whole = sum(not r.losses() for r in rows)
    lines.append(f"\n{whole} of {total} files whole; {sum(bool(r.error) for r in rows)} refused")
    return "\n".join(lines)


def as_json(rows: list[Row]) -> list[dict[str, Any]]:
    """The rows as plain data (``--json``)."""
    out = []
    for r in rows:
        census = r.census
        r.census = None
        data = dataclasses.asdict(r)
        r.census = census
        if census is not None:
            data["census"] = {
                **{k: v for k, v in vars(census).items() if not isinstance(v, Counter)},
                "models": dict(census.models),
                "unaccounted": dict(census.unaccounted),
            }
        data["losses"] = r.losses()
        out.append(data)
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the census and the comparison over the folder; 1 when the control fails."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("folder", nargs="?", default=os.environ.get("CTXLAB_REAL_FILES"))
    parser.add_argument("--episodes", type=int, default=20, help="at most this many a file")
    parser.add_argument("--json", type=Path, help="write the rows as JSON here")
    args = parser.parse_args(argv)
    if not args.folder:
        parser.error("give the folder of real files, or set CTXLAB_REAL_FILES")
    folder = Path(args.folder)
    rows, paths = [], {}
    for fmt, path in entries(folder):
        row = examine(fmt, path, args.episodes)
        rows.append(row)
        paths[row.name] = path
        print(f"  {row.seconds:6.1f}s {fmt}/{row.name}", file=sys.stderr, flush=True)
    print(table(rows))
    print()
    print(summary(rows))
    check, shown = control(rows, paths, args.episodes)
    print()
    if check is None:
        print("control: no whole file with tool calls and usage to damage")
    else:
        print(f"control {check.name}: {'; '.join(check.losses())}")
        print("control: the damage shows" if shown else "CONTROL FAILED: the damage does not show")
    if args.json:
        args.json.write_text(json.dumps(as_json(rows), indent=1, default=str), encoding="utf-8")
    return 0 if shown else 1


if __name__ == "__main__":
    sys.exit(main())
