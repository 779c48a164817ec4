"""Waking and replying: wake rules, the reply pipeline, commands' core, backfill."""
