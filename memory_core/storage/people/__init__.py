"""The person index's SQL: persons, their names per chat, the rebuild's progress."""
