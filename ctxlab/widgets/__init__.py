"""ctxlab's notebook layer: the `Lab` dashboard (needs ``pip install 'ctxlab[widgets]'``).

The engine never imports this package; it observes agents through their events.
"""

try:  # the notebook extra: a clear way out when it is missing
    import anywidget  # noqa: F401
    import ipywidgets  # noqa: F401
    import plotly  # noqa: F401
except ImportError as _missing:
    _msg = (
        f"ctxlab.widgets needs the notebook extra ({_missing.name} is not installed): "
        "pip install 'ctxlab[widgets]' (or 'ctxlab[lab]' for JupyterLab too)"
    )
    raise ImportError(_msg) from _missing

from ctxlab.widgets._charts import pareto_chart, pareto_front, sweep_heatmap
from ctxlab.widgets._fork_lab import ForkLab
from ctxlab.widgets._lab import Lab
from ctxlab.widgets._map import ContextMap, map_items
from ctxlab.widgets._steps import STEP_COLUMNS, StepLog
from ctxlab.widgets._whatif import WhatIfLab

__all__ = [
    "STEP_COLUMNS",
    "ContextMap",
    "ForkLab",
    "Lab",
    "StepLog",
    "WhatIfLab",
    "map_items",
    "pareto_chart",
    "pareto_front",
    "sweep_heatmap",
]
