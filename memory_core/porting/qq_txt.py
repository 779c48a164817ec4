"""QQ desktop 导出消息记录 (.txt) -> messages. Pure and streamed: lines in, messages out.

The file has a few header lines (title, `====` rules, 消息分组 / 消息对象), then per
message one line `YYYY-MM-DD HH:MM:SS 昵称(QQ号)` or `YYYY-MM-DD HH:MM:SS 昵称<邮箱>`
followed by the message text over one or more lines and a blank line. A nickname may
itself contain brackets, parentheses and spaces: the sender is the *last*
`(digits)` or `<address>` on the line. Images and stickers appear as `[图片]` and
`[表情]` placeholders. A line that is neither a header nor inside a message is
reported as unmatched, never silently dropped.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime, tzinfo
from pathlib import Path
from typing import Any

_HEAD = re.compile(
    r"(\d{4})-(\d{1,2})-(\d{1,2}) (\d{1,2}):(\d{2}):(\d{2}) "
    r"(.*?)(?:\((\d{4,12})\)|<([^<>\s]+@[^<>\s]+)>)\s*"
)
_RULE = re.compile(r"={8,}")
_HEADER_PREFIXES = ("消息记录", "消息分组", "消息对象")
_PLACEHOLDERS = re.compile(r"(\[图片\]|\[表情\])")
_QQ_MAIL = re.compile(r"([1-9][0-9]{4,11})@qq\.com", re.IGNORECASE)


@dataclass(frozen=True, slots=True)
class QQMessage:
    line_no: int
    """Line of the header (1-based), for the report."""
    offset: int
    """Byte offset where the header line starts (a resumed import seeks here)."""
    sent_at: datetime
    sender_id: str
    sender_name: str
    text: str


@dataclass(frozen=True, slots=True)
class Unmatched:
    line_no: int
    text: str


@dataclass(frozen=True, slots=True)
class BadTime:
    line_no: int
    text: str


Parsed = QQMessage | Unmatched | BadTime


def parse_lines(
    lines: Iterable[tuple[int, bytes]],
    zone: tzinfo,
    *,
    encoding: str = "utf-8",
    first_line: int = 1,
) -> Iterator[Parsed]:
    """`lines` are (byte offset, raw line) pairs; yields each message once its text
    is complete, so only one message is ever held."""
    head: tuple[int, int, datetime, str, str] | None = None
    body: list[str] = []
    refused = False
    """Inside the text of a message whose header was refused (its lines go with it)."""
    line_no = first_line - 1
    for offset, raw in lines:
        line_no += 1
        line = raw.decode(encoding, errors="replace").rstrip("\r\n")
        if line_no == 1:
            line = line.removeprefix("\ufeff")
        match = _HEAD.fullmatch(line)
        if match is not None:
            if head is not None:
                yield _message(head, body)
            body = []
            parsed = _header(match, zone)
            refused = parsed is None
            if parsed is None:
                head = None
                yield BadTime(line_no, line)
                continue
            sent_at, sender_id, sender_name = parsed
            head = (line_no, offset, sent_at, sender_id, sender_name)
            continue
        stripped = line.strip()
        is_rule = _RULE.fullmatch(stripped) is not None
        if head is not None and not is_rule:
            body.append(line)
            continue
        if refused and not is_rule:
            continue
        refused = False
        if head is not None:  # a `====` rule: a new header block starts, the message ends
            yield _message(head, body)
            head, body = None, []
        if stripped and not is_rule and not stripped.startswith(_HEADER_PREFIXES):
            yield Unmatched(line_no, line)
    if head is not None:
        yield _message(head, body)


def _header(match: re.Match[str], zone: tzinfo) -> tuple[datetime, str, str] | None:
    year, month, day, hour, minute, second = (int(match.group(i)) for i in range(1, 7))
    try:
        sent_at = datetime(year, month, day, hour, minute, second, tzinfo=zone)
    except ValueError:
        return None
    name = match.group(7).strip()
    qq, mail = match.group(8), match.group(9)
    if qq is not None:
        return sent_at, qq, name
    qq_mail = _QQ_MAIL.fullmatch(mail)
    return sent_at, (qq_mail.group(1) if qq_mail else mail.lower()[:64]), name


def _message(head: tuple[int, int, datetime, str, str], body: list[str]) -> QQMessage:
    while body and not body[-1].strip():
        body.pop()
    while body and not body[0].strip():
        body.pop(0)
    line_no, offset, sent_at, sender_id, sender_name = head
    return QQMessage(line_no, offset, sent_at, sender_id, sender_name, "\n".join(body))


def segments(text: str) -> list[dict[str, Any]]:
    """OneBot-shaped segments of an exported text: text, and the image and sticker
    placeholders as `image` / `face` segments without a file (the export has none)."""
    found: list[dict[str, Any]] = []
    for part in _PLACEHOLDERS.split(text):
        if part == "[图片]":
            found.append({"type": "image", "data": {"file": "", "summary": "[图片]"}})
        elif part == "[表情]":
            found.append({"type": "face", "data": {"id": ""}})
        elif part:
            found.append({"type": "text", "data": {"text": part}})
    return found


class Fingerprints:
    """A message's archive fingerprint from its content: the same export imported
    twice (or two overlapping exports) gives the same keys. Identical messages by
    the same sender in the same second are told apart by their order."""

    def __init__(self) -> None:
        self._second: datetime | None = None
        self._seen: dict[str, int] = {}

    def of(self, message: QQMessage) -> str:
        if message.sent_at != self._second:
            self._second, self._seen = message.sent_at, {}
        base = f"{message.sent_at.isoformat()}\x1f{message.sender_id}\x1f{message.text}"
        nth = self._seen.get(base, 0)
        self._seen[base] = nth + 1
        digest = hashlib.blake2b(f"{base}\x1f{nth}".encode(), digest_size=16).hexdigest()
        return f"qqtxt:{digest}"


def read_lines(path: Path, start: int = 0) -> Iterator[tuple[int, bytes]]:
    """(byte offset, raw line) pairs of a file from `start`, read in chunks."""
    with open(path, "rb") as handle:
        handle.seek(start)
        offset = start
        for raw in handle:
            yield offset, raw
            offset += len(raw)


def file_size(path: Path) -> int:
    """The size of an input file, or a clear error when it is not one."""
    if not path.is_file():
        raise FileNotFoundError(f"no such file: {path}")
    return path.stat().st_size
