"""Messages from another store -> the archive, through its public write path.

A source yields steps (a message, a refusal with its reason, an unmatched line);
this loop archives the messages in batches with source `migrated` (deduplicated on
(scope, fingerprint) exactly like live messages), counts what happened and, after
each committed batch, saves a checkpoint: an interrupted run resumes there, and
the dedup key makes any overlap harmless. `dry_run` counts without writing.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol

from memory_core.archive.service import ArchiveService
from memory_core.clock import Clock
from memory_core.errors import YujiError
from memory_core.storage import PortingRepo
from memory_core.types import NewExperience

from .counts import ImportCounts
from .progress import NoProgress, Progress

BATCH = 1000


@dataclass(frozen=True, slots=True)
class Step:
    exp: NewExperience | None = None
    refused: str | None = None
    unmatched: tuple[int, str] | None = None
    resume_at: int | None = None
    """Where a resumed run may start so that it begins with this step (None: not a
    safe place to cut, e.g. inside a run of same-second messages)."""
    line: int = 0
    done: int = 0
    """Progress units (bytes, rows) consumed once this step is handled."""


class MessageSource(Protocol):
    kind: str
    source_key: str
    """Identifies the file or database: a checkpoint only resumes the same one."""
    scope_label: str
    total: int

    def steps(self, start: int, line: int) -> AsyncIterator[Step]: ...


async def import_messages(
    source: MessageSource,
    archive: ArchiveService,
    repo: PortingRepo,
    clock: Clock,
    *,
    dry_run: bool = False,
    progress: Progress | None = None,
    batch: int = BATCH,
) -> tuple[ImportCounts, int]:
    """Counts of the whole import (earlier interrupted runs included) and the
    position this run resumed from (0 for a fresh run)."""
    bar = progress or NoProgress()
    start, counts = 0, ImportCounts()
    saved = (
        None
        if dry_run
        else await repo.checkpoint(source.kind, source.source_key, source.scope_label)
    )
    if saved is not None and not saved[2]:
        start, counts = saved[0], ImportCounts.from_json(saved[1])
    resumed_from = start
    bar.start(source.total, start)
    pending: list[NewExperience] = []

    async def commit(position: int, *, finished: bool = False) -> None:
        await _archive(pending, archive, repo, counts, dry_run=dry_run)
        pending.clear()
        if not dry_run:
            await repo.save_checkpoint(
                source.kind,
                source.source_key,
                source.scope_label,
                position=position,
                counts=counts.to_json(),
                at=clock.now(),
                finished=finished,
            )

    async for step in source.steps(start, counts.line):
        if step.resume_at is not None and len(pending) >= batch:
            counts.line = step.line - 1
            await commit(step.resume_at)
            bar.advance_to(step.resume_at)
        if step.exp is not None:
            counts.read += 1
            pending.append(step.exp)
        elif step.refused is not None:
            counts.read += 1
            counts.refuse(step.refused)
        elif step.unmatched is not None:
            counts.unmatched_line(*step.unmatched)
    counts.line = 0
    await commit(source.total, finished=True)
    bar.advance_to(source.total)
    return counts, resumed_from


async def _archive(
    exps: list[NewExperience],
    archive: ArchiveService,
    repo: PortingRepo,
    counts: ImportCounts,
    *,
    dry_run: bool,
) -> None:
    if not exps:
        return
    by_scope: dict[str, list[NewExperience]] = {}
    for exp in exps:
        by_scope.setdefault(exp.scope, []).append(exp)
    for scope, group in by_scope.items():
        if dry_run:
            existing = await repo.existing_fingerprints(scope, [e.fingerprint for e in group])
            seen: set[str] = set()
            for exp in group:
                if exp.fingerprint in existing or exp.fingerprint in seen:
                    counts.duplicate += 1
                else:
                    counts.new += 1
                    seen.add(exp.fingerprint)
            continue
        before = await archive.max_id(scope)
        try:
            ids = await archive.append_many(group)
        except YujiError:
            ids = await _one_by_one(group, archive, counts)
        created: set[int] = set()
        for id_ in ids:
            if id_ > before and id_ not in created:
                created.add(id_)
                counts.new += 1
            elif id_ > 0:
                counts.duplicate += 1


async def _one_by_one(
    group: list[NewExperience], archive: ArchiveService, counts: ImportCounts
) -> list[int]:
    """A batch the archive refused, row by row: the bad ones are counted as refused."""
    ids: list[int] = []
    for exp in group:
        try:
            ids.append(await archive.append(exp))
        except YujiError as error:
            counts.refuse(f"refused by the archive: {error}")
            ids.append(0)
    return ids
