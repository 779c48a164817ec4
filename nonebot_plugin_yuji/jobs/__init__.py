"""The plugin's scheduled jobs, one module per job family; each has `schedule(settings)`,
called once at start-up (the table in docs/design.md#what-runs-where)."""

from . import backfill as backfill
from . import consolidation as consolidation
from . import followups as followups
from . import nightly as nightly
from . import ops as ops
from . import vectors as vectors
from . import vision as vision

ALL = (backfill, consolidation, nightly, ops, vectors, vision, followups)
"""In the order they are scheduled."""
