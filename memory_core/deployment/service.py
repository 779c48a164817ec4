"""`core.deployment`: this process among the bot processes sharing the store."""

from __future__ import annotations

import contextlib
import secrets
from datetime import datetime

from memory_core.clock import Clock
from memory_core.consolidation.owner import this_process
from memory_core.errors import StorageError
from memory_core.ops.alerts import AlertSink
from memory_core.storage import DeploymentRepo, leader_lock
from memory_core.storage.engine import Database

from .accounts import Accounts
from .leader import Leadership
from .wakes import WakeClaims


class Deployment:
    """Leadership, the accounts of every process, and wake claims; the chat service's
    `DeploymentPort`."""

    def __init__(self, db: Database, clock: Clock, alerts: AlertSink) -> None:
        repo = DeploymentRepo(db)
        self.accounts = Accounts(repo, clock)
        self.wakes = WakeClaims(repo, clock)
        self.leader = Leadership(
            leader_lock(db),
            repo,
            clock,
            alerts,
            # Two cores of one process (tests) are two holders.
            holder=f"{this_process()} #{secrets.token_hex(3)}",
            shared=db.is_postgres,
        )
        if db.is_postgres:

            async def reached(answered: bool) -> None:
                if answered:
                    db.note_up()
                    return
                # Only the lock's session may have died (killed on the server): ask the
                # server itself, which tells the outage alert when it is away.
                with contextlib.suppress(StorageError):
                    await db.ping()

            self.leader.on_reach = reached

    async def is_ours(self, sender_id: str) -> bool:
        return await self.accounts.is_ours(sender_id)

    async def claim(
        self, scope: str, sender_id: str, sent_at: datetime, text: str, account: str
    ) -> bool:
        return await self.wakes.claim(scope, sender_id, sent_at, text, account)

    async def aclose(self) -> None:
        await self.leader.aclose()
