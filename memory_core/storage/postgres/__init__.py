"""What only a PostgreSQL server has and no concept owns: server checks and pg_dump/pg_restore."""
