"""HttpxFetcher against a real HTTP server on 127.0.0.1: hostile and broken answers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from memory_core import AttachmentRef, FakeClock, HttpxFetcher, Settings, Yuji
from memory_core.errors import AttachmentError
from memory_core.types import NewExperience
from tests.fakes.file_server import FileServer, file_server

__all__ = ["file_server"]

PNG = b"\x89PNG\r\n\x1a\n" + b"\1" * 100


@pytest.fixture
async def fetcher() -> AsyncIterator[HttpxFetcher]:
    f = HttpxFetcher(max_bytes=1024, timeout_s=1.0)
    try:
        yield f
    finally:
        await f.aclose()


async def test_an_image_is_fetched(fetcher: HttpxFetcher, file_server: FileServer) -> None:
    url = file_server.add("/a.png", PNG, content_type="image/png; charset=binary")
    got = await fetcher.fetch(url)
    assert got.data == PNG
    assert got.mime == "image/png"


async def test_oversize_by_content_length_is_refused(
    fetcher: HttpxFetcher, file_server: FileServer
) -> None:
    url = file_server.add("/big.png", size=4096)
    with pytest.raises(AttachmentError, match="too large"):
        await fetcher.fetch(url)


async def test_oversize_without_content_length_is_cut_off_while_streaming(
    fetcher: HttpxFetcher, file_server: FileServer
) -> None:
    url = file_server.add("/big.png", size=200_000, send_length=False)
    with pytest.raises(AttachmentError, match="too large"):
        await fetcher.fetch(url)


@pytest.mark.parametrize("content_type", ["text/html", "application/octet-stream", ""])
async def test_a_non_image_is_refused(
    fetcher: HttpxFetcher, file_server: FileServer, content_type: str
) -> None:
    url = file_server.add("/x.png", b"<html>", content_type=content_type)
    with pytest.raises(AttachmentError, match="not an image"):
        await fetcher.fetch(url)


async def test_a_slow_server_times_out(fetcher: HttpxFetcher, file_server: FileServer) -> None:
    url = file_server.add("/slow.png", PNG, delay_s=3)
    with pytest.raises(AttachmentError, match="timed out"):
        await fetcher.fetch(url)


async def test_a_dripping_body_hits_the_total_deadline(
    fetcher: HttpxFetcher, file_server: FileServer
) -> None:
    # Each chunk arrives well within a read timeout, but the whole never ends in time.
    url = file_server.add("/drip.png", b"\1" * 1000, drip_s=0.2)
    with pytest.raises(AttachmentError, match="timed out"):
        await fetcher.fetch(url)


async def test_http_errors_and_dead_ports_are_attachment_errors(
    fetcher: HttpxFetcher, file_server: FileServer
) -> None:
    with pytest.raises(AttachmentError, match="HTTP 404"):
        await fetcher.fetch(file_server.url("/missing.png"))
    with pytest.raises(AttachmentError, match="transport error"):
        await fetcher.fetch("http://127.0.0.1:1/x.png")


@pytest.mark.parametrize(
    "url", ["file:///etc/passwd", "ftp://127.0.0.1/x.png", "base64://AAAA", "../../x.png"]
)
async def test_only_http_urls_are_fetched(
    fetcher: HttpxFetcher, file_server: FileServer, url: str
) -> None:
    with pytest.raises(AttachmentError, match="only http"):
        await fetcher.fetch(url)
    assert file_server.requests == []


async def test_through_the_service_a_hostile_file_is_failed_and_the_message_kept(
    settings: Settings, clock: FakeClock, file_server: FileServer
) -> None:
    urls = [
        file_server.add("/ok.png", PNG),
        file_server.add("/huge.png", size=50_000),
        file_server.add("/page.png", b"<html>", content_type="text/html"),
    ]
    core = await Yuji.open(
        settings, clock=clock, fetcher=HttpxFetcher(max_bytes=1024, timeout_s=2.0)
    )
    try:
        experience_id = await core.archive.append(
            NewExperience(
                scope="group:1",
                fingerprint="m1",
                sender_id="1",
                text="[图片][图片][图片]",
                sent_at=datetime(2026, 11, 20, tzinfo=UTC),
                segments=[{"type": "image", "data": {"url": u}} for u in urls],
                attachments=tuple(AttachmentRef(i, u) for i, u in enumerate(urls)),
            )
        )
        await core.archive.wait_attachments()
        linked = await core.archive.attachments_of("group:1", experience_id)
        assert [(a.segment_index, a.attachment.status) for a in linked] == [
            (0, "stored"),
            (1, "failed"),
            (2, "failed"),
        ]
        assert (await core.archive.get("group:1", experience_id)).text == "[图片][图片][图片]"
    finally:
        await core.close()
