"""Porting: imports into the archive and the memory network, memory packs out and
in, and forgetting a person on request."""

from .counts import ImportCounts as ImportCounts
from .counts import render_counts as render_counts
from .progress import NoProgress as NoProgress
from .progress import Progress as Progress
from .service import Porting as Porting

__all__ = ["ImportCounts", "NoProgress", "Porting", "Progress", "render_counts"]
