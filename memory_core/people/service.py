"""`core.people`: the person index, filled as messages are archived and rebuilt from
the archive, read by name, by person and by chat.

Filling it never costs a message: the archive writer calls `index` inside its own
transaction with the rows it just inserted (two statements per batch); when the index
refuses them, `index` logs it and says so, and the writer rolls that transaction back
and writes the batch again without the index (memory_core/archive/service.py): the
messages commit, the rebuild fills the gap. (A savepoint would spare that second write
on a failure, but cost two more round trips on every batch.)

`rebuild` walks the archive in id order from where it stopped (`people_progress`),
each batch read, indexed and marked done in one transaction, so an interrupted run
continues where it stopped and a message is never indexed halfway; then it folds the
aliases table in. Every merge is order-free (observe.py), so what it writes over the
index the writer filled is the same index.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.clock import Clock
from memory_core.log_throttle import LogThrottle, repeats
from memory_core.storage import ChatPerson, Heard, PeopleRepo, Person, PersonName
from memory_core.storage.engine import Database

from .aliases import fold_aliases
from .names import normalised_name
from .observe import observe

log = logging.getLogger("yuji.people")

REBUILD_BATCH = 2000
"""Messages per rebuild transaction (each holds the store's write turn a few ms)."""


@dataclass(frozen=True, slots=True)
class RebuildReport:
    started_after: int
    """The archive id the run started after (0: from the beginning)."""
    last_id: int
    """The last archive id indexed so far."""
    end: int
    """The archive's highest id when the run began: the walk's end."""
    messages: int
    batches: int
    aliases: int
    """Alias names folded in (0 until the walk is complete)."""
    persons: int
    names: int
    """The index's totals afterwards."""

    @property
    def complete(self) -> bool:
        return self.last_id >= self.end


class People:
    def __init__(self, db: Database, clock: Clock) -> None:
        self.db = db
        self.clock = clock
        self.repo = PeopleRepo(db)
        self.failures = 0
        """Batches whose indexing failed in the writer (their messages are archived)."""
        self._failed_log = LogThrottle(60.0)

    # --- filling --------------------------------------------------------------------

    async def index(self, heard: Sequence[Heard], *, conn: AsyncConnection) -> bool:
        """Index what the archive writer just inserted, in its transaction. False (and
        one throttled line) when the index refused it: the transaction may then not be
        committed as it is (PostgreSQL has ended it), and the caller writes its rows
        again without the index."""
        if not heard:
            return True
        seen = observe(heard)
        try:
            await self.repo.record(seen.persons, seen.names, conn=conn)
        except Exception as exc:  # the messages must commit whatever the index does
            self.failures += 1
            held = self._failed_log.allow(type(exc).__name__)
            if held is not None:
                log.warning(
                    "person index: %d archived messages (ids %d-%d) not indexed (%s: %s); "
                    "`yuji people rebuild` indexes them%s",
                    len(heard),
                    min(h.id for h in heard),
                    max(h.id for h in heard),
                    type(exc).__name__,
                    exc,
                    repeats(held),
                )
            return False
        return True

    async def rebuild(
        self,
        *,
        batch: int = REBUILD_BATCH,
        from_start: bool = False,
        max_batches: int | None = None,
        on_batch: Callable[[RebuildReport], None] | None = None,
    ) -> RebuildReport:
        """Index the archive from where the last run stopped up to its end now, then
        fold the aliases in. `from_start`: empty the index first. `max_batches`: stop
        after that many (the next run continues)."""
        if from_start:
            await self.repo.clear()
        started = after = await self.repo.progress()
        end = await self.repo.archive_end()
        messages = batches = 0
        while after < end and (max_batches is None or batches < max_batches):
            async with self.db.write() as conn:
                heard = await self.repo.heard_after(after, max(1, batch), conn=conn)
                if not heard:
                    break
                seen = observe(heard)
                await self.repo.record(seen.persons, seen.names, conn=conn)
                await self.repo.advance(heard[-1].id, self.clock.now(), conn=conn)
            after = heard[-1].id
            messages += len(heard)
            batches += 1
            if on_batch is not None:
                on_batch(RebuildReport(started, after, end, messages, batches, 0, 0, 0))
        folded = await self._fold_aliases() if after >= end else 0
        persons, names = await self.repo.counts()
        return RebuildReport(started, after, end, messages, batches, folded, persons, names)

    async def _fold_aliases(self) -> int:
        async with self.db.write() as conn:
            rows = await self.repo.aliases(conn=conn)
            chats = {s: await self.repo.in_chat(s, conn=conn) for s in {r.scope for r in rows}}
            seen = fold_aliases(rows, chats)
            await self.repo.record((), seen.names, conn=conn)
        return len(seen.names)

    # --- reading --------------------------------------------------------------------

    async def who(self, scope: str, name: str) -> list[Person]:
        """The persons who answer to `name` in this chat (any spelling of it: width,
        case, spaces, a leading @), the one seen last first."""
        wanted = normalised_name(name)
        return await self.repo.who(scope, wanted) if wanted else []

    async def names_of(self, scope: str, person: Person | int) -> list[PersonName]:
        """Every name the person went by in this chat, latest first."""
        return await self.repo.names_of(scope, person if isinstance(person, int) else person.id)

    async def person_of(self, platform: str, user_id: str) -> Person | None:
        return await self.repo.person_of(platform, user_id)

    async def bots(self) -> list[Person]:
        return await self.repo.bots()

    async def in_chat(self, scope: str) -> list[ChatPerson]:
        """Everyone with a name in this chat and their names there, latest first."""
        return await self.repo.in_chat(scope)

    async def progress(self) -> tuple[int, int]:
        """(the last archive id the rebuild indexed, the archive's highest id)."""
        return await self.repo.progress(), await self.repo.archive_end()
