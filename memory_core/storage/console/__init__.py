"""The web console's own tables (audit, live overrides) and its cross-aggregate reads."""
