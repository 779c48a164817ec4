"""A store with rows in every table of the schema, written through the core where it
has a write path (the demo world, more messages, an edit) and through the storage
layer for the bookkeeping; and the rows of a store, table by table, to compare two."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import insert, select, text

from memory_core import NewExperience, Yuji
from memory_core.cli.demo_world import load_demo
from memory_core.storage.archive import message_index
from memory_core.storage.engine import Database
from memory_core.storage.porting.copy_repo import COPIED
from memory_core.storage.schema import (
    alert_log,
    carry_blocks,
    carry_choices,
    chat_departures,
    chat_state,
    console_audit,
    consolidation_batches,
    consolidation_cursors,
    followup_chats,
    followup_mutes,
    followups,
    forget_requests,
    fragments,
    image_descriptions,
    import_checkpoints,
    import_keys,
    llm_usage,
    memory_evidence,
    memory_vectors,
    message_vectors,
    nightly_runs,
    nightly_scopes,
    nightly_settled,
    people_progress,
    person_cards,
    redactions,
    vector_builds,
)

GROUP = "group:900001"
QUESTIONS = ("煤球是谁的猫", "大刘住在哪里", "阿珍不吃什么", "周六在哪里集合")


async def fill_every_table(core: Yuji, *, extra_messages: int = 60) -> None:
    """The demo world, more messages, a second version of a memory, and a row in each
    bookkeeping table (a forget request among them)."""
    await load_demo(core)
    now = core.clock.now()
    await core.archive.append_many(
        [
            NewExperience(GROUP, f"more-{i}", "20001", f"第 {i} 条：周末去西湖骑车", sent_at=now)
            for i in range(extra_messages)
        ]
    )
    first = (await core.memories.newest(GROUP, limit=1))[0]
    await core.memories.edit(
        GROUP, first.id, content=first.content + "（已确认）", reason="确认", changed_by="test"
    )
    said = await core.archive.append(
        NewExperience(GROUP, "leaver-1", "30009", "我要退群了", sent_at=now, sender_name="路人")
    )
    async with core.db.write() as conn:
        await _bookkeeping(conn, core, first.id, said)


async def _bookkeeping(conn: Any, core: Yuji, memory_id: int, experience_id: int) -> None:
    now = core.clock.now()
    scope = "group:777"
    await conn.execute(
        insert(consolidation_cursors),
        {"scope": scope, "delivered_id": 3, "acked_id": 2, "updated_at": now},
    )
    batch = (
        await conn.execute(
            insert(consolidation_batches).returning(consolidation_batches.c.id),
            {
                "scope": GROUP,
                "first_id": 1,
                "last_id": 5,
                "message_count": 5,
                "chars": 80,
                "state": "done",
                "outcome": "extracted",
                "token": "t-1",
                "created_at": now,
                "finished_at": now,
            },
        )
    ).scalar_one()
    fragment = (
        await conn.execute(
            insert(fragments).returning(fragments.c.id),
            {
                "batch_id": batch,
                "scope": GROUP,
                "summary": "大家约了周六骑车",
                "first_id": 1,
                "last_id": 5,
                "first_sent_at": now - timedelta(hours=1),
                "last_sent_at": now,
                "created_at": now,
            },
        )
    ).scalar_one()
    await conn.execute(
        insert(memory_evidence),
        {"memory_id": memory_id, "fragment_id": fragment, "role": "support", "created_at": now},
    )
    request = (
        await conn.execute(
            insert(forget_requests).returning(forget_requests.c.id),
            {
                "scope": GROUP,
                "user_id": "30009",
                "requested_by": "30009",
                "names": ["路人"],
                "state": "done",
                "created_at": now,
                "finished_at": now,
            },
        )
    ).scalar_one()
    await conn.execute(
        insert(redactions),
        {"request_id": request, "scope": GROUP, "experience_id": experience_id, "redacted_at": now},
    )
    await message_index.drop_messages(conn, [experience_id])  # as a redaction does
    day = f"{now:%Y-%m-%d}"
    rows: list[tuple[Any, dict[str, Any]]] = [
        (nightly_runs, {"scope": GROUP, "day": day, "step": "diary", "state": "done"}),
        (nightly_scopes, {"scope": scope, "updated_at": now}),
        (nightly_settled, {"memory_id": memory_id, "scope": GROUP, "day": day, "settled_at": now}),
        (chat_state, {"scope": scope, "settings": {"mute": False}, "updated_at": now}),
        (
            llm_usage,
            {
                "at": now,
                "job": "chat",
                "model": "m",
                "scope": GROUP,
                "latency_ms": 120,
                "prompt_tokens": 900,
                "completion_tokens": 40,
                "outcome": "ok",
            },
        ),
        (
            import_keys,
            {
                "scope": GROUP,
                "source": "facts",
                "key": "小林/猫",
                "memory_id": memory_id,
                "created_at": now,
            },
        ),
        (
            import_checkpoints,
            {
                "kind": "qq-txt",
                "source_key": "abc",
                "scope": GROUP,
                "position": 10,
                "counts": {"new": 10},
                "updated_at": now,
            },
        ),
        (
            message_vectors,
            {
                "experience_id": experience_id - 1,
                "scope": GROUP,
                "model": "fake",
                "vector": b"\x00\x01" * 8,
            },
        ),
        (
            console_audit,
            {
                "at": now,
                "address": "127.0.0.1",
                "via": "form",
                "action": "pin",
                "target": f"memory:{memory_id}",
            },
        ),
        (
            image_descriptions,
            {
                "sha256": "a" * 64,
                "status": "done",
                "description": "一只橘猫",
                "model": "v",
                "queued_at": now,
                "finished_at": now,
            },
        ),
        (alert_log, {"at": now, "key": "backup", "text": "备份失败", "recovered": True}),
        (
            followups,
            {
                "scope": GROUP,
                "memory_id": memory_id,
                "user_id": "20001",
                "state": "asked",
                "offers": 1,
                "offered_day": "2026-11-20",
                "asked_at": now,
                "sent_text": "周末骑车骑得怎么样？",
                "updated_at": now,
            },
        ),
        (
            followup_chats,
            {"scope": GROUP, "enabled": True, "changed_by": "20001", "updated_at": now},
        ),
        (followup_mutes, {"scope": GROUP, "user_id": "20002", "created_at": now}),
        (people_progress, {"job": "rebuild", "last_id": 3, "updated_at": now}),
        (
            carry_choices,
            {
                "platform": "qq",
                "user_id": "20001",
                "into_private": False,
                "into_groups": True,
                "updated_at": now,
            },
        ),
        (carry_blocks, {"scope": GROUP, "blocked_by": "20002", "created_at": now}),
        (chat_departures, {"scope": GROUP, "user_id": "30009", "left_at": now}),
        (
            person_cards,
            {
                "scope": GROUP,
                "user_id": "20001",
                "version": 1,
                "content": "周末爱去西湖骑车",
                "day": "2026-11-20",
                "created_at": now,
            },
        ),
        (
            memory_vectors,
            {
                "model": "fake",
                "memory_id": memory_id,
                "version": 1,
                "scope": GROUP,
                "subject": "小明",
                "text_sha": "b" * 64,
                "vector": b"\x00\x00\x80\x3f" * 4,
            },
        ),
        (
            vector_builds,
            {"model": "fake", "generation": 1, "fingerprint": "f", "dim": 4, "built_at": now},
        ),
    ]
    for table, values in rows:
        await conn.execute(insert(table), values)


async def derived(db: Database) -> tuple[int, list[int]]:
    """SQLite's full-text indexes: memories indexed, and the messages indexed."""
    async with db.read() as conn:
        memories = (await conn.execute(text("SELECT count(*) FROM memory_fts"))).scalar_one()
        messages = (await conn.execute(text("SELECT rowid FROM message_fts ORDER BY rowid"))).all()
    return memories, [row[0] for row in messages]


async def dump(db: Database) -> dict[str, list[tuple[Any, ...]]]:
    """Every row of every copied table, in one order on every backend (the engines
    order text keys by different collations)."""
    found: dict[str, list[tuple[Any, ...]]] = {}
    async with db.read() as conn:
        for table in COPIED:
            rows = [tuple(row) for row in (await conn.execute(select(table))).all()]
            found[table.name] = sorted(rows, key=repr)
    return found
