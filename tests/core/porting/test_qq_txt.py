"""QQ desktop text exports: every line shape parses, imports once, resumes."""

from __future__ import annotations

from collections.abc import AsyncIterator
from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import func, select

from memory_core import Yuji
from memory_core.cli import main
from memory_core.porting.message_import import Step, import_messages
from memory_core.porting.qq_import import QQTextSource
from memory_core.porting.qq_txt import (
    BadTime,
    QQMessage,
    Unmatched,
    parse_lines,
    read_lines,
    segments,
)
from memory_core.storage.schema import experiences

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures" / "qq_export.txt"
ZONE = ZoneInfo("Asia/Shanghai")
SCOPE = "group:555"


def _parsed() -> list[object]:
    return list(parse_lines(read_lines(FIXTURE), ZONE))


def test_every_line_shape_of_the_fixture() -> None:
    items = _parsed()
    messages = [i for i in items if isinstance(i, QQMessage)]
    senders = [(m.sender_id, m.sender_name) for m in messages]
    assert senders == [
        ("10001", "小明"),
        ("ahua@example.com", "阿花"),
        ("20002", "老王"),
        ("30003", "【管理员】张 三 (小三)"),
        ("40004", "<<猫猫>> [潜水]"),
        ("10001", "小明"),
        ("10001", "小明"),
        ("10001", "小明"),
        ("ahua@example.com", "阿花"),
        ("10001", "小明"),
    ]
    texts = [m.text for m in messages]
    assert texts[3] == "第一行\n第二行\n\n第四行在空行之后"
    assert texts[4] == "[图片][表情]好耶"
    assert texts[7] == "日期没有补零"
    assert texts[8] == ""  # an empty message is parsed, and refused by the import
    assert texts[9] == "换了对象以后的消息"
    assert messages[0].sent_at == datetime(2023, 5, 1, 2, 0, tzinfo=UTC)
    assert messages[7].sent_at == datetime(2023, 5, 2, 9, 5, 7, tzinfo=ZONE)
    assert [(i.line_no, i.text) for i in items if isinstance(i, Unmatched)] == [
        (9, "这一行不是任何格式")
    ]
    assert [i.line_no for i in items if isinstance(i, BadTime)] == [40]


def test_placeholders_become_segments_and_the_text_stays() -> None:
    assert segments("[图片][表情]好耶") == [
        {"type": "image", "data": {"file": "", "summary": "[图片]"}},
        {"type": "face", "data": {"id": ""}},
        {"type": "text", "data": {"text": "好耶"}},
    ]


async def _count(core: Yuji) -> int:
    async with core.db.read() as conn:
        return int(await conn.scalar(select(func.count()).select_from(experiences)) or 0)


async def test_import_archives_each_message_once_as_migrated(core: Yuji) -> None:
    counts, resumed = await core.porting.import_qq_txt(FIXTURE, SCOPE)
    assert resumed == 0
    assert (counts.read, counts.new, counts.duplicate) == (11, 9, 0)
    assert counts.refused == {"empty message": 1, "unreadable date or time": 1}
    assert counts.unmatched == 1
    assert counts.examples == [(9, "这一行不是任何格式")]
    archived = await core.archive.after(SCOPE, 0, 100)
    assert len(archived) == 9
    assert {e.source for e in archived} == {"migrated"}
    assert [e.text for e in archived].count("哈哈") == 2  # same second, same sender: both kept
    three = next(e for e in archived if e.sender_id == "30003")
    assert three.sender_name == "【管理员】张 三 (小三)"
    assert three.text == "第一行\n第二行\n\n第四行在空行之后"

    again, _ = await core.porting.import_qq_txt(FIXTURE, SCOPE)
    assert (again.new, again.duplicate) == (0, 9)
    assert await _count(core) == 9


async def test_dry_run_counts_and_writes_nothing(core: Yuji) -> None:
    counts, _ = await core.porting.import_qq_txt(FIXTURE, SCOPE, dry_run=True)
    assert (counts.read, counts.new) == (11, 9)
    assert await _count(core) == 0


class _Crashing:
    """The fixture's source, failing after `fail_after` steps (a killed import)."""

    def __init__(self, source: QQTextSource, fail_after: int | None) -> None:
        self.inner = source
        self.kind, self.source_key = source.kind, source.source_key
        self.scope_label, self.total = source.scope_label, source.total
        self.fail_after = fail_after

    async def steps(self, start: int, line: int) -> AsyncIterator[Step]:
        seen = 0
        async for step in self.inner.steps(start, line):
            if self.fail_after is not None and seen == self.fail_after:
                raise KeyboardInterrupt
            seen += 1
            yield step


async def test_an_interrupted_import_resumes_without_duplicates(core: Yuji) -> None:
    source = QQTextSource(FIXTURE, SCOPE, ZONE)
    repo = core.porting.repo
    with pytest.raises(KeyboardInterrupt):
        await import_messages(_Crashing(source, 6), core.archive, repo, core.clock, batch=2)
    partial = await _count(core)
    assert 0 < partial < 9
    counts, resumed = await import_messages(
        _Crashing(source, None), core.archive, repo, core.clock, batch=2
    )
    assert resumed > 0
    assert await _count(core) == 9
    assert (counts.read, counts.new, counts.duplicate) == (11, 9, 0)


def test_cli_imports_and_reports(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("YUJI_DATA_DIR", str(tmp_path / "data"))
    assert main(["import", "qq-txt", str(FIXTURE), "--scope", SCOPE]) == 0
    out = capsys.readouterr().out
    assert "读到 11，新增 9，重复 0，拒绝 2" in out
    assert "第 9 行：这一行不是任何格式" in out
    assert main(["import", "qq-txt", str(tmp_path / "missing.txt"), "--scope", SCOPE]) == 2
