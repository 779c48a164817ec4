"""What each chat is called: `chat_names`, written from what the QQ client says (its
group list at each connect and backfill, a group's rename) and from the title each
Telegram update carries, read by the console.

A private chat (of any platform) nobody named is called by the nickname its person last
sent a message under (the archive's `sender_name`), read newest first along the
(scope, id) index, so a name costs one short index walk per private chat.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from datetime import datetime

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage.repository import Repository, upsert
from memory_core.storage.schema import chat_names, experiences
from memory_core.types import is_group_scope

MAX_NAME = 200
"""Longer names are cut: a group name is at most 60 characters in QQ; the rest is noise."""


class ChatNames(Repository):
    async def name(
        self, names: Mapping[str, str], now: datetime, *, conn: AsyncConnection | None = None
    ) -> int:
        """Record what the client calls these chats; blank names are left out (a
        client answering an empty name keeps the one known). Returns how many changed."""
        clean = {s: n.strip()[:MAX_NAME] for s, n in names.items() if n and n.strip()}
        if not clean:
            return 0
        async with self.writing(conn) as conn:
            known = await self._stored(conn, clean)
            changed = {s: n for s, n in clean.items() if known.get(s) != n}
            for scope, name in sorted(changed.items()):
                await conn.execute(
                    upsert(conn, chat_names)
                    .values(scope=scope, name=name, updated_at=now)
                    .on_conflict_do_update(
                        index_elements=[chat_names.c.scope],
                        set_={"name": name, "updated_at": now},
                    )
                )
        return len(changed)

    async def names(
        self, scopes: Collection[str], *, conn: AsyncConnection | None = None
    ) -> dict[str, str]:
        """scope -> name for those of `scopes` that have one."""
        async with self.reading(conn) as conn:
            found = await self._stored(conn, scopes)
            for scope in sorted(s for s in scopes if not is_group_scope(s) and s not in found):
                e = experiences.c
                nickname = await conn.scalar(
                    select(e.sender_name)
                    .where(e.scope == scope, e.is_bot.is_(False), e.sender_name != "")
                    .order_by(e.id.desc())
                    .limit(1)
                )
                if nickname:
                    found[scope] = str(nickname)
        return found

    @staticmethod
    async def _stored(conn: AsyncConnection, scopes: Collection[str]) -> dict[str, str]:
        if not scopes:
            return {}
        c = chat_names.c
        rows = (await conn.execute(select(c.scope, c.name).where(c.scope.in_(list(scopes))))).all()
        return {str(r.scope): str(r.name) for r in rows}
