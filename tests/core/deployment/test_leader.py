"""Leadership: on PostgreSQL exactly one of the cores on a database leads, and a
leader whose lock connection dies hands over to another at its next step; on SQLite
the one core leads."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from sqlalchemy import text

from memory_core import FakeClock, RecordingAlertSink, Settings, Yuji
from memory_core.deployment.leader import TAKEOVER_ALERT_KEY
from memory_core.storage.deployment.leader_lock import LEADER_LOCK


@pytest.fixture
async def pair(
    settings: Settings, clock: FakeClock, tmp_path: Path
) -> AsyncIterator[tuple[Yuji, Yuji, RecordingAlertSink, RecordingAlertSink]]:
    sinks = RecordingAlertSink(), RecordingAlertSink()
    first = await Yuji.open(settings, clock=clock, alert_sink=sinks[0])
    other = Settings(data_dir=tmp_path / "other", database_url=settings.database_url)
    second = await Yuji.open(other, clock=clock, alert_sink=sinks[1])
    try:
        yield first, second, *sinks
    finally:
        await first.close()
        await second.close()


async def _kill_lock_connection(core: Yuji) -> None:
    """What a SIGKILL of the leader does to its session: the server ends it."""
    async with core.db.write() as conn:
        await conn.execute(
            text(
                "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory'"
                " AND objid = :key AND granted"
            ),
            {"key": LEADER_LOCK},
        )


async def _leads_soon(core: Yuji) -> bool:
    """A terminated backend lets go of its locks as it exits, a moment later."""
    for _ in range(50):
        if await core.deployment.leader.step():
            return True
        await asyncio.sleep(0.1)
    return False


@pytest.mark.sqlite_only("PostgreSQL's cases are below")
async def test_one_sqlite_core_leads(core: Yuji) -> None:
    assert await core.deployment.leader.step()
    assert core.deployment.leader.term == 1


@pytest.mark.pg_only("one process per SQLite file: it always leads")
async def test_exactly_one_leads_and_a_dead_leader_hands_over(
    pair: tuple[Yuji, Yuji, RecordingAlertSink, RecordingAlertSink],
) -> None:
    first, second, first_sink, second_sink = pair
    lost: list[str] = []

    async def on_lose() -> None:
        lost.append("first")

    first.deployment.leader.on_lose.append(on_lose)
    assert await first.deployment.leader.step()
    assert not await second.deployment.leader.step()
    assert await first.deployment.leader.step()  # keeps it
    assert not await second.deployment.leader.step()

    await _kill_lock_connection(first)
    assert await _leads_soon(second)
    assert not await first.deployment.leader.step()
    assert lost == ["first"]
    # One alert, from the new leader only.
    assert [k for k, _ in second_sink.fired] == [TAKEOVER_ALERT_KEY]
    assert first_sink.fired == []
    # The old leader stays a follower while the new one holds the lock.
    assert not await first.deployment.leader.step()


@pytest.mark.pg_only("one process per SQLite file: it always leads")
async def test_a_clean_stop_hands_over_without_an_alert(
    pair: tuple[Yuji, Yuji, RecordingAlertSink, RecordingAlertSink],
) -> None:
    first, second, _, second_sink = pair
    assert await first.deployment.leader.step()
    await first.deployment.leader.aclose()
    assert await second.deployment.leader.step()
    assert second_sink.fired == []


@pytest.mark.pg_only("one process per SQLite file: it always speaks")
async def test_the_process_that_led_last_speaks_for_the_deployment(
    pair: tuple[Yuji, Yuji, RecordingAlertSink, RecordingAlertSink],
) -> None:
    first, second, _, _ = pair
    assert await first.deployment.leader.step()
    assert not await second.deployment.leader.step()
    assert first.deployment.leader.speaks_for_deployment()
    assert not second.deployment.leader.speaks_for_deployment()
    await _kill_lock_connection(first)
    assert await _leads_soon(second)
    assert not await first.deployment.leader.step()  # its session died: it cannot tell
    assert first.deployment.leader.speaks_for_deployment()
    assert not await first.deployment.leader.step()  # the server answers: another leads
    assert not first.deployment.leader.speaks_for_deployment()
    assert second.deployment.leader.speaks_for_deployment()
