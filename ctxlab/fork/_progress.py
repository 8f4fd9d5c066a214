"""`RunBar`: the progress of runs made in this process — runs done of all, and the dollars
spent (of the cap) — on a ``tqdm.auto`` bar.

tqdm is imported only when a bar is asked for: in a notebook ``tqdm.auto`` draws with
ipywidgets, which the engine never imports by itself.
"""

from __future__ import annotations

from typing import Any

from ctxlab.analysis._budget import Budget, dollars

__all__ = ["RunBar"]


class RunBar:
    """A bar of ``total`` runs (nothing drawn unless ``shown``), its postfix what ``budget``
    says was spent; the estimate, when given, is its description."""

    def __init__(self, total: int, budget: Budget, *, shown: bool, estimate: str = "") -> None:
        self._budget = budget
        self._bar: Any = None
        if shown:
            from tqdm.auto import tqdm  # only when asked (see the module)

            self._bar = tqdm(total=total, unit="run", desc=estimate or "runs")
            self._postfix()

    def done(self) -> None:
        """One more run finished."""
        if self._bar is not None:
            self._bar.update(1)
            self._postfix()

    def close(self) -> None:
        """Take the bar down (its last state stays shown)."""
        if self._bar is not None:
            self._postfix()
            self._bar.close()

    def _postfix(self) -> None:
        budget = self._budget
        cap = "" if budget.cap is None else f" of {dollars(budget.cap)}"
        self._bar.set_postfix_str(f"spent {dollars(budget.spent)}{cap}", refresh=True)
