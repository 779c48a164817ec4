"""`yuji copy-store`: the configured store copied, id for id, into an empty store of
either backend, resumable after a kill, and compared with its source at the end.

1. The target is looked at before anything is written to it: a store holding rows the
   copy did not write (any table, yuji's or not) is refused with one line, unchanged.
2. The target is migrated to the head revision, so it has the source's schema, and
   claims the copy (`copy_progress`, one row per table).
3. Every table of the schema, in foreign-key order, is read from the source in chunks
   by primary key; each chunk is written in one target transaction with its progress
   row, so a kill leaves whole chunks and `--resume` starts after the last one.
4. The id sequences are moved past every copied id, and the derived full-text indexes
   are built from the copied rows (they are never copied).
5. Both stores are counted table by table and checksummed (archive text, memory
   contents); the report puts them side by side.

The memory vectors are derived and live where each backend keeps them (a folder beside
SQLite, `memory_vectors` on PostgreSQL): `yuji copy-store` carries them into the copy's
place after the rows and checks the copy recalls what the source does (cli/copy_check.py).
Stop the bot (and every other writer of the source) while copying: rows changed in the
source after their chunk was copied are not copied again.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from memory_core.clock import Clock
from memory_core.errors import ConfigError, ValidationError
from memory_core.storage import (
    COPIED,
    MemoryRepo,
    TableProgress,
    copy_repo,
    message_index,
    migrate,
    store_name,
)
from memory_core.storage.engine import Database

from .copy_report import Compared, CopyReport
from .progress import NoProgress, Progress

CHUNK_ROWS = 2000
_COPIED_NAMES = frozenset(t.name for t in COPIED)


async def copy_store(
    source_url: str,
    target_url: str,
    *,
    clock: Clock,
    resume: bool = False,
    progress: Progress | None = None,
    chunk_rows: int = CHUNK_ROWS,
    busy_timeout_s: float = 30.0,
) -> CopyReport:
    """Copy the store at `source_url` into the one at `target_url` (see the module)."""
    source_name, target_name = store_name(source_url), store_name(target_url)
    if source_name == target_name:
        raise ValidationError(f"{target_name} is the store being copied: name another one")
    started = time.monotonic()
    source = Database(source_url, busy_timeout_s=busy_timeout_s)
    try:
        target = _open_target(target_url, busy_timeout_s)
    except BaseException:
        await source.dispose()
        raise
    try:
        await migrate.upgrade(source)
        recorded, counts = await copy_repo.looked_at(target)
        refusal = refusal_of(target_name, source_name, recorded, counts, resume=resume)
        if refusal is not None:
            raise ValidationError(refusal)
        await migrate.upgrade(target)
        claimed = {row.table for row in recorded}
        unclaimed = [t.name for t in COPIED if t.name not in claimed]
        if unclaimed:  # all of them, unless the schema gained a table since the last run
            async with target.write() as conn:
                await copy_repo.start_progress(conn, source_name, unclaimed, clock.now())
        copied = await _copy_tables(
            source, target, recorded, clock, progress or NoProgress(), chunk_rows
        )
        indexed = await _finish(source, target)
        counts_line, sums = await _compare(source, target)
    finally:
        await target.dispose()
        await source.dispose()
    return CopyReport(
        source=source_name,
        target=target_name,
        resumed=bool(recorded),
        copied=copied,
        seconds=time.monotonic() - started,
        indexed=indexed,
        counts=counts_line,
        checksums=sums,
    )


def _open_target(url: str, busy_timeout_s: float) -> Database:
    try:
        return Database(url, busy_timeout_s=busy_timeout_s)
    except ImportError as exc:
        raise ConfigError(f"no driver for {store_name(url)} ({exc.name}): install it") from None


def refusal_of(
    target: str,
    source: str,
    recorded: Sequence[TableProgress],
    counts: dict[str, int],
    *,
    resume: bool,
) -> str | None:
    """Why the copy may not write into this target (one line), or None.

    Pure: `recorded` is the target's progress, `counts` its rows by table."""
    if not recorded:
        occupied = [f"{name} {n}" for name, n in counts.items() if n]
        if occupied:
            return (
                f"{target} is not empty ({_few(occupied)} rows): copy-store only writes "
                "into an empty store; nothing was changed"
            )
        return None
    others = {row.source for row in recorded} - {source}
    if others:
        return (
            f"{target} holds a copy of another store ({sorted(others)[0]}): copy-store only "
            "writes into an empty store; nothing was changed"
        )
    if not resume:
        if all(row.done for row in recorded):
            return (
                f"{target} already holds a complete copy of this store; "
                "`yuji copy-store --resume` checks it again"
            )
        return (
            f"{target} holds an unfinished copy of this store: continue it with "
            "`yuji copy-store --resume`"
        )
    wrote = {row.table: row.copied for row in recorded}
    foreign = [
        f"{name} {n} (copied {wrote.get(name, 0)})"
        for name, n in counts.items()
        if name in _COPIED_NAMES and n != wrote.get(name, 0)
    ]
    if foreign:
        return (
            f"{target} holds rows the copy did not write ({_few(foreign)}): not resumed; "
            "nothing was changed"
        )
    return None


def _few(items: Sequence[str]) -> str:
    return ", ".join(items[:3]) + (f" and {len(items) - 3} more tables" if len(items) > 3 else "")


async def _copy_tables(
    source: Database,
    target: Database,
    recorded: Sequence[TableProgress],
    clock: Clock,
    progress: Progress,
    chunk_rows: int,
) -> int:
    """Copy what is left of every table; the rows this run wrote."""
    by_table = {row.table: row for row in recorded}
    async with source.read() as conn:
        counts = await copy_repo.row_counts(conn)
    total = sum(counts.get(t.name, 0) for t in COPIED)
    done = sum(row.copied for row in recorded)
    progress.start(total, done)
    written = 0
    for table in COPIED:
        earlier = by_table.get(table.name)
        if earlier is not None and earlier.done:
            continue
        last_key = earlier.last_key if earlier is not None else None
        while True:
            async with source.read() as conn:
                rows = await copy_repo.read_chunk(conn, table, last_key, chunk_rows)
            finished = len(rows) < chunk_rows
            async with target.write() as conn:
                await copy_repo.write_chunk(conn, table, rows, done=finished, now=clock.now())
            written += len(rows)
            progress.advance_to(done + written)
            if finished:
                break
            last_key = copy_repo.key_of(table, rows[-1])
    return written


async def _finish(source: Database, target: Database) -> int:
    """Sequences past every copied id, and the full-text indexes built from the copied
    rows, in one target transaction (done again by a resumed run: it changes nothing
    the second time). The rows indexed."""
    async with source.read() as conn:
        positions = await copy_repo.sequence_positions(conn)
    async with target.write() as conn:
        await copy_repo.advance_sequences(conn, positions)
        indexed = await MemoryRepo(target).rebuild_index(conn=conn)
        indexed += await message_index.rebuild(conn)
    await target.refresh_statistics()
    return indexed


async def _compare(
    source: Database, target: Database
) -> tuple[tuple[Compared, ...], tuple[Compared, ...]]:
    sides = []
    for db in (source, target):
        async with db.read() as conn:
            sides.append((await copy_repo.row_counts(conn), await copy_repo.checksums(conn)))
    (source_counts, source_sums), (target_counts, target_sums) = sides
    counts = tuple(
        Compared(t.name, str(source_counts.get(t.name, 0)), str(target_counts.get(t.name, 0)))
        for t in COPIED
    )
    sums = tuple(Compared(name, source_sums[name], target_sums[name]) for name in source_sums)
    return counts, sums
