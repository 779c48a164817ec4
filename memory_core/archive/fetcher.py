"""The attachment fetcher seam: `fetch(url) -> FetchedFile`, or `AttachmentError`.

`HttpxFetcher` is the real one: http(s) only, the whole download bounded by a
timeout, the body streamed and abandoned past the size cap, and only `image/*`
accepted. Nothing of the URL ever becomes a file name: the store names files by the
SHA-256 of their bytes.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Protocol
from urllib.parse import urlsplit

import httpx

from memory_core.errors import AttachmentError


@dataclass(frozen=True, slots=True)
class FetchedFile:
    data: bytes
    mime: str


class AttachmentFetcher(Protocol):
    async def fetch(self, url: str) -> FetchedFile:
        """Download one image; raise `AttachmentError` for any refusal or failure."""
        ...

    async def aclose(self) -> None: ...


class HttpxFetcher:
    def __init__(
        self,
        *,
        max_bytes: int,
        timeout_s: float,
        client: httpx.AsyncClient | None = None,
    ) -> None:
        self.max_bytes = max_bytes
        self.timeout_s = timeout_s
        self._client = client or httpx.AsyncClient(
            timeout=httpx.Timeout(timeout_s),
            follow_redirects=True,
            max_redirects=3,
            headers={"User-Agent": "yuji-archive/1"},
        )

    async def fetch(self, url: str) -> FetchedFile:
        if urlsplit(url).scheme not in ("http", "https"):
            raise AttachmentError("only http(s) URLs are fetched")
        try:
            # The total deadline also stops a server that drips one byte at a time.
            async with asyncio.timeout(self.timeout_s):
                return await self._download(url)
        except TimeoutError as exc:
            raise AttachmentError(f"timed out after {self.timeout_s:g}s") from exc
        except httpx.HTTPError as exc:
            raise AttachmentError(f"transport error: {type(exc).__name__}") from exc

    async def _download(self, url: str) -> FetchedFile:
        async with self._client.stream("GET", url) as response:
            if response.status_code != 200:
                raise AttachmentError(f"HTTP {response.status_code}")
            mime = response.headers.get("content-type", "").split(";")[0].strip().lower()
            if not mime.startswith("image/"):
                raise AttachmentError(f"not an image: {mime or 'no content-type'}")
            declared = response.headers.get("content-length", "")
            if declared.isdigit() and int(declared) > self.max_bytes:
                raise AttachmentError(f"too large: {declared} > {self.max_bytes} bytes")
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > self.max_bytes:
                    raise AttachmentError(f"too large: over {self.max_bytes} bytes")
            return FetchedFile(bytes(body), mime)

    async def aclose(self) -> None:
        await self._client.aclose()
