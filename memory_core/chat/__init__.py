"""Waking and replying: wake rules, the reply pipeline, commands' core, backfill."""

from .backfill import BackfillReport as BackfillReport
from .service import Incoming as Incoming
from .service import ReplyOutcome as ReplyOutcome
from .service import recall_turn as recall_turn

__all__ = ["BackfillReport", "Incoming", "ReplyOutcome"]
