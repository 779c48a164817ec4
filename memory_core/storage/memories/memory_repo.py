"""The memory aggregate's one repository: memories, versions, evidence, relations,
aliases and the derived full-text index, with the reads other aggregates make of
them (the nightly gc and prompts, the vector index builder, forget requests, fact
imports, memory packs): no other repository names a memory table.

Every method takes an optional open connection (`conn=`, see repository.py) so the
memory service composes several of them in one transaction. Every lookup by id
also filters on scope: an id of another chat reads as missing. `MemoryRepo` is the
one public class; its methods live by concern in sibling modules:

- memory_reads.py: the memories table (insert, update, lookups, credit);
- memory_history.py: versions and evidence;
- memory_links.py: relations and aliases;
- memory_search.py: the full-text index and its candidate queries;
- memory_dated.py: the memories dated on a span of days (evidence or validity);
- memory_uses.py: what the nightly gc, the vector index and memory packs read;
- memory_console.py: what the web console reads;
- memory_sql.py: the statements longer than a line (visibility, candidates).
"""

from __future__ import annotations

from .memory_console import MemoryConsole
from .memory_dated import MemoryDated
from .memory_history import MemoryHistory
from .memory_links import MemoryLinks
from .memory_search import MemorySearch
from .memory_uses import GcCandidate as GcCandidate
from .memory_uses import MemoryRows as MemoryRows
from .memory_uses import MemoryText as MemoryText
from .memory_uses import MemoryUses

__all__ = ["GcCandidate", "MemoryRepo", "MemoryRows", "MemoryText"]


class MemoryRepo(MemorySearch, MemoryDated, MemoryHistory, MemoryLinks, MemoryUses, MemoryConsole):
    """Every query of the memory aggregate (MemorySearch brings MemoryReads)."""
