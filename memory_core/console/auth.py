"""Who gets into the web console: the token, login throttling and sessions.

Pure bookkeeping with an injected monotonic clock (seconds): no web framework here.
The plugin's routes ask these objects; a session is a random id kept in memory (a
restart logs everyone out) with its own CSRF token.
"""

from __future__ import annotations

import hmac
import secrets
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

SESSION_TTL_S = 12 * 3600
FAILED_LOGINS_ALLOWED = 5
FAILED_LOGIN_WINDOW_S = 300.0


def token_matches(given: str, expected: str) -> bool:
    """Constant-time comparison; an empty expected token matches nothing."""
    if not expected:
        return False
    return hmac.compare_digest(given.encode("utf-8"), expected.encode("utf-8"))


@dataclass
class LoginThrottle:
    """At most `allowed` failed logins per address in `window_s`; then refuse until the
    oldest failure ages out (a success does not reset the count)."""

    allowed: int = FAILED_LOGINS_ALLOWED
    window_s: float = FAILED_LOGIN_WINDOW_S
    now: Callable[[], float] = time.monotonic
    _failures: dict[str, deque[float]] = field(default_factory=dict[str, "deque[float]"])

    def _recent(self, address: str) -> deque[float]:
        seen = self._failures.setdefault(address, deque())
        horizon = self.now() - self.window_s
        while seen and seen[0] <= horizon:
            seen.popleft()
        return seen

    def blocked_for(self, address: str) -> float:
        """Seconds until this address may try again (0: it may try now)."""
        seen = self._recent(address)
        if len(seen) < self.allowed:
            return 0.0
        return max(seen[0] + self.window_s - self.now(), 0.0)

    def failed(self, address: str) -> None:
        self._recent(address).append(self.now())
        if len(self._failures) > 10_000:  # an address flood must not grow memory forever
            self._failures = {a: q for a, q in self._failures.items() if q}


@dataclass(frozen=True, slots=True)
class Session:
    id: str
    csrf: str
    expires: float


@dataclass
class Sessions:
    ttl_s: float = SESSION_TTL_S
    now: Callable[[], float] = time.monotonic
    _by_id: dict[str, Session] = field(default_factory=dict[str, Session])

    def open(self) -> Session:
        session = Session(
            secrets.token_urlsafe(32), secrets.token_urlsafe(32), self.now() + self.ttl_s
        )
        self._by_id = {k: s for k, s in self._by_id.items() if s.expires > self.now()}
        self._by_id[session.id] = session
        return session

    def get(self, session_id: str) -> Session | None:
        session = self._by_id.get(session_id)
        if session is None or session.expires <= self.now():
            return None
        return session

    def close(self, session_id: str) -> None:
        self._by_id.pop(session_id, None)


def csrf_matches(session: Session, given: str) -> bool:
    return bool(given) and hmac.compare_digest(session.csrf.encode(), given.encode())
