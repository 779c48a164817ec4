"""The deployment's QQ accounts: each process records the accounts it serves in
`bot_accounts` (and refreshes them), so every process knows all of them. A message
one of them sent is the bot's own whichever account heard it: the archive writer
marks it so in SQL, and the wake rules never answer it.
"""

from __future__ import annotations

import os
import socket
import time

from memory_core.clock import Clock
from memory_core.storage import DeploymentRepo

RELOAD_S = 5.0
"""An unknown sender re-reads the table at most this often (a new account elsewhere)."""


class Accounts:
    def __init__(self, repo: DeploymentRepo, clock: Clock) -> None:
        self._repo = repo
        self._clock = clock
        self.mine: set[str] = set()
        """The accounts connected to this process."""
        self.known: frozenset[str] = frozenset()
        """Every account of the deployment, as last read."""
        self._read_at = float("-inf")

    async def connected(self, account: str) -> None:
        """An account connected to this process: record it now."""
        self.mine.add(account)
        await self.refresh()

    async def refresh(self) -> None:
        """Say again which accounts this process serves, and read everyone's."""
        await self._repo.register(
            sorted(self.mine), host=socket.gethostname(), pid=os.getpid(), at=self._clock.now()
        )
        await self._reload()

    async def is_ours(self, sender_id: str) -> bool:
        """Whether `sender_id` is one of the deployment's accounts."""
        if sender_id in self.known or sender_id in self.mine:
            return True
        if time.monotonic() - self._read_at >= RELOAD_S:
            await self._reload()
        return sender_id in self.known

    async def _reload(self) -> None:
        self.known = await self._repo.accounts()
        self._read_at = time.monotonic()
