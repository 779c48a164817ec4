"""Recall: visibility, tokenising, the staged search and ranking (SPEC.md §8)."""
