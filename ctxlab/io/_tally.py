"""`Tally`: the running count behind a `ConversationBuilder`'s census (`ctxlab.io._census`
says how an importer reports into it): the open record, what became of it, the parts of it left
out, and what the importer set aside."""

from __future__ import annotations

from typing import Any

from ctxlab.io._census import _add
from ctxlab.io._inventory import inventory_of

__all__ = ["Tally"]


class Tally:
    """The running count behind a `ConversationBuilder`'s census: the open record (or group of
    records) and what became of it. Parts of the open record left out before it is decided are
    held until it is: a record used counts them left out, by their reasons; a record skipped
    is skipped once, for the first one's reason (what it held and did not keep), not also for
    them — ``by_reason``, the transcript's ``meta["skipped"]``, counts each thing once."""

    def __init__(self, unit: str) -> None:
        self.unit = unit
        self.read: dict[str, int] = {}
        self.used: dict[str, int] = {}
        self.skipped: dict[str, int] = {}
        self.left_out: dict[str, int] = {}
        self._reasons: dict[str, None] = {}  # of both, in the order first counted (by_reason's)
        self.unaccounted: dict[str, int] = {}
        self.usage_read = 0
        self.usage_lost: dict[str, int] = {}
        self.set_aside: dict[str, int] = {}
        self.aside_keys: dict[str, set[str]] = {}
        self._open: tuple[str, int] | None = None  # (kind, count) of the record being read
        self._state = "none"  # of the open record: "pending", "used", "skipped"
        self._raw: Any = None  # the open record's raw value, when the importer gave it
        self._held: list[tuple[str, int, Any]] = []  # its parts left out while undecided

    @property
    def by_reason(self) -> dict[str, int]:
        """Records skipped and parts left out, by reason (``meta["skipped"]``, a new dict)."""
        return {r: self.skipped.get(r, 0) + self.left_out.get(r, 0) for r in self._reasons}

    def record(self, kind: str, count: int = 1, raw: Any = None) -> None:
        # A group of no record is opened too: what is said of it counts nothing.
        self.close()
        count = max(count, 0)
        _add(self.read, kind, count)
        self._open, self._state, self._raw = (kind, count), "pending", raw

    def use(self) -> None:
        if self._open is not None and self._state == "pending":
            self._state = "used"
            self._release()

    def skip(self, reason: str, count: int) -> None:
        """Skip the open record (all of its group), or ``count`` records outside one, or
        ``count`` parts of a record already decided."""
        if self._open is None:
            # Not inside a record (an importer that does not name its records): ``count``
            # records of their own, read and skipped.
            _add(self.read, reason, count)
            self._count(self.skipped, reason, count)
            return
        if self._state == "pending":
            held, self._held = self._held, []
            if held:
                # What the record held is why nothing of it was kept: one reason, its first
                # part's (the record's own reason would count the same loss a second time).
                reason = held[0][0]
            self._count(self.skipped, reason, self._open[1])
            self._state = "skipped"
            if self._raw is not None:
                # What the skipped record holds is set aside with it, not lost (a group's
                # raw value is the list of its records).
                group = self._open[1] != 1 and isinstance(self._raw, list)
                self.set_aside_in(self._raw, reason, records=group)
            else:
                for _, _, raw in held:  # (not counted: the record is skipped once, for them)
                    self._left_out(reason, 0, raw)
            return
        # The record is already used (or skipped): what is skipped is a part of it.
        self._left_out(reason, count, None)

    def set_aside_in(self, value: Any, reason: str, *, records: bool = False) -> None:
        """Set aside, for ``reason``, everything the inventory finds in ``value`` (a list of
        the file's records, with ``records``)."""
        found = inventory_of(value if records else [value], read=True)  # (read here only)
        for kind, keys in found.findings.items():
            if keys:
                _add(self.set_aside, f"{kind}: {reason}", len(keys))
                self.aside_keys.setdefault(kind, set()).update(keys)

    def settle(self, reason: str) -> None:
        """Skip the open record for ``reason`` if it is still undecided (not when it was used
        or skipped already)."""
        if self._open is not None and self._state == "pending":
            self.skip(reason, self._open[1])

    def leave_out(self, reason: str, count: int, raw: Any = None) -> None:
        """``count`` parts of the open record not kept, for ``reason`` (``raw``: as the file
        holds them, set aside); held while the record is undecided."""
        if count <= 0:
            return
        if self._open is not None and self._state == "pending":
            self._held.append((reason, count, raw))
            return
        self._left_out(reason, count, raw)

    def _release(self) -> None:
        # The record is decided without being skipped: its held parts are counted left out.
        held, self._held = self._held, []
        for reason, count, raw in held:
            self._left_out(reason, count, raw)

    def _left_out(self, reason: str, count: int, raw: Any) -> None:
        self._count(self.left_out, reason, count)
        if raw is not None:  # what the parts hold is set aside with them, not lost
            self.set_aside_in(raw, reason)

    def _count(self, counts: dict[str, int], reason: str, count: int) -> None:
        if count > 0:
            _add(counts, reason, count)
            self._reasons[reason] = None

    def close(self) -> None:
        if self._open is not None:
            kind, count = self._open
            if self._state == "used":
                _add(self.used, kind, count)
            elif self._state == "pending":
                _add(self.unaccounted, kind, count)
        self._release()
        self._open, self._state, self._raw = None, "none", None
