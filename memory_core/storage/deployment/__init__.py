"""The deployment's SQL: the processes and accounts sharing a store, and the leader's lock."""
