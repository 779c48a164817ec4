"""`yuji status [--json]` through `memory_core.cli.main` on a prepared data folder."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy.engine import make_url

from memory_core import Settings, Yuji
from memory_core.cli import main
from memory_core.types import NewExperience


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # no stray .env
    monkeypatch.setenv("YUJI_DATA_DIR", str(tmp_path / "data"))
    return tmp_path / "data"


async def prepare(data_dir: Path) -> None:
    core = await Yuji.open(Settings(data_dir=data_dir))
    try:
        now = datetime.now(UTC)
        await core.archive.append_many(
            [
                NewExperience(
                    scope=scope, fingerprint=f"{scope}-{i}", sender_id="7", text="hi", sent_at=now
                )
                for scope, n in (("group:1", 3), ("group:2", 5))
                for i in range(n)
            ]
        )
        await core.archive.flush()
        await core.chat_state.set_muted("group:2", now + timedelta(hours=1), now)
        await core.chat_state.touch("private:9", now, reply_at=now - timedelta(minutes=5))
    finally:
        await core.close()


async def test_status_json_lists_every_chat(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    await prepare(data_dir)
    assert await asyncio.to_thread(main, ["status", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    rows = {row["scope"]: row for row in data["scopes"]}
    assert sorted(rows) == ["group:1", "group:2", "private:9"]
    assert (rows["group:1"]["pending"], rows["group:2"]["pending"]) == (3, 5)
    assert rows["group:1"]["muted"] is False
    assert rows["group:2"]["muted"] is True
    assert rows["group:2"]["muted_until"] is not None
    assert rows["group:1"]["last_batch"] is None
    assert rows["private:9"]["last_reply_at"] is not None
    assert rows["group:1"]["last_reply_at"] is None
    lines = rows["group:1"]["lines"]
    assert lines["夜间整理"] == "还没有跑过"
    assert lines["上次备份"]
    assert lines["向量模式"] == "on"  # the default: dense retrieval is part of recall


async def test_status_text(data_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    await prepare(data_dir)
    assert await asyncio.to_thread(main, ["status"]) == 0
    out = capsys.readouterr().out
    assert "group:1：待整理 3 条，上一批 无，禁言 否，人设上次回复 从未" in out
    assert "group:2：待整理 5 条，上一批 无，禁言 到 " in out
    assert "pending" not in out


async def test_status_of_an_empty_database(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    core = await Yuji.open(Settings(data_dir=data_dir))  # a store with nothing in it
    await core.close()
    assert await asyncio.to_thread(main, ["status"]) == 0
    assert capsys.readouterr().out.strip().splitlines()[-1] == "还没有任何聊天"


async def test_status_json_shows_each_chats_backlog_and_lag_under_consolidation(
    data_dir: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    await prepare(data_dir)
    assert await asyncio.to_thread(main, ["status", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    chats = data["consolidation"]
    assert sorted(chats) == ["group:1", "group:2"]
    assert chats["group:2"]["backlog_messages"] == 5
    assert chats["group:2"]["backlog_chars"] == 10  # five "hi"
    assert 0 <= chats["group:2"]["lag_s"] < 600
    rows = {row["scope"]: row for row in data["scopes"]}
    assert rows["group:1"]["lines"]["整理积压"].startswith("3 条 / 6 字，最早一条等了")


def test_status_says_which_database_and_vector_store_run(
    settings: Settings,
    backend: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(settings.data_dir)  # no stray .env
    monkeypatch.setenv("YUJI_DATA_DIR", str(settings.data_dir))
    if backend != "sqlite":
        monkeypatch.setenv("YUJI_DATABASE_URL", settings.sqlalchemy_url)
    assert main(["status", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)["backend"]
    if backend == "sqlite":
        assert data["database"] == f"SQLite {settings.database_path.resolve()}"
    else:
        major = "18" if backend == "pg18" else "15"
        assert data["database"].startswith(f"PostgreSQL {major}.")
        url = make_url(settings.sqlalchemy_url)
        assert data["database"].endswith(f"{url.query['host']}/{url.database})")
    if backend == "sqlite":
        assert data["vectors"] == f"file index under {settings.vectors_dir}"
    elif backend == "pg18":  # pgvector is there: the HNSW index serves large chats
        assert data["vectors"].startswith("in the database (memory_vectors, pgvector HNSW")
    else:
        assert data["vectors"] == "in the database (memory_vectors, bytea; scored in process)"

    assert main(["status"]) == 0
    first, second = capsys.readouterr().out.splitlines()[:2]
    assert first == f"数据库：{data['database']}"
    assert second == f"向量：{data['vectors']}"
