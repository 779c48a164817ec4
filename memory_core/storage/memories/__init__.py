"""The memory aggregate's SQL: MemoryRepo and its parts (rows, versions and evidence, links and aliases, full-text search, uses by other aggregates, the console's reads)."""
