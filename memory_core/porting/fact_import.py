"""Write parsed facts through the memory write API, idempotently (see facts.py)."""

from __future__ import annotations

from pathlib import Path

from memory_core.archive.service import ArchiveService
from memory_core.clock import Clock
from memory_core.errors import YujiError
from memory_core.memories.service import Memories
from memory_core.storage import MemoryRepo, PortingRepo
from memory_core.types import EvidenceRef, NewExperience

from .counts import ImportCounts
from .facts import Fact, FactError, parse_fact, same_value
from .progress import NoProgress, Progress
from .qq_txt import file_size, read_lines

SOURCE = "facts"
ACTOR = "import:facts"
ORIGIN = "migrated"


class FactImporter:
    def __init__(
        self,
        archive: ArchiveService,
        memories: Memories,
        repo: PortingRepo,
        memory_repo: MemoryRepo,
        clock: Clock,
    ) -> None:
        self.archive = archive
        self.memories = memories
        self.repo = repo
        self.memory_repo = memory_repo
        self.clock = clock

    async def run(
        self,
        path: Path,
        *,
        scope: str | None = None,
        dry_run: bool = False,
        progress: Progress | None = None,
    ) -> ImportCounts:
        size = file_size(path)
        bar = progress or NoProgress()
        bar.start(size, 0)
        counts = ImportCounts()
        for line_no, (offset, raw) in enumerate(read_lines(path), start=1):
            text = raw.decode("utf-8", errors="replace").strip().removeprefix("\ufeff")
            if not text:
                continue
            counts.read += 1
            try:
                fact = parse_fact(text, scope)
            except FactError as error:
                counts.refuse(str(error))
                counts.unmatched_line(line_no, text)
                continue
            try:
                await self._one(fact, counts, dry_run=dry_run)
            except YujiError as error:
                counts.refuse(f"refused by the write API: {error}")
            if line_no % 200 == 0:
                bar.advance_to(offset + len(raw))
        bar.advance_to(size)
        return counts

    async def _one(self, fact: Fact, counts: ImportCounts, *, dry_run: bool) -> None:
        existing = await self.repo.keyed_memory(fact.scope, SOURCE, fact.import_key)
        if existing is None:
            quoted = await self.archive.by_fingerprint(fact.scope, fact.fingerprint)
            if quoted is not None:  # written by a run cut off before it kept the key
                existing = await self.memory_repo.citing(fact.scope, quoted.id, ORIGIN)
                if existing is not None and not dry_run:
                    await self.repo.set_key(
                        fact.scope, SOURCE, fact.import_key, existing, self.clock.now()
                    )
        if existing is not None:
            old = await self.memories.get(fact.scope, existing)
            if same_value(old.content, fact.content):
                counts.duplicate += 1
                return
        if dry_run:
            if existing is None:
                counts.new += 1
            else:
                counts.changed += 1
            return
        new_id = await self._write(fact)
        if existing is None:
            counts.new += 1
        else:
            await self.memories.supersede(
                fact.scope,
                existing,
                new_id,
                reason=f"imported fact {fact.key!r} has a new value",
                changed_by=ACTOR,
            )
            counts.changed += 1
        await self.repo.set_key(fact.scope, SOURCE, fact.import_key, new_id, self.clock.now())

    async def _write(self, fact: Fact) -> int:
        experience_id = await self.archive.append(
            NewExperience(
                scope=fact.scope,
                fingerprint=fact.fingerprint,
                sender_id=ACTOR,
                sender_name="facts import",
                text=fact.quote,
                sent_at=fact.valid_from or self.clock.now(),
                segments=[{"type": "text", "data": {"text": fact.quote}}],
                source="migrated",
            )
        )
        outcome = await self.memories.write(
            fact.scope,
            type=fact.type,
            subject=fact.subject,
            content=fact.content,
            evidence=[EvidenceRef(experience_id=experience_id, role="imported")],
            importance=fact.importance,
            confidence=fact.confidence,
            valid_from=fact.valid_from,
            valid_to=fact.valid_to,
            origin=ORIGIN,
            changed_by=ACTOR,
        )
        return outcome.memory.id
