"""ctxlab's notebook layer: the `Lab` dashboard (needs ``pip install 'ctxlab[widgets]'``).

The engine never imports this package; it observes agents through their events.
"""

from ctxlab.widgets._charts import pareto_chart, pareto_front, sweep_heatmap
from ctxlab.widgets._lab import Lab
from ctxlab.widgets._map import ContextMap, map_items
from ctxlab.widgets._steps import STEP_COLUMNS, StepLog
from ctxlab.widgets._whatif import WhatIfLab

__all__ = [
    "STEP_COLUMNS",
    "ContextMap",
    "Lab",
    "StepLog",
    "WhatIfLab",
    "map_items",
    "pareto_chart",
    "pareto_front",
    "sweep_heatmap",
]
