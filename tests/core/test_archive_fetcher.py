"""HttpxFetcher against a real HTTP server on 127.0.0.1: hostile and broken answers."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime

import pytest

from memory_core import AttachmentRef, FakeClock, HttpxFetcher, Settings, Yuji
from memory_core.archive.fetcher import address_refusal
from memory_core.errors import AttachmentError
from memory_core.types import NewExperience
from tests.fakes.file_server import FileServer, file_server

__all__ = ["file_server"]

PNG = b"\x89PNG\r\n\x1a\n" + b"\1" * 100


@pytest.fixture
async def fetcher() -> AsyncIterator[HttpxFetcher]:
    # The file server is on loopback, as a QQ client serving its own images would be.
    f = HttpxFetcher(max_bytes=1024, timeout_s=1.0, allow_loopback=True)
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
        settings,
        clock=clock,
        fetcher=HttpxFetcher(max_bytes=1024, timeout_s=2.0, allow_loopback=True),
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


# --- where a fetch may go --------------------------------------------------------------


async def test_loopback_is_refused_unless_the_client_serves_images_on_this_host(
    file_server: FileServer,
) -> None:
    url = file_server.add("/a.png", PNG)
    fetcher = HttpxFetcher(max_bytes=1024, timeout_s=1.0)
    try:
        for each in (
            url,
            url.replace("127.0.0.1", "localhost"),  # a name: its resolved address counts
            url.replace("127.0.0.1", "[::ffff:127.0.0.1]"),
            url.replace("127.0.0.1", "127.0.0.2"),
        ):
            with pytest.raises(AttachmentError, match=r"refused: .* is a loopback address"):
                await fetcher.fetch(each)
    finally:
        await fetcher.aclose()
    assert file_server.requests == []


@pytest.mark.parametrize(
    ("target", "kind"),
    [
        ("http://169.254.169.254/latest/meta-data", "link-local"),
        ("http://10.1.2.3/x.png", "private"),
        ("http://192.168.1.1:8080/x.png", "private"),
        ("http://[fe80::1]/x.png", "link-local"),
    ],
)
async def test_a_redirect_into_a_private_range_is_refused(
    fetcher: HttpxFetcher, file_server: FileServer, target: str, kind: str
) -> None:
    file_server.add("/a.png", PNG)
    url = file_server.redirect("/r.png", target)
    strict = HttpxFetcher(max_bytes=1024, timeout_s=1.0, allow_loopback=True)
    try:
        with pytest.raises(AttachmentError, match=rf"refused: .* is a {kind} address"):
            await strict.fetch(url)
    finally:
        await strict.aclose()
    assert file_server.requests == ["/r.png"]


async def test_private_ranges_are_fetched_when_allowed(file_server: FileServer) -> None:
    # 127.0.0.1 stands in for a private address here: with both allowed it is fetched.
    url = file_server.redirect("/r.png", file_server.add("/a.png", PNG))
    fetcher = HttpxFetcher(max_bytes=1024, timeout_s=1.0, allow_loopback=True, allow_private=True)
    try:
        assert (await fetcher.fetch(url)).data == PNG
    finally:
        await fetcher.aclose()


@pytest.mark.parametrize(
    ("address", "loopback", "private", "refused"),
    [
        ("93.184.216.34", False, False, None),
        ("2606:2800:220:1:248:1893:25c8:1946", False, False, None),
        ("127.0.0.1", False, False, "loopback"),
        ("127.0.0.1", True, False, None),
        ("::1", False, True, "loopback"),
        ("0.0.0.0", True, False, None),
        ("10.0.0.1", True, False, "private"),
        ("172.16.5.4", False, False, "private"),
        ("100.64.0.1", False, False, "private"),
        ("fd00::1", False, False, "private"),
        ("10.0.0.1", False, True, None),
        ("169.254.169.254", False, False, "link-local"),
        ("169.254.169.254", False, True, None),
        ("::ffff:10.0.0.1", False, False, "private"),
        ("224.0.0.1", True, True, "multicast"),
    ],
)
def test_address_refusal(address: str, loopback: bool, private: bool, refused: str | None) -> None:
    reason = address_refusal(address, allow_loopback=loopback, allow_private=private)
    assert reason == (None if refused is None else f"{address} is a {refused} address")
