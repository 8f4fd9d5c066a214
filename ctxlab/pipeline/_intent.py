"""The agent's last stated intent, as whole sentences: the handover's next steps.

An agent's text mixes prose, lists and code. Sentences are read from the prose only (code
blocks are the action, not the intent), split where a sentence ends — ``.``, ``!`` or ``?``
followed by a space and a capital, a digit or a quote — never at a dot inside a name
(``units.py``, ``spotter-fum.2``) or inside inline code. A sentence that ends with a colon
("Let's fix this:") is completed by what it introduces (the list's items or the code's first
line), or dropped when nothing follows. A sentence too long for the summary ends at a whole
word with " …".
"""

from __future__ import annotations

import re

__all__ = ["intent"]

# A sentence states an intent when the agent speaks of what it will do (not "the result will
# be"), or opens with a step word.
_INTENT = re.compile(
    r"\b(?:I'll|I will|I'm going to|I am going to|I need to|I should|I want to|we need to|"
    r"we should|we'll|we will|let me|let's|next|remaining|todo)\b"
    r"|^(?:Now|Then|Next|Finally|First|After that)\b",
    re.IGNORECASE,
)
_FENCE = ("```", "~~~")
_ITEM = re.compile(r"^(?:[-*•]|\d{1,2}[.)])\s+")
_LABEL = re.compile(r"^(?:THOUGHT|DISCUSSION|Thought|Discussion|Reasoning|Plan)\s*:?\s*")
_CODE = re.compile(r"`[^`\n]*`")
_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+(?=[A-Z0-9`\"'(\[*_])")
_LONGEST = 300  # characters: a longer sentence ends at a word with " …"
_SHORTEST = 9


def _blocks(text: str) -> list[tuple[str, list[str]]]:
    """The text as blocks in order: ``("prose", lines)``, ``("item", [line])``, ``("code",
    lines)``."""
    blocks: list[tuple[str, list[str]]] = []
    prose: list[str] = []
    code: list[str] | None = None

    def flush() -> None:
        if prose:
            blocks.append(("prose", prose.copy()))
            prose.clear()

    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith(_FENCE):
            if code is None:
                flush()
                code = []
            else:
                blocks.append(("code", code))
                code = None
            continue
        if code is not None:
            code.append(line)
        elif not stripped:
            flush()
        elif _ITEM.match(stripped):
            flush()
            blocks.append(("item", [_ITEM.sub("", stripped)]))
        else:
            prose.append(stripped)
    flush()
    if code:  # an unclosed fence: still code
        blocks.append(("code", code))
    return blocks


def _split(paragraph: str) -> list[str]:
    """A paragraph's sentences; inline code is never split."""
    spans = [m.span() for m in _CODE.finditer(paragraph)]
    sentences: list[str] = []
    start = 0
    for end in _END.finditer(paragraph):
        cut = end.start()
        if any(a < cut < b for a, b in spans):
            continue
        sentences.append(paragraph[start:cut].strip())
        start = end.end()
    sentences.append(paragraph[start:].strip())
    return [s for s in sentences if s]


def _clip(text: str) -> str:
    if len(text) <= _LONGEST:
        return text
    return text[:_LONGEST].rsplit(" ", 1)[0] + " …"


def _sentences(text: str) -> list[str]:
    blocks = _blocks(text)
    out: list[str] = []
    used = 0  # blocks before this index were read (a list a colon introduced is its sentence's)
    for index, (kind, lines) in enumerate(blocks):
        if kind == "code" or index < used:
            continue
        paragraph = _LABEL.sub("", " ".join(" ".join(line.split()) for line in lines))
        sentences = _split(paragraph)
        if sentences and sentences[-1].endswith(":"):
            completion, taken = _completion(blocks[index + 1 :])
            used = index + 1 + taken
            if completion:
                sentences[-1] = f"{sentences[-1]} {completion}"
            else:
                sentences.pop()  # introduces nothing: a fragment
        out.extend(_clip(s) for s in sentences if len(s) >= _SHORTEST and " " in s)
    return out


def _completion(following: list[tuple[str, list[str]]]) -> tuple[str, int]:
    """What a sentence ending with a colon introduces — the items of the list after it, or
    the first line of the code after it — and how many blocks that took."""
    if not following:
        return "", 0
    kind, lines = following[0]
    if kind == "code":
        first = next((" ".join(ln.split()) for ln in lines if ln.strip()), "")
        return (f"`{_clip(first)}`" if first else ""), 1
    if kind != "item":
        return "", 0
    items = [lines[0] for kind, lines in following[:3] if kind == "item"]
    taken = next((n for n, (kind, _) in enumerate(following) if kind != "item"), len(following))
    more = f" (+{taken - len(items)} more)" if taken > len(items) else ""
    return "; ".join(i.rstrip(".;") for i in items) + more + ".", taken


def intent(text: str, *, limit: int = 2) -> list[str]:
    """The last ``limit`` sentences of ``text`` that state an intent (``next``, ``let me``,
    ``I will``…), or its last sentences when none does; whole sentences, in order."""
    sentences = _sentences(text)
    wanted = [s for s in sentences if _INTENT.search(s)]
    return (wanted or sentences)[-limit:]
