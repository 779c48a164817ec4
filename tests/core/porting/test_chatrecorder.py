"""nonebot-plugin-chatrecorder's database (made by chatrecorder's own code) -> archive."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from sqlalchemy import text
from sqlalchemy.exc import OperationalError

from memory_core import NewExperience, RecordingAlertSink, ScriptedLLM, Yuji
from memory_core.cli import main
from memory_core.consolidation.service import ConsolidationService
from memory_core.llm import ChatResponse, LLMRequest
from memory_core.storage.archive.chatrecorder_repo import ChatrecorderReader
from tests.core.consolidation.conftest import call, ids_in_prompt, respond, token_of

MAKER = Path(__file__).resolve().parents[2] / "fixtures" / "chatrecorder_db.py"
GROUP = "group:5001"


@pytest.fixture(scope="module")
def recorder_db(tmp_path_factory: pytest.TempPathFactory) -> str:
    folder = tmp_path_factory.mktemp("chatrecorder")
    db = folder / "nonebot.db"
    made = subprocess.run(
        [sys.executable, str(MAKER), str(db), str(folder)],
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert made.stdout.strip().splitlines()[-1] == "6"
    return f"sqlite:///{db}"


async def test_every_onebot_chat_is_archived_once_with_its_ids(
    core: Yuji, recorder_db: str
) -> None:
    # A message the bot had already archived live has the same fingerprint.
    await core.archive.append(
        NewExperience(GROUP, "9001", "42", "我家的猫叫煤球，三岁了", sent_at=core.clock.now())
    )
    counts, resumed = await core.porting.import_chatrecorder(recorder_db)
    assert resumed == 0
    assert (counts.read, counts.new, counts.duplicate, counts.refused) == (6, 5, 1, {})

    group = await core.archive.after(GROUP, 0, 10)
    assert [(e.fingerprint, e.sender_id, e.text) for e in group] == [
        ("9001", "42", "我家的猫叫煤球，三岁了"),
        ("9002", "43", "好可爱[图片]"),
        ("9003", "10000", "煤球是只黑猫吗"),
        ("9004", "42", "@43 对，全黑的[表情]"),
    ]
    imported = {e.fingerprint: e for e in group if e.source == "migrated"}
    assert imported["9002"].reply_to == "9001"
    assert imported["9002"].segments[2]["type"] == "image"
    assert imported["9003"].is_bot
    assert imported["9004"].sender_name == "煤球铲屎官"  # the group card
    assert imported["9002"].sender_name == "阿花"
    assert [e.text for e in await core.archive.after("group:5002", 0, 10)] == ["另一个群的消息"]
    assert [e.text for e in await core.archive.after("private:42", 0, 10)] == [
        "私聊：记得提醒我给煤球打疫苗"
    ]

    again, _ = await core.porting.import_chatrecorder(recorder_db)
    assert (again.new, again.duplicate) == (0, 6)


async def test_one_chat_only_and_dry_run(core: Yuji, recorder_db: str) -> None:
    counts, _ = await core.porting.import_chatrecorder(recorder_db, scope=GROUP, dry_run=True)
    assert (counts.read, counts.new) == (4, 4)
    assert await core.archive.scopes() == []
    counts, _ = await core.porting.import_chatrecorder(recorder_db, scope="group:5002")
    assert counts.new == 1
    assert await core.archive.scopes() == ["group:5002"]


async def test_imported_messages_are_recallable_after_consolidation(
    core: Yuji, recorder_db: str
) -> None:
    await core.porting.import_chatrecorder(recorder_db, scope=GROUP)

    def extract(request: LLMRequest) -> ChatResponse:
        tok = token_of(request)
        return respond(
            call(
                "write_memory",
                token=tok,
                type="fact",
                subject="小明",
                content="小明家的猫叫煤球，三岁，全黑",
                evidence=ids_in_prompt(request)[:1],
            ),
            call("acknowledge", token=tok, outcome="extracted", summary="小明聊了他的猫煤球"),
        )

    llm = ScriptedLLM([extract])
    sink = RecordingAlertSink()
    service = ConsolidationService(
        core.db,
        core.live,
        core.clock,
        archive=core.archive,
        memories=core.memories,
        llm=llm,
        alerts=sink,
    )
    report = await service.run_once(scope=GROUP, force=True)
    assert report is not None
    assert (report.state, report.outcome) == ("done", "extracted")
    recalled = await core.recall.recall(GROUP, "煤球几岁了")
    assert [r.memory.content for r in recalled.items] == ["小明家的猫叫煤球，三岁，全黑"], (
        recalled.trace
    )


async def test_a_database_that_is_not_chatrecorder_is_one_clear_error(
    core: Yuji, tmp_path: Path
) -> None:
    from memory_core import YujiError

    foreign = tmp_path / "foreign.db"
    with sqlite3.connect(foreign) as conn:
        conn.execute("CREATE TABLE other (id INTEGER)")
    before = foreign.read_bytes()
    with pytest.raises(YujiError, match=r"is not a nonebot-plugin-chatrecorder 0\.7 database"):
        await core.porting.import_chatrecorder(f"sqlite:///{foreign}")
    assert foreign.read_bytes() == before


def test_a_missing_database_is_one_line_and_never_created(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("YUJI_DATA_DIR", str(tmp_path / "data"))
    missing = tmp_path / "nonexistent.db"
    assert main(["import", "chatrecorder", "--db", f"sqlite:///{missing}"]) == 2
    err = capsys.readouterr().err.strip()  # the progress bar leaves a blank line
    assert err == f"yuji import: no chatrecorder database at {missing}: no such file"
    assert not missing.exists()


async def test_the_source_is_opened_read_only(recorder_db: str) -> None:
    reader = ChatrecorderReader(recorder_db)
    try:
        async with reader.engine.connect() as conn:
            with pytest.raises(OperationalError, match="readonly"):
                await conn.execute(text("CREATE TABLE written_by_yuji (id INTEGER)"))
    finally:
        await reader.close()
