"""Shared helpers of the ops tests: rows in the truth tables, and corrupting a file."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from pathlib import Path

from sqlalchemy import insert

from memory_core.storage.engine import Database
from memory_core.storage.schema import experiences

_fingerprints = itertools.count(1)
WHEN = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def experience_rows(n: int, scope: str = "group:1") -> list[dict[str, object]]:
    return [
        {
            "scope": scope,
            "fingerprint": f"m{next(_fingerprints)}",
            "sender_id": "10001",
            "sender_name": "小明",
            "text": f"第 {i} 条消息：今天吃了火锅 🍲",
            "segments": [{"type": "text", "data": {"text": f"第 {i} 条"}}],
            "sent_at": WHEN,
            "received_at": WHEN,
            "source": "realtime",
        }
        for i in range(n)
    ]


async def add_experiences(db: Database, n: int, scope: str = "group:1") -> None:
    """Insert `n` experiences in ONE transaction."""
    async with db.write() as conn:
        await conn.execute(insert(experiences), experience_rows(n, scope))


def scramble_pages(path: Path, *, page_size: int = 4096, keep_first: bool = True) -> None:
    """Overwrite every page (but the header page when `keep_first`) with garbage."""
    data = bytearray(path.read_bytes())
    start = page_size if keep_first else 0
    for offset in range(start, len(data)):
        data[offset] = (offset * 31 + 7) % 251
    path.write_bytes(bytes(data))
