"""`YUJI_ATTACHMENTS_DIR`: processes with data folders of their own share one attachment
folder, and every reader and deleter of attachment files uses it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memory_core import FakeClock, NewExperience, Settings, Yuji
from memory_core.ops.capacity import measure
from memory_core.settings import settings_from_mapping

T0 = datetime(2026, 11, 20, 11, 0, tzinfo=UTC)
PNG = b"\x89PNG shared folder"


def test_unset_means_under_the_data_folder() -> None:
    settings = settings_from_mapping({"YUJI_DATA_DIR": "/srv/a"})
    assert settings.attachments_path == Path("/srv/a/attachments")
    assert settings.with_changes(data_dir=Path("/srv/b")).attachments_path == Path(
        "/srv/b/attachments"
    )


def test_the_variable_names_the_folder() -> None:
    settings = settings_from_mapping(
        {"YUJI_DATA_DIR": "/srv/a", "YUJI_ATTACHMENTS_DIR": "/mnt/shared/yuji"}
    )
    assert settings.attachments_path == Path("/mnt/shared/yuji")


@pytest.fixture
async def two_cores(
    tmp_path: Path, database_url: str, clock: FakeClock
) -> AsyncIterator[tuple[Yuji, Yuji, Path]]:
    """Two cores on one store (each backend), each with its own data folder, one
    attachment folder."""
    shared = tmp_path / "shared-attachments"
    cores = [
        await Yuji.open(
            Settings(
                data_dir=tmp_path / name,
                database_url=database_url,
                attachments_dir=str(shared),
                vector_mode="off",
            ),
            clock=clock,
        )
        for name in ("bot-a", "bot-b")
    ]
    try:
        yield cores[0], cores[1], shared
    finally:
        for core in cores:
            await core.close()


async def _archived_image(core: Yuji) -> str:
    experience_id = await core.archive.append(
        NewExperience("group:1", "m1", "42", "看[图片]", sent_at=T0, segments=[])
    )
    sha = core.archive.store.put(PNG)
    attachment = await core.archive.repo.record_attachment(
        sha256=sha, mime="image/png", size=len(PNG), url="http://127.0.0.1/x.png", at=T0
    )
    await core.archive.repo.link(experience_id, attachment, 0)
    return sha


async def test_one_process_stores_the_file_where_the_other_serves_and_measures_it(
    two_cores: tuple[Yuji, Yuji, Path],
) -> None:
    a, b, shared = two_cores
    sha = await _archived_image(a)
    path = shared / sha[:2] / sha[2:4] / sha
    assert path.read_bytes() == PNG
    assert not (a.settings.data_dir / "attachments").exists()
    assert await b.archive.stored_file(sha) == (path, "image/png")
    assert (await b.archive.stats()).attachment_bytes == len(PNG)
    assert measure(b.settings).attachments == len(PNG)


async def test_retention_in_one_process_deletes_from_the_shared_folder(
    two_cores: tuple[Yuji, Yuji, Path], clock: FakeClock
) -> None:
    a, b, shared = two_cores
    sha = await _archived_image(a)
    clock.set(T0 + timedelta(days=b.settings.attachment_retention_days + 1))
    assert (await b.ops.clean_attachments()).cleaned == 1
    assert not (shared / sha[:2] / sha[2:4] / sha).exists()


async def test_forgetting_a_person_deletes_their_image_from_the_shared_folder(
    two_cores: tuple[Yuji, Yuji, Path],
) -> None:
    a, b, shared = two_cores
    sha = await _archived_image(a)
    await b.porting.forget_person("group:1", "42", requested_by="cli")
    assert not (shared / sha[:2] / sha[2:4] / sha).exists()
