"""Consolidation's SQL: the two watermarks, batches and fragments."""
