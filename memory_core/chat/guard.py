"""The out-of-character guard: catch apologies, "as an AI", refusals and empty replies.

Patterns are the operator's (`Settings.ooc_patterns`, regular expressions). A pattern
that does not compile is logged and skipped rather than stopping the bot.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass

log = logging.getLogger("yuji.chat")


@dataclass(frozen=True, slots=True)
class GuardVerdict:
    ok: bool
    why: str = ""
    """The pattern that matched, or "empty"; for the log, never for the chat."""


class OutOfCharacterGuard:
    def __init__(self, patterns: Sequence[str]) -> None:
        self.patterns: list[re.Pattern[str]] = []
        for pattern in patterns:
            try:
                self.patterns.append(re.compile(pattern))
            except re.error as exc:
                log.warning("yuji: ignoring invalid ooc pattern %r: %s", pattern, exc)

    def check(self, reply: str) -> GuardVerdict:
        if not reply.strip():
            return GuardVerdict(ok=False, why="empty")
        for pattern in self.patterns:
            if pattern.search(reply):
                return GuardVerdict(ok=False, why=pattern.pattern)
        return GuardVerdict(ok=True)
