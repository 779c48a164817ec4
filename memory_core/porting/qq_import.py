"""A QQ desktop text export as a message source for the import loop."""

from __future__ import annotations

import hashlib
from collections.abc import AsyncIterator
from datetime import datetime, tzinfo
from pathlib import Path

from memory_core.types import NewExperience

from .message_import import Step
from .qq_txt import (
    BadTime,
    Fingerprints,
    QQMessage,
    Unmatched,
    file_size,
    parse_lines,
    read_lines,
    segments,
)

IDENTITY_BYTES = 1 << 16


class QQTextSource:
    kind = "qq-txt"

    def __init__(self, path: Path, scope: str, zone: tzinfo, *, encoding: str = "utf-8") -> None:
        "".encode(encoding)  # an unknown encoding fails here, before anything is read
        self.path = path
        self.scope = self.scope_label = scope
        self.zone = zone
        self.encoding = encoding
        self.total = file_size(path)
        with path.open("rb") as handle:
            head = hashlib.sha256(handle.read(IDENTITY_BYTES)).hexdigest()[:32]
        self.source_key = f"{path.resolve()}|{self.total}|{head}"

    async def steps(self, start: int, line: int) -> AsyncIterator[Step]:
        fingerprints = Fingerprints()
        previous: datetime | None = None
        for item in parse_lines(
            read_lines(self.path, start), self.zone, encoding=self.encoding, first_line=line + 1
        ):
            if isinstance(item, Unmatched):
                yield Step(unmatched=(item.line_no, item.text), line=item.line_no)
            elif isinstance(item, BadTime):
                yield Step(refused="unreadable date or time", line=item.line_no)
            else:
                safe = item.sent_at != previous
                previous = item.sent_at
                yield self._step(item, fingerprints, item.offset if safe else None)

    def _step(self, item: QQMessage, fingerprints: Fingerprints, resume_at: int | None) -> Step:
        fingerprint = fingerprints.of(item)
        if not item.text.strip():
            return Step(refused="empty message", resume_at=resume_at, line=item.line_no)
        exp = NewExperience(
            scope=self.scope,
            fingerprint=fingerprint,
            sender_id=item.sender_id,
            text=item.text,
            sent_at=item.sent_at,
            segments=segments(item.text),
            sender_name=item.sender_name,
            source="migrated",
        )
        return Step(exp=exp, resume_at=resume_at, line=item.line_no, done=item.offset)
