"""SQL of the deployment: the bot processes sharing this store, their QQ accounts,
who answers a nickname wake, and which process holds the leader's role.

Every decision is one statement inside the single writer's transaction (an upsert,
an insert that ignores a taken key), so two processes asking at once get one answer.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

from sqlalchemy import delete, select
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.storage.repository import Repository, upsert
from memory_core.storage.schema import bot_accounts, leadership, wake_claims

LEADER_ROLE = "leader"


class DeploymentRepo(Repository):
    async def register(
        self,
        accounts: Iterable[str],
        *,
        host: str,
        pid: int,
        at: datetime,
        conn: AsyncConnection | None = None,
    ) -> None:
        """Record (or refresh) the accounts this process serves."""
        rows = [{"account": a, "host": host, "pid": pid, "last_seen": at} for a in accounts]
        if not rows:
            return
        a = bot_accounts.c
        async with self.writing(conn) as conn:
            statement = upsert(conn, bot_accounts)
            await conn.execute(
                statement.on_conflict_do_update(
                    index_elements=[a.account],
                    set_={
                        "host": statement.excluded.host,
                        "pid": statement.excluded.pid,
                        "last_seen": statement.excluded.last_seen,
                    },
                ),
                rows,
            )

    async def accounts(self, *, conn: AsyncConnection | None = None) -> frozenset[str]:
        async with self.reading(conn) as conn:
            rows = await conn.execute(select(bot_accounts.c.account))
            return frozenset(str(r[0]) for r in rows)

    async def claim_wake(
        self,
        key: str,
        account: str,
        at: datetime,
        *,
        prune_before: datetime,
        conn: AsyncConnection | None = None,
    ) -> bool:
        """True for the first claim of `key`, and for a later one by the same account
        (that account heard the same words twice: two messages, as the archive's dedup
        rule says); False for another account's."""
        w = wake_claims.c
        async with self.writing(conn) as conn:
            result = await conn.execute(
                upsert(conn, wake_claims)
                .values(key=key, account=account, claimed_at=at)
                .on_conflict_do_nothing(index_elements=[w.key])
                .returning(w.key)
            )
            won = result.first() is not None
            if not won:
                holder = await conn.scalar(select(w.account).where(w.key == key))
                won = holder == account
            await conn.execute(delete(wake_claims).where(w.claimed_at < prune_before))
            return won

    async def take_leadership(
        self, holder: str, at: datetime, *, conn: AsyncConnection | None = None
    ) -> str | None:
        """Write `holder` as the leader; the holder it replaces (None: none, or itself)."""
        ld = leadership.c
        async with self.writing(conn) as conn:
            before = await conn.scalar(select(ld.holder).where(ld.role == LEADER_ROLE))
            statement = upsert(conn, leadership)
            await conn.execute(
                statement.values(role=LEADER_ROLE, holder=holder, since=at).on_conflict_do_update(
                    index_elements=[ld.role],
                    set_={"holder": statement.excluded.holder, "since": statement.excluded.since},
                )
            )
        return None if before is None or before == holder else str(before)

    async def leave_leadership(self, holder: str, *, conn: AsyncConnection | None = None) -> None:
        """A clean stop: the next leader takes over from nobody (no alert)."""
        ld = leadership.c
        async with self.writing(conn) as conn:
            await conn.execute(
                delete(leadership).where(ld.role == LEADER_ROLE, ld.holder == holder)
            )
