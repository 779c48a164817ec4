"""Consolidation: the background LLM pass that turns the archive into memories.

Kept import-light (the storage layer imports `selection`): the service lives in
`memory_core.consolidation.service` and the runner in `.runner`.
"""
