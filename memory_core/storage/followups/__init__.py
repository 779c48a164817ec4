"""The follow-ups' SQL: plans that may be followed up and what was done about them."""
