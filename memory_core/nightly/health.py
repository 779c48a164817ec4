"""A chat's nightly health after one run (pure): the failure streak, the retry time
and the circuit breaker (docs/design.md#nightly). The service reads the health, applies this and
saves the result in one write transaction (`NightlyHealthRepo.update`)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timedelta

from memory_core.storage import ScopeHealth


def next_health(
    health: ScopeHealth,
    failure: str | None,
    waiting: bool,
    now: datetime,
    *,
    max_failures: int,
    retry_after: timedelta,
) -> ScopeHealth:
    """After a run that failed (`failure`), waited for something (`waiting`: nothing
    counts), or succeeded (neither): a success closes the streak and the circuit; a
    failure lengthens the streak and either schedules a retry or opens the circuit."""
    if failure is None and not waiting:
        return ScopeHealth(health.scope, last_run_at=now, last_success_at=now, last_error=None)
    if failure is None:
        return replace(health, last_run_at=now)
    failures = health.consecutive_failures + 1
    opens = failures >= max_failures
    return replace(
        health,
        consecutive_failures=failures,
        circuit_open=opens,
        retry_at=None if opens else now + retry_after,
        last_error=failure[:2000],
        last_run_at=now,
    )
