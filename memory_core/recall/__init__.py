"""Recall: visibility, tokenising, the staged search and ranking (SPEC.md §8)."""

from .engine import Recall as Recall
from .vector_port import VECTOR_LABEL as VECTOR_LABEL
from .vector_port import VectorGuess as VectorGuess
from .vector_port import VectorSidePath as VectorSidePath

__all__ = ["VECTOR_LABEL", "Recall", "VectorGuess", "VectorSidePath"]
