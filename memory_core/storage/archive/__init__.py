"""The archive's SQL: the append-only writer's statements, cross-account dedup, the message full-text index and its search, and reading chatrecorder's tables for import."""
