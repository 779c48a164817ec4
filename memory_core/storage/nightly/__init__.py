"""The nightly pipeline's SQL: diaries, cards, timeline, checkpoints, and each chat's run health."""
