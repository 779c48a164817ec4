"""Per-chat state (mute, last wake and reply) and what each wake injected."""
