"""`yuji followups --json` on a store restored from a memory pack (#44): a dated plan
whose evidence quotes the member's own message sent before the date, dated yesterday,
is due; one dated next month is not, nor a retracted one, nor a past event told
afterwards. Imported memories count like any others."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from memory_core import EvidenceRef, NewExperience, Settings, Yuji
from memory_core.cli import main

SH = ZoneInfo("Asia/Shanghai")
CHAT = "private:7"


def midnight(day: date) -> datetime:
    return datetime.combine(day, time(0), tzinfo=SH).astimezone(UTC)


async def make_pack(folder: Path) -> dict[str, object]:
    """A store with four plans of 阿哲's, exported as a memory pack."""
    today = datetime.now(SH).date()
    yesterday, next_month = today - timedelta(days=1), today + timedelta(days=32)
    told = datetime.now(UTC) - timedelta(days=5)
    core = await Yuji.open(Settings(data_dir=folder))
    ids: dict[str, int] = {}
    try:
        for n, (name, day, said_at) in enumerate(
            [
                ("yesterday", yesterday, told),
                ("next_month", next_month, told),
                ("retracted", yesterday, told),
                ("told_after", yesterday, datetime.now(UTC) - timedelta(minutes=5)),
            ]
        ):
            text = f"我{day.month}月{day.day}号考试{n}"
            said = await core.archive.append(
                NewExperience(CHAT, f"m{n}", "7", text, sender_name="阿哲", sent_at=said_at)
            )
            written = await core.memories.write(
                CHAT,
                type="event",
                subject="阿哲",
                content=f"阿哲{day.month}月{day.day}日考试{n}",
                evidence=[EvidenceRef(experience_id=said)],
                valid_from=midnight(day),
                subject_id="7",
            )
            ids[name] = written.memory.id
        await core.memories.retract(CHAT, ids["retracted"], reason="取消了", changed_by="admin")
        return await core.porting.export(CHAT)
    finally:
        await core.close()


@pytest.fixture
def restored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # no stray .env
    monkeypatch.delenv("YUJI_DATABASE_URL", raising=False)
    monkeypatch.delenv("YUJI_TIMEZONE", raising=False)
    pack = tmp_path / "pack.json"
    pack.write_text(json.dumps(asyncio.run(make_pack(tmp_path / "source"))), "utf-8")
    monkeypatch.setenv("YUJI_DATA_DIR", str(tmp_path / "data"))
    assert main(["import", "pack", str(pack), "--scope", CHAT]) == 0
    return pack


def test_a_restored_plan_dated_yesterday_is_due_and_nothing_else(
    restored: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert main(["followups", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    states = {row["text"][-1]: row["state"] for row in rows}
    assert states == {"0": "due", "1": "upcoming"}  # no retracted one, no past event
    [due] = [row for row in rows if row["state"] == "due"]
    yesterday = datetime.now(SH).date() - timedelta(days=1)
    assert (due["scope"], due["person"], due["date"]) == (CHAT, "7", yesterday.isoformat())
    assert due["window"][0] == datetime.now(SH).date().isoformat()
    assert main(["followups", "--scope", "group:9"]) == 0
    assert capsys.readouterr().out.strip() == "（没有跟进）"
    assert main(["followups"]) == 0
    assert "该问了" in capsys.readouterr().out
