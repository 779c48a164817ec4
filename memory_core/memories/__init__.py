"""The memory network: write semantics, versions, relations, aliases, near-duplicates."""

from .outcomes import NewMemory as NewMemory
from .outcomes import SupersedeOutcome as SupersedeOutcome
from .outcomes import WriteOutcome as WriteOutcome
from .service import Memories as Memories

__all__ = ["Memories", "NewMemory", "SupersedeOutcome", "WriteOutcome"]
