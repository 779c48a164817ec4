"""A nickname wake heard by two of the deployment's accounts is answered once.

The key is the archive's dedup key (chat, sender, sent_at, text), which both accounts
see alike (OneBot's `time` is the server's); the first process whose claim lands in
`wake_claims` answers, the other stays silent. An @ or a reply names one account, so
it needs no claim.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta

from memory_core.clock import Clock
from memory_core.storage import DeploymentRepo

CLAIMS_KEPT = timedelta(days=1)


def wake_key(scope: str, sender_id: str, sent_at: datetime, text: str) -> str:
    """The claim's key. Pure."""
    raw = "\x1f".join((scope, sender_id, str(int(sent_at.timestamp())), text))
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


class WakeClaims:
    def __init__(self, repo: DeploymentRepo, clock: Clock) -> None:
        self._repo = repo
        self._clock = clock

    async def claim(
        self, scope: str, sender_id: str, sent_at: datetime, text: str, account: str
    ) -> bool:
        """True when this process answers the wake (its claim came first)."""
        now = self._clock.now()
        return await self._repo.claim_wake(
            wake_key(scope, sender_id, sent_at, text),
            account,
            now,
            prune_before=now - CLAIMS_KEPT,
        )
