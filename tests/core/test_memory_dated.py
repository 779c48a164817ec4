"""The memories dated on a span of days (storage/memories/memory_dated.py), on every
backend: validity starting in it, a bounded validity overlapping it, or an evidence
message sent in it; inside the chat and the visibility rule."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from sqlalchemy import insert

from memory_core import Yuji
from memory_core.storage.schema import experiences, memories, memory_evidence

G1, G2 = "group:1", "group:2"
DAY = datetime(2026, 11, 14, 16, 0, tzinfo=UTC)  # Saturday 15 November in Shanghai
NEXT = DAY + timedelta(days=1)
NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
LONG_AGO = datetime(2026, 1, 1, tzinfo=UTC)


async def memory(
    core: Yuji,
    scope: str,
    content: str,
    valid_from: datetime,
    valid_to: datetime | None = None,
    *,
    said: datetime | None = None,
    said_in: str | None = None,
    status: str = "active",
) -> int:
    async with core.db.write() as conn:
        result = await conn.execute(
            insert(memories).values(
                scope=scope,
                type="event",
                subject="小明",
                content=content,
                status=status,
                valid_from=valid_from,
                valid_to=valid_to,
                created_at=LONG_AGO,
                updated_at=LONG_AGO,
            )
        )
        mid = int(result.inserted_primary_key[0])  # type: ignore[index]
        if said is not None:
            sent = await conn.execute(
                insert(experiences).values(
                    scope=said_in or scope,
                    fingerprint=f"fp-{mid}",
                    sender_id="1",
                    text=content,
                    segments=[],
                    sent_at=said,
                    received_at=said,
                    source="realtime",
                )
            )
            await conn.execute(
                insert(memory_evidence).values(
                    memory_id=mid,
                    experience_id=int(sent.inserted_primary_key[0]),  # type: ignore[index]
                    created_at=said,
                )
            )
        return mid


async def test_dated_by_validity_or_evidence_inside_the_chat(core: Yuji) -> None:
    started = await memory(core, G1, "started that day", DAY + timedelta(hours=3))
    told = await memory(
        core, G1, "told that day", LONG_AGO, said=DAY + timedelta(hours=23, minutes=50)
    )
    overlapped = await memory(
        core, G1, "a bounded state over it", LONG_AGO, DAY + timedelta(hours=2)
    )
    await memory(core, G1, "open since long ago", LONG_AGO)
    await memory(core, G1, "the day after", NEXT + timedelta(minutes=1), said=NEXT)
    retracted = await memory(core, G1, "retracted", DAY + timedelta(hours=1), status="retracted")
    await memory(core, G2, "another chat that day", DAY + timedelta(hours=4), said=DAY)
    repo = core.memory_repo

    now_ids = await repo.dated_candidates(G1, DAY, NEXT, NOW, with_past=False, limit=30)
    assert now_ids == [told, started]  # latest first; ended not visible
    past_ids = await repo.dated_candidates(G1, DAY, NEXT, NOW, with_past=True, limit=30)
    assert set(past_ids) == {told, started, overlapped}  # not the other chat's
    one = await repo.dated_candidates(G1, DAY, NEXT, NOW, with_past=True, limit=1)
    assert one == [told]

    # dated_among judges the date of candidates already seen visible, nothing else
    every = range(1, 100)
    assert await repo.dated_among(G1, every, DAY, NEXT) == {told, started, overlapped, retracted}
    assert await repo.dated_among(G1, [started], DAY, NEXT) == {started}
    assert await repo.dated_among(G1, [], DAY, NEXT) == frozenset()


async def test_a_memory_never_joins_another_chats_message(core: Yuji) -> None:
    # Evidence pointing at a message of another chat (never written so; if it were)
    # does not date the memory: the message's chat is checked too.
    crossed = await memory(core, G1, "crossed", LONG_AGO, said=DAY + timedelta(hours=1), said_in=G2)
    rows = await core.memory_repo.dated_candidates(G1, DAY, NEXT, NOW, with_past=True, limit=30)
    assert rows == []
    assert await core.memory_repo.dated_among(G1, [crossed], DAY, NEXT) == frozenset()
    assert (
        await core.memory_repo.dated_candidates(G2, DAY, NEXT, NOW, with_past=True, limit=30) == []
    )
