"""Analysis of recorded sessions, no model called: replay under a config, what-if comparisons
priced with prompt caching, sweeps, a recording's own requests *as recorded*, what it does not
hold of them (the unrecorded part, sized from the bill or stated), estimates reconciled with
the bill, and the cache model checked against it."""

from ctxlab.analysis._bill_check import CacheAgreement, cache_agreement, cache_check
from ctxlab.analysis._calibration import Calibration, CalibrationFit, calibrate
from ctxlab.analysis._compaction_sites import (
    CompactionSite,
    compaction_sites,
    documented_threshold,
    sites_frame,
)
from ctxlab.analysis._cost import PRICES, CacheRules, Price, cache_rules_for, price_for
from ctxlab.analysis._price import LongContext
from ctxlab.analysis._recorded import (
    RecordedCompaction,
    RecordedRequest,
    recorded_compactions,
    recorded_requests,
    unrecorded_parts,
)
from ctxlab.analysis._replay import ReplayStep, compare_configs, replay
from ctxlab.analysis._sweep import SWEEP_COLUMNS, sweep
from ctxlab.analysis._unrecorded import (
    UNRECORDED_PROFILES,
    UnrecordedPart,
    UnrecordedProfile,
    unrecorded_note,
    unrecorded_part,
)
from ctxlab.analysis._verdict import sweep_findings
from ctxlab.analysis._whatif import WhatIf

__all__ = [
    "PRICES",
    "SWEEP_COLUMNS",
    "UNRECORDED_PROFILES",
    "CacheAgreement",
    "CacheRules",
    "Calibration",
    "CalibrationFit",
    "CompactionSite",
    "LongContext",
    "Price",
    "RecordedCompaction",
    "RecordedRequest",
    "ReplayStep",
    "UnrecordedPart",
    "UnrecordedProfile",
    "WhatIf",
    "cache_agreement",
    "cache_check",
    "cache_rules_for",
    "calibrate",
    "compaction_sites",
    "compare_configs",
    "documented_threshold",
    "price_for",
    "recorded_compactions",
    "recorded_requests",
    "replay",
    "sites_frame",
    "sweep",
    "sweep_findings",
    "unrecorded_note",
    "unrecorded_part",
    "unrecorded_parts",
]
