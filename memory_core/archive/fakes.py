"""A fake fetcher for tests: scripted answers per URL, every call recorded."""

from __future__ import annotations

import asyncio

from memory_core.errors import AttachmentError

from .fetcher import FetchedFile


class FakeFetcher:
    def __init__(self, files: dict[str, FetchedFile | Exception] | None = None) -> None:
        self.files: dict[str, FetchedFile | Exception] = dict(files or {})
        self.calls: list[str] = []
        self.gate: asyncio.Event | None = None
        """When set to an unset Event, every fetch waits for it (a slow network)."""
        self.closed = False

    async def fetch(self, url: str) -> FetchedFile:
        self.calls.append(url)
        if self.gate is not None:
            await self.gate.wait()
        answer = self.files.get(url)
        if answer is None:
            raise AttachmentError("HTTP 404")
        if isinstance(answer, Exception):
            raise answer
        return answer

    async def aclose(self) -> None:
        self.closed = True
