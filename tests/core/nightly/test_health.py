"""The nightly health after one run (pure)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from hypothesis import given
from hypothesis import strategies as st

from memory_core.nightly.health import next_health
from memory_core.storage.nightly.nightly_health_repo import ScopeHealth

NOW = datetime(2026, 11, 21, 4, 0, tzinfo=UTC)
RETRY = timedelta(hours=2)


@given(
    streak=st.integers(0, 20),
    was_open=st.booleans(),
    max_failures=st.integers(1, 10),
    failure=st.one_of(st.none(), st.text(min_size=0, max_size=3000)),
    waiting=st.booleans(),
)
def test_one_run_moves_the_streak_by_its_outcome(
    streak: int, was_open: bool, max_failures: int, failure: str | None, waiting: bool
) -> None:
    before = ScopeHealth("group:1", consecutive_failures=streak, circuit_open=was_open)
    after = next_health(before, failure, waiting, NOW, max_failures=max_failures, retry_after=RETRY)
    assert after.scope == before.scope
    assert after.last_run_at == NOW
    if failure is not None:
        assert after.consecutive_failures == streak + 1
        assert after.circuit_open == (streak + 1 >= max_failures)
        assert after.retry_at == (None if after.circuit_open else NOW + RETRY)
        assert after.last_error == failure[:2000]
    elif waiting:
        assert after == ScopeHealth(
            "group:1", consecutive_failures=streak, circuit_open=was_open, last_run_at=NOW
        )
    else:
        assert (after.consecutive_failures, after.circuit_open, after.retry_at) == (0, False, None)
        assert after.last_success_at == NOW
