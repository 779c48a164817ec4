"""Restore a memory pack into a chat (this database or another): ids remapped,
evidence kept as quotes (archived with source `migrated`), memories written through
the memory write API with origin `imported`, every later version replayed as an
edit, then relations, aliases, cards, diaries and timeline.

Idempotent and resumable: each restored memory is recorded under the pack's id, so
a rerun (or a run after an interruption) skips what is already there.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from datetime import datetime
from typing import Any, cast

from memory_core.archive.service import ArchiveService
from memory_core.clock import Clock
from memory_core.errors import YujiError
from memory_core.memories.service import Memories
from memory_core.storage import PackRepo, PortingRepo
from memory_core.types import EvidenceRef, MemoryStatus, MemoryType, NewExperience, RelationKind

from .counts import ImportCounts
from .pack import instant, read_pack
from .progress import NoProgress, Progress

ORIGIN = "imported"
ACTOR = "import:pack"
ROLE = "imported"


class PackImporter:
    def __init__(
        self,
        packs: PackRepo,
        archive: ArchiveService,
        memories: Memories,
        repo: PortingRepo,
        clock: Clock,
    ) -> None:
        self.packs = packs
        self.archive = archive
        self.memories = memories
        self.repo = repo
        self.clock = clock

    async def run(
        self,
        data: Any,
        scope: str,
        *,
        dry_run: bool = False,
        progress: Progress | None = None,
    ) -> ImportCounts:
        pack = read_pack(data)
        key = f"pack:{pack['pack_id']}"[:64]
        items = sorted(pack.get("memories", []), key=lambda m: int(m["id"]))
        by_id = {int(m["id"]): m for m in items}
        bar = progress or NoProgress()
        bar.start(len(items), 0)
        counts = ImportCounts()
        done = {int(k): v for k, v in (await self.repo.keyed_memories(scope, key)).items()}
        for index, item in enumerate(items, start=1):
            counts.read += 1
            old_id = int(item["id"])
            if old_id in done:
                counts.duplicate += 1
            elif dry_run:
                counts.new += 1
            else:
                try:
                    done[old_id] = await self._memory(scope, item, done, by_id)
                except YujiError as error:
                    counts.refuse(f"memory refused: {error}")
                else:
                    await self.repo.set_key(scope, key, str(old_id), done[old_id], self.clock.now())
                    counts.new += 1
            bar.advance_to(index)
        if not dry_run:
            await self._rest(scope, pack, done)
        return counts

    async def _memory(
        self,
        scope: str,
        item: Mapping[str, Any],
        done: Mapping[int, int],
        by_id: Mapping[int, Mapping[str, Any]],
    ) -> int:
        evidence = [await self._evidence(scope, e, done, by_id) for e in item.get("evidence", [])]
        if not evidence:
            evidence = [await self._quote(scope, "pack", "memory pack", None, str(item["content"]))]
        versions = sorted(item.get("versions") or [item], key=lambda v: int(v.get("version", 1)))
        first = versions[0]
        start, end = instant(item.get("valid_from")), instant(item.get("valid_to"))
        # A memory closed where it began (a correction superseded it) is written open
        # and then closed: the write path refuses an empty interval.
        empty = start is not None and end is not None and end <= start
        written = await self.memories.write(
            scope,
            type=cast(MemoryType, first.get("type", item["type"])),
            subject=str(first.get("subject", item["subject"])),
            content=str(first.get("content", item["content"])),
            evidence=evidence,
            importance=float(first.get("importance", item.get("importance", 0.5))),
            confidence=float(first.get("confidence", item.get("confidence", 0.8))),
            valid_from=start,
            valid_to=None if empty else end,
            origin=ORIGIN,
            changed_by=ACTOR,
        )
        memory = written.memory
        for version in [*versions[1:], item]:
            changes: dict[str, Any] = {}
            for name in ("content", "subject"):
                value = str(version.get(name, getattr(memory, name)))
                if value != getattr(memory, name):
                    changes[name] = value
            for name in ("importance", "confidence"):
                value = float(version.get(name, getattr(memory, name)))
                if value != getattr(memory, name):
                    changes[name] = value
            if changes:
                reason = str(version.get("reason") or "imported version")
                memory = await self.memories.edit(
                    scope, memory.id, reason=f"pack: {reason}", changed_by=ACTOR, **changes
                )
        if empty and end is not None:
            memory = await self.memories.end_validity(
                scope, memory.id, end, reason="pack: closed where it began", changed_by=ACTOR
            )
        status = cast(MemoryStatus, item.get("status", "active"))
        if status != memory.status:
            await self.memories.set_status(
                scope, memory.id, status, reason=f"imported as {status}", changed_by=ACTOR
            )
        if item.get("pinned") or item.get("starred"):
            await self.memories.set_flags(
                scope, memory.id, pinned=bool(item.get("pinned")), starred=bool(item.get("starred"))
            )
        return memory.id

    async def _evidence(
        self,
        scope: str,
        e: Mapping[str, Any],
        done: Mapping[int, int],
        by_id: Mapping[int, Mapping[str, Any]],
    ) -> EvidenceRef:
        if "quote" in e:
            q = e["quote"]
            return await self._quote(
                scope,
                str(q.get("sender_id") or "pack"),
                str(q.get("sender_name") or ""),
                instant(q.get("sent_at")),
                str(q.get("text") or ""),
            )
        if "memory" in e:
            source = int(e["memory"])
            if source in done:
                return EvidenceRef(memory_id=done[source], role=ROLE)
            text = str(by_id.get(source, {}).get("content", f"memory #{source} of the pack"))
            return await self._quote(scope, "pack", "memory pack", None, text)
        fragment = e.get("fragment") or {}
        return await self._quote(
            scope,
            "pack",
            "summary",
            instant(fragment.get("sent_at")),
            str(fragment.get("summary") or ""),
        )

    async def _quote(
        self, scope: str, sender_id: str, sender_name: str, sent_at: datetime | None, text: str
    ) -> EvidenceRef:
        when = sent_at or self.clock.now()
        digest = hashlib.blake2b(
            f"{sender_id}\x1f{when.isoformat()}\x1f{text}".encode(), digest_size=16
        ).hexdigest()
        experience_id = await self.archive.append(
            NewExperience(
                scope=scope,
                fingerprint=f"pack:{digest}",
                sender_id=sender_id[:64],
                sender_name=sender_name,
                text=text,
                sent_at=when,
                segments=[{"type": "text", "data": {"text": text}}],
                source="migrated",
            )
        )
        return EvidenceRef(experience_id=experience_id, role=ROLE)

    async def _rest(self, scope: str, pack: Mapping[str, Any], done: Mapping[int, int]) -> None:
        for r in pack.get("relations", []):
            src, dst = done.get(int(r["src"])), done.get(int(r["dst"]))
            if src is not None and dst is not None and src != dst:
                await self.memories.restore_relation(
                    scope,
                    src,
                    dst,
                    cast(RelationKind, r["kind"]),
                    reason=str(r.get("reason") or "imported"),
                    changed_by=ACTOR,
                )
        for a in pack.get("aliases", []):
            try:
                await self.memories.add_alias(scope, str(a["alias"]), str(a["canonical"]))
            except YujiError:
                continue  # already the canonical name here
        now = self.clock.now()
        history: dict[str, list[tuple[str, str | None]]] = {}
        for c in sorted(pack.get("cards", []), key=lambda c: int(c.get("version", 0))):
            day = c.get("day")
            history.setdefault(str(c["kind"]), []).append(
                (str(c["content"]), None if day is None else str(day))
            )
        packs = self.packs
        for kind, versions in history.items():
            await packs.restore_cards(scope, kind, versions, now)
        for d in pack.get("diaries", []):
            await packs.restore_diary(scope, str(d["day"]), str(d["content"]), now)
        for t in pack.get("timeline", []):
            await packs.restore_timeline(scope, str(t["day"]), str(t["content"]), now)
