"""Waking and replying: wake rules, the reply pipeline, commands' core, backfill."""

from .backfill import BackfillReport as BackfillReport
from .service import Incoming as Incoming
from .service import ReplyOutcome as ReplyOutcome

__all__ = ["BackfillReport", "Incoming", "ReplyOutcome"]
