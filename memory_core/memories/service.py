"""`core.memories`: the one write path into the memory network (docs/design.md#memories).

Every operation runs in one write transaction, refuses ids of another chat as
`NotFound`, records a version row for every change of text, metadata, status or
validity (history is never lost) and keeps the derived full-text index in step.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncGenerator, Awaitable, Callable, Collection, Iterable, Sequence
from contextlib import asynccontextmanager
from datetime import datetime
from typing import Any, get_args

from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.clock import Clock, as_utc
from memory_core.errors import EvidenceRequired, NotFound, ValidationError
from memory_core.people.names import canonical_subject
from memory_core.people.subjects import Said, resolve, wanted_names, word_of
from memory_core.settings import Settings
from memory_core.storage import ChatPerson, MemoryRepo, PeopleRepo
from memory_core.storage.engine import Database
from memory_core.tokenize import bigram_tokens
from memory_core.types import (
    EvidenceRef,
    Memory,
    MemoryStatus,
    MemoryType,
    MemoryVersion,
    RelationKind,
)

from . import gates
from .near_duplicate import WindowIndex
from .outcomes import NewMemory, SupersedeOutcome, WriteOutcome

log = logging.getLogger(__name__)

FORGET_ACTOR = "forget-person"
"""`changed_by` of the version that retracts a memory for a person's request to be
forgotten: every view (console, exports, /why) leaves such memories out, and no
status change brings them back."""

KEPT_KINDS = {"group": "group", "bot": "bot", "unresolved": "person"}
"""A memory's subject kind -> the kind stated when it is resolved again (a member no
one here answers to may become one who does, never a thing; a thing may become a
member once the index knows the name)."""

SearchFn = Callable[[str, str, int, datetime], Awaitable[list[Memory]]]


class Memories:
    def __init__(
        self,
        db: Database,
        clock: Clock,
        settings: Settings,
        *,
        repo: MemoryRepo,
        search: SearchFn | None = None,
        on_change: Callable[[str], None] | None = None,
    ) -> None:
        self._db = db
        self._repo = repo
        self._people = PeopleRepo(db)
        self._clock = clock
        self._settings = settings
        self._search = search
        self._on_change = on_change
        """Told the chat after every write transaction of this service (`_writing`):
        recall drops what it cached about the chat."""

    @asynccontextmanager
    async def _writing(self, scope: str) -> AsyncGenerator[AsyncConnection, None]:
        """A write transaction on `scope`'s memories; once it has committed, the chat is
        told (`on_change`), so recall never serves what it cached before the write."""
        async with self._db.write() as conn:
            yield conn
        if self._on_change is not None:
            self._on_change(scope)

    # --- writing ----------------------------------------------------------------------

    async def write(
        self,
        scope: str,
        *,
        type: MemoryType,
        subject: str,
        content: str,
        evidence: Sequence[EvidenceRef],
        importance: float = 0.5,
        confidence: float = 0.8,
        valid_from: datetime | None = None,
        valid_to: datetime | None = None,
        origin: str = "model",
        changed_by: str = "model",
        subject_id: str | None = None,
        subject_kind: str | None = None,
    ) -> WriteOutcome:
        """Insert a memory (never merges); returns it with any near-duplicate hint."""
        item = NewMemory(
            type=type,
            subject=subject,
            content=content,
            evidence=tuple(evidence),
            importance=importance,
            confidence=confidence,
            valid_from=valid_from,
            valid_to=valid_to,
            origin=origin,
            subject_id=subject_id,
            subject_kind=subject_kind,
        )
        return (await self.write_many(scope, [item], changed_by=changed_by))[0]

    async def write_many(
        self, scope: str, items: Sequence[NewMemory], *, changed_by: str = "model"
    ) -> list[WriteOutcome]:
        """`write` for many memories in one transaction (all or none), in order; a
        later item may be hinted as a near-duplicate of an earlier one."""
        now = self._clock.now()
        rows = [_validated(item, now) for item in items]
        if not rows:
            return []
        refs = [ref for item in items for ref in item.evidence]
        window = self._settings.near_duplicate_window
        threshold = self._settings.near_duplicate_threshold
        async with self._writing(scope) as conn:
            await self._require_evidence_in_scope(conn, scope, refs)
            alias_map = await self._repo.alias_map(scope, conn=conn)
            indexes: dict[str, WindowIndex] = {}
            for item in items:
                if item.type not in indexes:
                    index = indexes[item.type] = WindowIndex(window)
                    for memory_id, text in reversed(
                        await self._repo.recent_texts(scope, item.type, window, conn=conn)
                    ):
                        index.add(memory_id, text)
            people = await self._people.in_chat(scope, conn=conn)
            said = await self._said(conn, scope, refs)
            canonicals = [canonical_subject(row["subject"], alias_map) for row in rows]
            elsewhere = await self._elsewhere(
                conn,
                scope,
                [(i.subject, c) for i, c in zip(items, canonicals, strict=True)],
                people,
            )
            for row, item, canonical in zip(rows, items, canonicals, strict=True):
                whom = self._whom(
                    item.subject, canonical, item.evidence, said, people, item, elsewhere=elsewhere
                )
                row.update(
                    scope=scope,
                    subject=canonical,
                    status="active",
                    version=1,
                    created_at=now,
                    updated_at=now,
                    **whom,
                )
            ids = await self._repo.insert_memories(rows, conn=conn)
            hints: list[tuple[int, float] | None] = []
            for memory_id, item in zip(ids, items, strict=True):
                index = indexes[item.type]
                hints.append(index.best(item.content.strip(), threshold))
                index.add(memory_id, item.content.strip())
            written = await self._repo.get_many_ordered(scope, ids, conn=conn)
            await self._repo.insert_versions(
                written, changed_by=changed_by, reason="written", at=now, conn=conn
            )
            await self._repo.insert_evidence(
                [(mid, item.evidence) for mid, item in zip(ids, items, strict=True)], now, conn=conn
            )
            await self._repo.index(written, conn=conn)
            hinted = {
                memory.id: memory
                for memory in await self._repo.get_many(
                    scope, [h[0] for h in hints if h], conn=conn
                )
            }
        return [
            WriteOutcome(
                memory=memory,
                near_duplicate=hinted.get(hint[0]) if hint else None,
                similarity=hint[1] if hint else 0.0,
            )
            for memory, hint in zip(written, hints, strict=True)
        ]

    async def edit(
        self,
        scope: str,
        memory_id: int,
        *,
        content: str | None = None,
        subject: str | None = None,
        importance: float | None = None,
        confidence: float | None = None,
        valid_to: datetime | None = None,
        reason: str,
        changed_by: str,
        evidence: Sequence[EvidenceRef] = (),
    ) -> Memory:
        """A new version of the memory; the previous one stays in memory_versions."""
        if not reason.strip():
            raise ValidationError("an edit needs a reason")
        gates.check_evidence_shape(evidence)
        changes: dict[str, Any] = {}
        if content is not None:
            if not content.strip():
                raise ValidationError("memory content must not be empty")
            changes["content"] = content.strip()
        if importance is not None:
            _check_unit("importance", importance)
            changes["importance"] = importance
        if confidence is not None:
            _check_unit("confidence", confidence)
            changes["confidence"] = confidence
        if valid_to is not None:
            changes["valid_to"] = as_utc(valid_to)
        now = self._clock.now()
        async with self._writing(scope) as conn:
            old = await self._get(conn, scope, memory_id)
            if old.status == "retracted":
                raise ValidationError(f"memory #{memory_id} is retracted")
            await self._require_evidence_in_scope(conn, scope, evidence)
            if subject is not None:
                changes["subject"] = canonical_subject(
                    subject, await self._repo.alias_map(scope, conn=conn)
                )
            if subject is not None or evidence:
                changes.update(
                    await self._resolved(
                        conn, scope, old, subject or old.subject, changes.get("subject"), evidence
                    )
                )
            changes = {k: v for k, v in changes.items() if getattr(old, k) != v}
            if not changes and not evidence:
                raise ValidationError("the edit changes nothing")
            start = old.valid_from
            end = changes.get("valid_to")
            if end is not None and start is not None and end <= start:
                raise ValidationError("valid_to must be after valid_from")
            memory = await self._new_version(conn, old, changes, changed_by, reason, now)
            await self._repo.insert_evidence([(memory_id, evidence)], now, conn=conn)
        return memory

    async def supersede(
        self, scope: str, old_id: int, new_id: int, *, reason: str, changed_by: str
    ) -> SupersedeOutcome:
        """Close `old` in favour of `new` if all four gates pass, else mark a contradiction."""
        now = self._clock.now()
        async with self._writing(scope) as conn:
            old = await self._get(conn, scope, old_id)
            new = await self._get(conn, scope, new_id)
            failures = gates.supersede_failures(
                old,
                new,
                new_evidence=await self._repo.evidence_count(new_id, conn=conn),
                reason=reason,
                changed_by=changed_by,
            )
            if not failures:
                # docs/eval-format.md: the old memory ends where the new one begins.
                end = max(new.valid_from or now, old.valid_from or now)
                note = f"superseded by #{new_id}: {reason}"
                await self._new_version(conn, old, {"valid_to": end}, changed_by, note, now)
                await self._repo.add_relation(
                    scope, new_id, old_id, "supersedes", reason=reason, at=now, conn=conn
                )
            else:
                await self._contradiction(conn, scope, old_id, new_id, failures, reason, now)
        if not failures:
            return SupersedeOutcome(applied=True, detail=f"#{old_id} closed by #{new_id}")
        detail = "; ".join(failures)
        if old_id != new_id:
            detail = f"recorded as contradicts: {detail}"
        log.info("supersede #%s -> #%s in %s degraded: %s", old_id, new_id, scope, detail)
        return SupersedeOutcome(applied=False, detail=detail)

    async def _contradiction(
        self,
        conn: AsyncConnection,
        scope: str,
        old_id: int,
        new_id: int,
        failures: Sequence[str],
        reason: str,
        now: datetime,
    ) -> None:
        """A refused supersede, recorded as a contradiction (not for a memory and itself)."""
        if old_id == new_id:
            return
        await self._repo.add_relation(
            scope,
            new_id,
            old_id,
            "contradicts",
            reason=f"supersede refused ({'; '.join(failures)}): {reason}",
            at=now,
            conn=conn,
        )

    async def end_validity(
        self, scope: str, memory_id: int, at: datetime, *, reason: str, changed_by: str
    ) -> Memory:
        """Close the memory's validity at `at`, which may be its very start.

        `edit` refuses an empty interval; this is the one way to write it on purpose.
        `supersede` closes a corrected memory where it began (the new value holds from
        the same instant, so the old one never held), and a restored memory pack must
        be able to say that again.
        """
        if not reason.strip():
            raise ValidationError("closing a memory needs a reason")
        end = as_utc(at)
        now = self._clock.now()
        async with self._writing(scope) as conn:
            old = await self._get(conn, scope, memory_id)
            if old.valid_from is not None and end < old.valid_from:
                raise ValidationError("valid_to must not be before valid_from")
            return await self._new_version(conn, old, {"valid_to": end}, changed_by, reason, now)

    async def contradict(
        self, scope: str, a_id: int, b_id: int, *, reason: str, changed_by: str
    ) -> None:
        """Both stay active with no end time; recall shows them together."""
        await self._link(scope, a_id, b_id, "contradicts", reason=reason, changed_by=changed_by)

    async def relate(
        self,
        scope: str,
        src_id: int,
        dst_id: int,
        *,
        kind: str = "related",
        reason: str,
        changed_by: str,
    ) -> None:
        """A `supports` or `related` edge (graph recall follows these one hop)."""
        if kind not in ("supports", "related"):
            raise ValidationError(f"relate() records supports/related, not {kind!r}")
        link: RelationKind = "supports" if kind == "supports" else "related"
        await self._link(scope, src_id, dst_id, link, reason=reason, changed_by=changed_by)

    async def restore_relation(
        self,
        scope: str,
        src_id: int,
        dst_id: int,
        kind: RelationKind,
        *,
        reason: str,
        changed_by: str,
    ) -> None:
        """An edge as a memory pack recorded it (any kind; nothing is closed or
        changed by it: the memories already carry their restored validity)."""
        if kind not in get_args(RelationKind):
            raise ValidationError(f"unknown relation kind {kind!r}")
        await self._link(scope, src_id, dst_id, kind, reason=reason, changed_by=changed_by)

    async def _link(
        self,
        scope: str,
        src_id: int,
        dst_id: int,
        kind: RelationKind,
        *,
        reason: str,
        changed_by: str,
    ) -> None:
        """One edge between two memories of this chat (once; a contradiction once in
        either direction)."""
        if src_id == dst_id:
            raise ValidationError(f"a memory cannot be linked to itself ({kind})")
        now = self._clock.now()
        async with self._writing(scope) as conn:
            await self._get(conn, scope, src_id)
            await self._get(conn, scope, dst_id)
            if kind == "contradicts":
                edges = await self._repo.relations(scope, [src_id], ["contradicts"], conn=conn)
                if any({a, b} == {src_id, dst_id} for a, b, _ in edges):
                    return
            await self._repo.add_relation(
                scope, src_id, dst_id, kind, reason=f"{changed_by}: {reason}", at=now, conn=conn
            )

    async def retract(self, scope: str, memory_id: int, *, reason: str, changed_by: str) -> Memory:
        """Hide from recall for good; text, versions and evidence are kept."""
        return await self.set_status(
            scope, memory_id, "retracted", reason=reason, changed_by=changed_by
        )

    async def set_status(
        self, scope: str, memory_id: int, status: MemoryStatus, *, reason: str, changed_by: str
    ) -> Memory:
        if status not in get_args(MemoryStatus):
            raise ValidationError(f"unknown status {status!r}")
        if not reason.strip():
            raise ValidationError("a status change needs a reason")
        now = self._clock.now()
        async with self._writing(scope) as conn:
            old = await self._get(conn, scope, memory_id)
            if old.status == status:
                return old
            if await self._repo.changed_by(memory_id, FORGET_ACTOR, conn=conn):
                raise ValidationError(f"memory #{memory_id} was forgotten at a person's request")
            return await self._new_version(conn, old, {"status": status}, changed_by, reason, now)

    async def forget(self, scope: str, memory_id: int, *, reason: str) -> Memory:
        """Retract for a person's request to be forgotten: a version by FORGET_ACTOR
        (also when the memory was retracted already), after which it stays retracted."""
        now = self._clock.now()
        async with self._writing(scope) as conn:
            old = await self._get(conn, scope, memory_id)
            if await self._repo.changed_by(memory_id, FORGET_ACTOR, conn=conn):
                return old
            return await self._new_version(
                conn, old, {"status": "retracted"}, FORGET_ACTOR, reason, now
            )

    async def set_flags(
        self, scope: str, memory_id: int, *, pinned: bool | None = None, starred: bool | None = None
    ) -> Memory:
        """Pin (never goes cold) or star (ranks higher); bookkeeping, not a new version."""
        values = {k: v for k, v in (("pinned", pinned), ("starred", starred)) if v is not None}
        async with self._writing(scope) as conn:
            await self._get(conn, scope, memory_id)
            if values:
                await self._repo.update_memory(memory_id, values, conn=conn)
            return await self._get(conn, scope, memory_id)

    async def add_alias(self, scope: str, alias: str, canonical: str) -> None:
        """An explicit nickname mapping inside one chat (never guessed)."""
        alias, canonical = alias.strip(), canonical.strip()
        if not alias or not canonical:
            raise ValidationError("alias and canonical name must not be empty")
        now = self._clock.now()
        async with self._writing(scope) as conn:
            known = await self._repo.alias_map(scope, conn=conn)
            canonical = canonical_subject(canonical, known)
            if alias == canonical:
                raise ValidationError(f"{alias!r} already is the canonical name")
            await self._repo.upsert_alias(scope, alias, canonical, now, conn=conn)

    async def aliases(self, scope: str) -> dict[str, str]:
        return await self._repo.alias_map(scope)

    # --- reading ----------------------------------------------------------------------

    async def get(self, scope: str, memory_id: int) -> Memory:
        async with self._db.read() as conn:
            return await self._get(conn, scope, memory_id)

    async def get_many(self, scope: str, ids: Sequence[int]) -> list[Memory]:
        return await self._repo.get_many(scope, ids)

    async def search(
        self, scope: str, text: str, *, limit: int = 10, now: datetime | None = None
    ) -> list[Memory]:
        """The model's search tool: this chat's current memories sharing words with text,
        its plans dated ahead first (up to half of `limit`): a question never sees one
        before its day, but "四级不考了" must find the exam to retract or supersede it."""
        when = now or self._clock.now()
        wanted = set(bigram_tokens(text))
        ahead = await self._repo.word_matches(scope, wanted, when, limit=limit * 20, ahead=True)
        upcoming = _by_shared_words(ahead, wanted)[: max(1, limit // 2)]
        rest = limit - len(upcoming)
        if self._search is not None:
            current = await self._search(scope, text, rest, when) if rest else []
        else:
            found = await self._repo.word_matches(scope, wanted, when, limit=limit * 20)
            current = _by_shared_words(found, wanted)[:rest]
        return [*upcoming, *current]

    async def newest(
        self,
        scope: str,
        *,
        types: Sequence[MemoryType] | None = None,
        status: MemoryStatus | None = "active",
        limit: int = 100,
    ) -> list[Memory]:
        """This chat's memories, newest first; `status=None` lists every status."""
        return await self._repo.newest(scope, types=types, status=status, limit=limit)

    async def credit(self, scope: str, ids: Sequence[int], at: datetime) -> None:
        """A memory was actually used in a reply: hit_count + 1, last_accessed_at = at."""
        await self._repo.credit(scope, ids, as_utc(at))

    async def touch(self, scope: str, ids: Sequence[int], at: datetime) -> None:
        """Record an access without crediting a use (last_accessed_at only)."""
        await self._repo.touch(scope, ids, as_utc(at))

    async def evidence(self, scope: str, memory_id: int) -> list[EvidenceRef]:
        async with self._db.read() as conn:
            await self._get(conn, scope, memory_id)
            return await self._repo.evidence(memory_id, conn=conn)

    async def history(self, scope: str, memory_id: int) -> list[MemoryVersion]:
        """Every version of the memory, oldest first, with who changed it and why."""
        async with self._db.read() as conn:
            await self._get(conn, scope, memory_id)
            return await self._repo.history(memory_id, conn=conn)

    async def scopes(self) -> list[str]:
        """The chats that have memories."""
        return await self._repo.memory_scopes()

    async def status_lines(self, scope: str) -> dict[str, str]:
        """`/status`: how many of the chat's memories are about a subject no one of the
        chat answers to (`unresolved`), and how many were never resolved (a store from
        before the person index: `yuji people rebuild` resolves them)."""
        counts = await self._repo.subject_counts(scope)
        line = f"{counts.get('unresolved', 0)} 条"
        if counts.get(None):
            line += f"；另有 {counts[None]} 条还没认过（yuji people rebuild）"
        return {"认不出对象的记忆": line}

    async def _get(self, conn: AsyncConnection, scope: str, memory_id: int) -> Memory:
        memory = await self._repo.get(scope, memory_id, conn=conn)
        if memory is None:
            raise NotFound(f"memory #{memory_id} not found")
        return memory

    async def _require_evidence_in_scope(
        self, conn: AsyncConnection, scope: str, refs: Sequence[EvidenceRef]
    ) -> None:
        exps, mems, frags = await self._repo.existing_in_scope(scope, refs, conn=conn)
        for ref in refs:
            if ref.experience_id is not None and ref.experience_id not in exps:
                raise NotFound(f"experience #{ref.experience_id} not found")
            if ref.memory_id is not None and ref.memory_id not in mems:
                raise NotFound(f"memory #{ref.memory_id} not found")
            if ref.fragment_id is not None and ref.fragment_id not in frags:
                raise NotFound(f"fragment #{ref.fragment_id} not found")

    # --- whom a memory is about ---------------------------------------------------------

    async def resolve_subjects(
        self, scope: str, *, changed_by: str = "people", only_unresolved: bool = False
    ) -> dict[str, int]:
        """Resolve the subject of every memory of the chat (retracted ones apart) against
        its persons now; each one whose reading changes gets a new version. Returns how
        many memories each kind of subject has afterwards, and `changed`."""
        now = self._clock.now()
        counts: dict[str, int] = {"changed": 0}
        async with self._writing(scope) as conn:
            people = await self._people.in_chat(scope, conn=conn)
            held = [
                m
                for m in reversed(await self._repo.newest(scope, status=None, conn=conn))
                if m.status != "retracted"
            ]
            elsewhere = await self._elsewhere(
                conn, scope, [(m.subject, m.subject) for m in held], people
            )
            for old in held:
                if only_unresolved and old.subject_kind is not None:
                    counts[old.subject_kind] = counts.get(old.subject_kind, 0) + 1
                    continue
                changes = await self._resolved(
                    conn, scope, old, old.subject, None, (), people, elsewhere
                )
                changes = {k: v for k, v in changes.items() if getattr(old, k) != v}
                kind = changes.get("subject_kind", old.subject_kind) or "unresolved"
                counts[kind] = counts.get(kind, 0) + 1
                if changes:
                    await self._new_version(conn, old, changes, changed_by, "subject resolved", now)
                    counts["changed"] += 1
        return counts

    async def _resolved(
        self,
        conn: AsyncConnection,
        scope: str,
        old: Memory,
        written: str,
        canonical: str | None,
        added: Sequence[EvidenceRef],
        people: Sequence[ChatPerson] | None = None,
        elsewhere: Collection[str] | None = None,
    ) -> dict[str, Any]:
        """The subject columns of `old` read again (its subject as `written`, its
        evidence with `added`) against the chat's `people` (read when None) and the
        names persons go by in other chats (`elsewhere`, read when None)."""
        refs = [*await self._repo.evidence(old.id, conn=conn), *added]
        if people is None:
            people = await self._people.in_chat(scope, conn=conn)
        if elsewhere is None:
            elsewhere = await self._elsewhere(
                conn, scope, [(written, canonical or old.subject)], people
            )
        said = await self._said(conn, scope, refs)
        # Read again as it was written, what the writer said of it holds: the member
        # it was resolved to (by their id), or the kind of subject (a member no one
        # here answers to stays one: never a thing).
        kept = canonical is None
        hint = old.subject_person if kept and old.subject_kind == "person" else None
        kind = KEPT_KINDS.get(old.subject_kind or "") if kept else None
        return self._whom(
            written,
            canonical or old.subject,
            refs,
            said,
            people,
            None,
            hint,
            elsewhere=elsewhere,
            known_kind=kind,
        )

    async def _elsewhere(
        self,
        conn: AsyncConnection,
        scope: str,
        subjects: Iterable[tuple[str, str]],
        people: Sequence[ChatPerson],
    ) -> set[str]:
        """Which names of `subjects` (as written, canonical) no one of this chat goes by
        but someone in another chat does (resolve reads those as `unresolved`)."""
        here = {n.normalised for p in people for n in p.names}
        wanted = {n for written, canonical in subjects for n in wanted_names(written, canonical)}
        wanted -= here
        return await self._people.named_elsewhere(scope, wanted, conn=conn) if wanted else set()

    async def _said(
        self, conn: AsyncConnection, scope: str, refs: Sequence[EvidenceRef]
    ) -> dict[int, Said]:
        ids = [r.experience_id for r in refs if r.experience_id is not None]
        return {
            i: Said(*row) for i, row in (await self._repo.senders(scope, ids, conn=conn)).items()
        }

    def _whom(
        self,
        written: str,
        canonical: str,
        evidence: Sequence[EvidenceRef],
        said: dict[int, Said],
        people: Sequence[ChatPerson],
        item: NewMemory | None,
        known_person: str | None = None,
        *,
        elsewhere: Collection[str] = (),
        known_kind: str | None = None,
    ) -> dict[str, Any]:
        """subject_kind, subject_person and word of a memory (people/subjects.py)."""
        subject = resolve(
            written,
            people,
            canonical=canonical,
            subject_id=(item.subject_id if item is not None else None) or known_person,
            kind=(item.subject_kind if item is not None else None) or known_kind,
            bot_names=self._settings.nicknames,
            elsewhere=elsewhere,
        )
        person = subject.person if subject.kind == "person" else None
        messages = [said[r.experience_id] for r in evidence if r.experience_id in said]
        derived = any(r.experience_id is None for r in evidence)
        return {
            "subject_kind": subject.kind,
            "subject_person": person,
            "word": word_of(person, messages, derived),
        }

    async def _new_version(
        self,
        conn: AsyncConnection,
        old: Memory,
        changes: dict[str, Any],
        changed_by: str,
        reason: str,
        now: datetime,
    ) -> Memory:
        await self._repo.update_memory(
            old.id, {**changes, "version": old.version + 1, "updated_at": now}, conn=conn
        )
        memory = await self._get(conn, old.scope, old.id)
        await self._repo.insert_versions(
            [memory], changed_by=changed_by, reason=reason, at=now, conn=conn
        )
        if "content" in changes or "subject" in changes:
            await self._repo.reindex(memory, conn=conn)
        return memory


