"""Full text on either engine: the memory index's layout (fts) and ranked matches in any index (ranked)."""
