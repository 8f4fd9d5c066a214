"""Forks: a session branched at any of its steps under another config, each branch run forward
in its own workspace, and the outcomes compared (does the agent still finish the task?)."""

from ctxlab.fork._arrival import ARRIVALS, Arrival
from ctxlab.fork._branch import Branch, BranchRun
from ctxlab.fork._check import CHECK_TIMEOUT, Check
from ctxlab.fork._estimate import ForwardEstimate
from ctxlab.fork._fork import MAX_NAME, fork
from ctxlab.fork._forward import MAX_CONCURRENCY, MAX_RUNS, forward_estimate, run_forward
from ctxlab.fork._outcomes import OUTCOME_COLUMNS, SUMMARY_COLUMNS, Outcomes
from ctxlab.fork._recorded_model import RecordedModel
from ctxlab.fork._signature import first_difference, signature
from ctxlab.fork._stats import Interval, runs_needed, wilson
from ctxlab.fork._workspace import Workspace

__all__ = [
    "ARRIVALS",
    "CHECK_TIMEOUT",
    "MAX_CONCURRENCY",
    "MAX_NAME",
    "MAX_RUNS",
    "OUTCOME_COLUMNS",
    "SUMMARY_COLUMNS",
    "Arrival",
    "Branch",
    "BranchRun",
    "Check",
    "ForwardEstimate",
    "Interval",
    "Outcomes",
    "RecordedModel",
    "Workspace",
    "first_difference",
    "fork",
    "forward_estimate",
    "run_forward",
    "runs_needed",
    "signature",
    "wilson",
]