def _validated(item: NewMemory, now: datetime) -> dict[str, Any]:
    """The memories row of a new memory, or the reason it is refused."""
    if item.type not in get_args(MemoryType):
        raise ValidationError(f"unknown memory type {item.type!r}")
    content = item.content.strip()
    if not content:
        raise ValidationError("memory content must not be empty")
    _check_unit("importance", item.importance)
    _check_unit("confidence", item.confidence)
    if not item.evidence:
        raise EvidenceRequired("a memory needs at least one piece of evidence")
    gates.check_evidence_shape(item.evidence)
    start = as_utc(item.valid_from) if item.valid_from else now
    end = as_utc(item.valid_to) if item.valid_to else None
    if end is not None and end <= start:
        raise ValidationError("valid_to must be after valid_from")
    return {
        "type": item.type,
        "subject": item.subject,
        "content": content,
        "importance": item.importance,
        "confidence": item.confidence,
        "valid_from": start,
        "valid_to": end,
        "origin": item.origin,
    }


def _check_unit(name: str, value: float) -> None:
    if not 0.0 <= value <= 1.0:
        raise ValidationError(f"{name} must be between 0 and 1, got {value}")


def _by_shared_words(
    found: Sequence[tuple[Memory, frozenset[str]]], wanted: set[str]
) -> list[Memory]:
    """Most words shared with the search first, then the newest."""
    ranked = sorted(found, key=lambda f: (-len(wanted & f[1]), -f[0].id))
    return [memory for memory, _ in ranked]
