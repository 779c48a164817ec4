"""`yuji eval`: load a recall dataset (docs/eval-format.md) into a temporary database
through the public write path and measure recall on it."""

from .dataset import Dataset as Dataset
from .dataset import load_dataset as load_dataset
from .runner import EvalOptions as EvalOptions
from .runner import run_eval as run_eval

__all__ = ["Dataset", "EvalOptions", "load_dataset", "run_eval"]
