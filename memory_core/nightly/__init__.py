"""The nightly pipeline: settle, diary, cards, states, events, gc — per chat and day."""

from memory_core.storage import Card as Card
from memory_core.storage import Diary as Diary

from .service import NightlyService as NightlyService
from .types import LastRun as LastRun
from .types import NightlyBlocks as NightlyBlocks
from .types import StepReport as StepReport
from .types import StepStatus as StepStatus

__all__ = [
    "Card",
    "Diary",
    "LastRun",
    "NightlyBlocks",
    "NightlyService",
    "StepReport",
    "StepStatus",
]
