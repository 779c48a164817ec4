"""Porting's SQL: memory packs, copying a store, forgetting a person (redactions), import checkpoints."""
