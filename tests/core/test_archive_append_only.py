"""The archive is append-only in three places: API, repository, database triggers."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from sqlalchemy import text

from memory_core import Yuji
from memory_core.archive import ArchiveService
from memory_core.errors import AppendOnlyViolation
from memory_core.storage.archive.archive_repo import ArchiveRepo
from memory_core.types import NewExperience

T0 = datetime(2026, 11, 20, 11, 0, tzinfo=UTC)


def test_repository_and_service_offer_no_update_or_delete() -> None:
    for cls in (ArchiveRepo, ArchiveService):
        names = [n for n in dir(cls) if not n.startswith("_")]
        offending = [
            n for n in names if any(w in n for w in ("update", "delete", "remove", "edit", "set_"))
        ]
        assert offending == [], cls


async def _one(core: Yuji) -> int:
    return await core.archive.append(
        NewExperience("group:1", "m1", "42", "原话", sent_at=T0, segments=[])
    )


@pytest.mark.parametrize(
    "statement",
    [
        "UPDATE experiences SET text = 'rewritten' WHERE id = :id",
        "UPDATE experiences SET scope = 'group:2' WHERE id = :id",
        "DELETE FROM experiences WHERE id = :id",
    ],
)
async def test_raw_update_and_delete_are_refused_by_triggers(core: Yuji, statement: str) -> None:
    experience_id = await _one(core)
    with pytest.raises(AppendOnlyViolation, match="append-only"):
        async with core.db.write() as conn:
            await conn.execute(text(statement), {"id": experience_id})
    got = await core.archive.get("group:1", experience_id)
    assert got.text == "原话"
    assert got.scope == "group:1"


async def test_attachment_links_are_append_only_too(core: Yuji) -> None:
    experience_id = await _one(core)
    attachment_id = await core.archive.repo.record_failed_attachment(
        url="http://127.0.0.1/x.png", error="HTTP 404", at=T0
    )
    await core.archive.repo.link(experience_id, attachment_id, 0)
    with pytest.raises(AppendOnlyViolation, match="append-only"):
        async with core.db.write() as conn:
            await conn.execute(text("DELETE FROM experience_attachments"))
    assert len(await core.archive.attachments_of("group:1", experience_id)) == 1
