"""Several bot processes on one store: leadership, the deployment's accounts, and
who answers a wake two of its accounts heard (docs/design.md#several-processes)."""
