"""How much room the store takes, as `yuji stats` and the capacity check say it, on
every backend (PostgreSQL's store is no file in the data folder)."""

from __future__ import annotations

from memory_core import NewExperience, Yuji


async def test_stats_and_capacity_measure_the_store_on_every_backend(core: Yuji) -> None:
    empty = (await core.archive.stats()).database_bytes
    assert empty > 0  # the schema alone takes room
    await core.archive.append_many(
        [
            NewExperience(
                scope="group:1",
                fingerprint=str(i),
                sender_id="5",
                text="今天的鱼很好吃" * 50,
                sent_at=core.clock.now(),
            )
            for i in range(400)
        ]
    )
    assert (await core.archive.stats()).database_bytes > empty
    assert (await core.ops.sizes()).database == (await core.archive.stats()).database_bytes
