"""`yuji demo --no-serve`: the sample world goes into its own folder once, labelled,
and never into a folder holding real data."""

from __future__ import annotations

import asyncio
import shlex
import subprocess
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memory_core import NewExperience, Settings, Yuji
from memory_core.cli import main


def test_demo_loads_once_and_is_labelled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "demo"
    assert main(["demo", "--dir", str(folder), "--no-serve"]) == 0
    assert main(["demo", "--dir", str(folder), "--no-serve"]) == 0
    out = capsys.readouterr().out
    assert out.count("样例数据") >= 2
    label, messages = asyncio.run(loaded(folder))
    assert label.startswith("样例数据")
    assert messages == [15, 1]  # not loaded twice


def test_demo_prints_the_command_that_reads_its_data(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # no stray .env
    monkeypatch.delenv("YUJI_DATA_DIR", raising=False)
    monkeypatch.delenv("YUJI_DATABASE_URL", raising=False)
    folder = tmp_path / "样例 demo"  # a space: the printed command quotes it
    assert main(["demo", "--dir", str(folder), "--no-serve"]) == 0
    [command] = [
        line.removeprefix("用命令行看它：")
        for line in capsys.readouterr().out.splitlines()
        if line.startswith("用命令行看它：")
    ]
    argv = shlex.split(command)
    assert argv == ["yuji", "--data-dir", str(folder), "status"]
    assert main(argv[1:]) == 0
    out = capsys.readouterr().out
    assert "group:900001：待整理 15 条" in out
    assert not (tmp_path / "data").exists()


async def loaded(folder: Path) -> tuple[str, list[int]]:
    core = await Yuji.open(Settings(data_dir=folder))
    try:
        return core.console.sample_label, [c.messages for c in await core.console.chats()]
    finally:
        await core.close()


async def real_chat(folder: Path) -> None:
    core = await Yuji.open(Settings(data_dir=folder))
    try:
        await core.archive.append(
            NewExperience(
                scope="group:1",
                fingerprint="1",
                sender_id="2",
                text="真实消息",
                sent_at=datetime(2026, 11, 1, tzinfo=UTC),
            )
        )
        await core.archive.flush()
    finally:
        await core.close()


def test_demo_refuses_a_folder_with_real_data(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    asyncio.run(real_chat(tmp_path))
    assert main(["demo", "--dir", str(tmp_path), "--no-serve"]) == 2
    assert "不是样例的数据" in capsys.readouterr().err


def test_the_default_demo_folder_is_ignored_by_git() -> None:
    root = Path(__file__).resolve().parents[3]
    if not (root / ".git").exists():
        pytest.skip("not a git checkout")
    found = subprocess.run(
        ["git", "check-ignore", "-q", "data-demo/yuji.db"], cwd=root, check=False
    )
    assert found.returncode == 0
