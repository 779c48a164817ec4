"""The memory vector index: vector rows and builds on either engine, and pgvector's column and HNSW index."""
