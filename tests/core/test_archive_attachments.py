"""Attachments: stored once by content, linked to every message, failures recorded,
and fetching never holds up archiving."""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sqlalchemy import text

from memory_core import AttachmentRef, FakeClock, FakeFetcher, FetchedFile, Settings, Yuji
from memory_core.archive import AttachmentStore
from memory_core.errors import AttachmentError
from memory_core.types import NewExperience

T0 = datetime(2026, 11, 20, 11, 0, tzinfo=UTC)
PNG = b"\x89PNG\r\n\x1a\n-cat"


@pytest.fixture
def fetcher() -> FakeFetcher:
    return FakeFetcher()


@pytest.fixture
async def core(settings: Settings, clock: FakeClock, fetcher: FakeFetcher) -> AsyncIterator[Yuji]:
    opened = await Yuji.open(settings, clock=clock, fetcher=fetcher)
    try:
        yield opened
    finally:
        await opened.close()


def with_images(fp: str, *urls: str, scope: str = "group:1") -> NewExperience:
    segments = [{"type": "text", "data": {"text": "看"}}] + [
        {"type": "image", "data": {"url": u}} for u in urls
    ]
    return NewExperience(
        scope=scope,
        fingerprint=fp,
        sender_id="7",
        text="看" + "[图片]" * len(urls),
        sent_at=T0,
        segments=segments,
        attachments=tuple(AttachmentRef(i + 1, u) for i, u in enumerate(urls)),
    )


async def test_same_bytes_from_two_messages_are_stored_once_and_linked_twice(
    core: Yuji, fetcher: FakeFetcher
) -> None:
    fetcher.files["https://a/1.png"] = FetchedFile(PNG, "image/png")
    fetcher.files["https://b/other-url.png"] = FetchedFile(PNG, "image/png")
    first = await core.archive.append(with_images("m1", "https://a/1.png"))
    second = await core.archive.append(
        with_images("m2", "https://b/other-url.png", scope="group:2")
    )
    await core.archive.wait_attachments()

    one = await core.archive.attachments_of("group:1", first)
    two = await core.archive.attachments_of("group:2", second)
    assert one[0].attachment.id == two[0].attachment.id
    sha = hashlib.sha256(PNG).hexdigest()
    assert one[0].attachment.sha256 == sha
    assert (one[0].attachment.status, one[0].attachment.size) == ("stored", len(PNG))
    path = core.settings.attachments_path / sha[:2] / sha[2:4] / sha
    assert path.read_bytes() == PNG
    files = [p for p in core.settings.attachments_path.rglob("*") if p.is_file()]
    assert files == [path]
    stats = await core.archive.stats()
    assert stats.counts.attachments == {"stored": 1}


async def test_a_failed_fetch_keeps_the_message_and_records_failed(
    core: Yuji, fetcher: FakeFetcher
) -> None:
    fetcher.files["https://x/bad.png"] = AttachmentError("not an image: text/html")
    experience_id = await core.archive.append(with_images("m1", "https://x/bad.png"))
    await core.archive.wait_attachments()
    assert (await core.archive.get("group:1", experience_id)).text == "看[图片]"
    (linked,) = await core.archive.attachments_of("group:1", experience_id)
    assert linked.attachment.status == "failed"
    assert linked.attachment.sha256 is None
    assert linked.attachment.error == "not an image: text/html"
    assert linked.segment_index == 1


async def test_an_unexpected_fetcher_crash_is_recorded_too(
    core: Yuji, fetcher: FakeFetcher
) -> None:
    fetcher.files["https://x/boom.png"] = ZeroDivisionError("boom")
    experience_id = await core.archive.append(with_images("m1", "https://x/boom.png"))
    await core.archive.wait_attachments()
    (linked,) = await core.archive.attachments_of("group:1", experience_id)
    assert linked.attachment.status == "failed"
    assert "ZeroDivisionError" in (linked.attachment.error or "")


async def test_archiving_does_not_wait_for_the_download(core: Yuji, fetcher: FakeFetcher) -> None:
    fetcher.files["https://slow/1.png"] = FetchedFile(PNG, "image/png")
    fetcher.gate = asyncio.Event()  # the network hangs until the test lets it go
    experience_id = await asyncio.wait_for(
        core.archive.append(with_images("m1", "https://slow/1.png")), 10
    )
    assert (await core.archive.get("group:1", experience_id)).fingerprint == "m1"
    assert await core.archive.attachments_of("group:1", experience_id) == []
    assert core.archive.attachments.pending == 1
    fetcher.gate.set()
    await core.archive.wait_attachments()
    (linked,) = await core.archive.attachments_of("group:1", experience_id)
    assert linked.attachment.status == "stored"


async def test_a_duplicate_message_is_not_fetched_again(core: Yuji, fetcher: FakeFetcher) -> None:
    fetcher.files["https://a/1.png"] = FetchedFile(PNG, "image/png")
    await core.archive.append(with_images("m1", "https://a/1.png"))
    await core.archive.append(with_images("m1", "https://a/1.png"))
    await core.archive.wait_attachments()
    assert fetcher.calls == ["https://a/1.png"]


async def test_close_cancels_pending_downloads_and_closes_the_fetcher(
    settings: Settings, clock: FakeClock
) -> None:
    fetcher = FakeFetcher({"https://a/1.png": FetchedFile(PNG, "image/png")})
    fetcher.gate = asyncio.Event()
    core = await Yuji.open(settings, clock=clock, fetcher=fetcher)
    await core.archive.append(with_images("m1", "https://a/1.png"))
    await core.close()
    assert fetcher.closed
    assert core.archive.attachments.pending == 0


@pytest.mark.parametrize(
    "name", ["../../etc/passwd", "/etc/passwd", "ABCDEF" * 10 + "abcd", "a" * 63, ""]
)
def test_the_store_accepts_only_its_own_digests_as_names(tmp_path: Path, name: str) -> None:
    with pytest.raises(ValueError, match="SHA-256"):
        AttachmentStore(tmp_path).path_for(name)


def test_the_store_names_files_by_content(tmp_path: Path) -> None:
    store = AttachmentStore(tmp_path)
    digest = store.put(b"hello")
    assert digest == hashlib.sha256(b"hello").hexdigest()
    assert store.put(b"hello") == digest
    assert store.path_for(digest).read_bytes() == b"hello"
    assert store.path_for(digest).is_relative_to(tmp_path)
    assert store.total_bytes() == 5


async def test_a_cleaned_file_seen_again_is_stored_again(core: Yuji, fetcher: FakeFetcher) -> None:
    fetcher.files["https://a/1.png"] = FetchedFile(PNG, "image/png")
    first = await core.archive.append(with_images("m1", "https://a/1.png"))
    await core.archive.wait_attachments()
    (linked,) = await core.archive.attachments_of("group:1", first)
    # What retention does after 90 days: the file goes, the row stays as `cleaned`.
    core.archive.store.path_for(linked.attachment.sha256 or "").unlink()
    async with core.db.write() as conn:
        await conn.execute(
            text("UPDATE attachments SET status = 'cleaned', cleaned_at = '2027-01-01'")
        )
    second = await core.archive.append(with_images("m2", "https://a/1.png"))
    await core.archive.wait_attachments()
    (again,) = await core.archive.attachments_of("group:1", second)
    assert again.attachment.id == linked.attachment.id
    assert again.attachment.status == "stored"
    assert again.attachment.cleaned_at is None
    assert core.archive.store.path_for(again.attachment.sha256 or "").read_bytes() == PNG
