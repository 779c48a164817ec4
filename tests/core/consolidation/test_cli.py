"""`yuji consolidate`: through `memory_core.cli.main`, against a real loopback model."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import sys
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from memory_core import Settings, Yuji
from memory_core.cli import main
from memory_core.consolidation.owner import Owner, owner_alive, owner_of
from memory_core.consolidation.selection import Cut
from memory_core.types import NewExperience
from tests.fakes.openai_server import FakeOpenAIServer, Reply, openai_server

__all__ = ["openai_server"]


async def archive(data_dir: Path, n: int) -> list[int]:
    core = await Yuji.open(Settings(data_dir=data_dir))
    try:
        now = datetime.now(UTC)
        ids = await core.archive.append_many(
            [
                NewExperience(
                    scope="group:5",
                    fingerprint=f"m{i}",
                    sender_id="42",
                    sender_name="王五",
                    text=f"王五：我下周{i}号去成都出差",
                    sent_at=now - timedelta(minutes=30 - i),
                )
                for i in range(n)
            ]
        )
        await core.archive.flush()
        return ids
    finally:
        await core.close()


def token(body: dict[str, Any]) -> str:
    return str(body["messages"][1]["content"]).split("token：", 1)[1].split("\n", 1)[0]


@pytest.fixture
def cli_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, openai_server: FakeOpenAIServer
) -> Path:
    data_dir = tmp_path / "data"
    monkeypatch.chdir(tmp_path)  # no stray .env
    monkeypatch.setenv("YUJI_DATA_DIR", str(data_dir))
    for key, value in openai_server.env().items():
        monkeypatch.setenv(key, value)
    return data_dir


async def test_once_runs_a_batch_and_prints_it(
    cli_env: Path, openai_server: FakeOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = await archive(cli_env, 14)

    def model(body: dict[str, Any]) -> Reply:
        tok = token(body)
        return Reply.tools(
            (
                "write_memory",
                {
                    "token": tok,
                    "type": "event",
                    "subject": "王五",
                    "content": "王五下周去成都出差",
                    "evidence": [ids[0]],
                },
            ),
            ("acknowledge", {"token": tok, "outcome": "extracted", "summary": "王五出差"}),
        )

    openai_server.handler = model
    assert await main_async(["consolidate", "--once"]) == 0
    out = capsys.readouterr().out
    assert "group:5" in out
    assert "完成，有记忆" in out
    assert "写下的记忆：" in out
    assert openai_server.requests[0].headers["authorization"] == "Bearer test-key"

    assert await main_async(["consolidate", "--once"]) == 0
    assert "无事可做：nothing eligible" in capsys.readouterr().out
    assert await main_async(["consolidate"]) == 0
    assert f"group:5：待整理 0 条；已投递 {ids[-1]}，已确认 {ids[-1]}" in capsys.readouterr().out


async def test_failed_batch_exits_1_and_force_runs_small_ones(
    cli_env: Path, openai_server: FakeOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    await archive(cli_env, 3)
    openai_server.push("我看完了")
    assert await main_async(["consolidate", "--once", "--scope", "group:5"]) == 0
    assert "nothing eligible in group:5" in capsys.readouterr().out
    assert await main_async(["consolidate", "--once", "--force"]) == 1
    assert "失败：" in capsys.readouterr().out
    assert len(openai_server.requests) == 1
    body = openai_server.requests[0].body
    assert json.dumps(body, ensure_ascii=False).count("王五：我下周") == 3


async def test_without_a_model_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("YUJI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.delenv("YUJI_LLM_BASE_URL", raising=False)
    monkeypatch.delenv("YUJI_LLM_MODEL", raising=False)
    assert await main_async(["consolidate", "--once", "--reconcile"]) == 2
    out = capsys.readouterr().out
    assert "修复：0 个开着的批次判为失败" in out
    assert "没有整理：" in out
    assert "no model configured" in out  # the core's reason, as the log says it


async def open_batch_owned_by(data_dir: Path, owner: str, ids: list[int]) -> int:
    """A delivered batch over `ids`, as a `yuji consolidate` killed mid-batch leaves it."""
    core = await Yuji.open(Settings(data_dir=data_dir))
    try:
        repo = core.consolidation.repo
        now = datetime.now(UTC)
        cut = Cut(first_id=ids[0], last_id=ids[-1], count=len(ids), chars=100)
        batch = await repo.create("group:5", cut, "tok", now, owner=owner)
        assert batch is not None
        await repo.delivered(batch.id, now)
        return batch.id
    finally:
        await core.close()


async def test_a_killed_consolidate_blocks_loudly_until_its_owner_is_found_dead(
    cli_env: Path, openai_server: FakeOpenAIServer, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = await archive(cli_env, 14)
    other = await asyncio.create_subprocess_exec(
        sys.executable, "-c", "import time; time.sleep(600)"
    )
    try:
        stuck = await open_batch_owned_by(cli_env, str(owner_of(other.pid)), ids)
        # Its owner runs: blocked, and the exit status says so.
        assert await main_async(["consolidate", "--once", "--force"]) == 3
        out = capsys.readouterr().out
        assert f"被挡住：batch {stuck} in group:5 is still open (pid {other.pid} on" in out
    finally:
        other.kill()
        await other.wait()

    openai_server.push("我看完了")  # the next batch runs (and fails: no acknowledgement)
    assert await main_async(["consolidate", "--once", "--force"]) == 1
    core = await Yuji.open(Settings(data_dir=cli_env))
    try:
        repo = core.consolidation.repo
        killed = await repo.batch(stuck)
        cursor = await repo.cursor("group:5")
        batches = await repo.batches("group:5")
    finally:
        await core.close()
    assert killed.state == "failed"
    assert killed.error == f"its process is gone (pid {other.pid} on {socket.gethostname()})"
    assert cursor.acked_id == 0
    assert cursor.delivered_id == 0
    assert [b.id for b in batches][1:] == [stuck]  # a new batch ran after it
    assert len(openai_server.requests) == 1


async def test_a_batch_of_another_process_in_this_boot_is_told_apart_from_a_reused_pid() -> None:
    me = owner_of(os.getpid())
    assert owner_alive(str(me)) is True
    assert owner_alive(str(replace(me, start=str(int(me.start) + 1)))) is False  # pid reused
    assert owner_alive(str(replace(me, boot="another-boot"))) is False  # rebooted since
    assert owner_alive(str(replace(me, host="elsewhere"))) is None  # cannot tell
    assert owner_alive("not an owner") is None
    assert Owner.parse(str(me)) == me


async def main_async(argv: list[str]) -> int:
    """`main` runs coroutines with asyncio.run; inside the test loop, run in a thread."""
    return await asyncio.to_thread(main, argv)
