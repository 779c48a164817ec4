"""`core.recall`: at most five memories of this chat for one question (docs/design.md#recall)."""

from .dense_port import RELATED_LABEL as RELATED_LABEL
from .dense_port import DenseScores as DenseScores
from .dense_port import DenseSearch as DenseSearch
from .engine import Recall as Recall

__all__ = ["RELATED_LABEL", "DenseScores", "DenseSearch", "Recall"]
