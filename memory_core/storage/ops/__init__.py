"""Operations' SQL: backups and attachment retention, the alert log, model usage, image descriptions."""
