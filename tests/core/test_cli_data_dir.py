"""`yuji --data-dir DIR ...` is `YUJI_DATA_DIR=DIR yuji ...`: the same store, over
`.env` and the environment, for one run only (memory_core/cli/common.py)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memory_core import NewExperience, Settings, Yuji
from memory_core.cli import main

ROOT = Path(__file__).resolve().parents[2]


async def make_store(folder: Path, scope: str) -> None:
    core = await Yuji.open(Settings(data_dir=folder))
    try:
        await core.archive.append(
            NewExperience(
                scope=scope,
                fingerprint=f"{scope}-1",
                sender_id="7",
                text="周六去爬山",
                sent_at=datetime(2026, 11, 1, tzinfo=UTC),
            )
        )
        await core.archive.flush()
    finally:
        await core.close()


@pytest.fixture
def stores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    """Two stores, and a working folder whose `.env` points at the second."""
    mine, other = tmp_path / "mine", tmp_path / "other"
    asyncio.run(make_store(mine, "group:1"))
    asyncio.run(make_store(other, "group:2"))
    work = tmp_path / "work"
    work.mkdir()
    (work / ".env").write_text(f"YUJI_DATA_DIR={other}\n", encoding="utf-8")
    monkeypatch.chdir(work)
    monkeypatch.delenv("YUJI_DATA_DIR", raising=False)
    monkeypatch.delenv("YUJI_DATABASE_URL", raising=False)
    return mine, other


def chats(capsys: pytest.CaptureFixture[str]) -> list[str]:
    return [row["scope"] for row in json.loads(capsys.readouterr().out)["scopes"]]


def test_data_dir_wins_over_env_file_and_environment_as_the_variable_would(
    stores: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    mine, other = stores
    assert main(["status", "--json"]) == 0
    assert chats(capsys) == ["group:2"]  # `.env`
    assert main(["--data-dir", str(mine), "status", "--json"]) == 0
    assert chats(capsys) == ["group:1"]
    monkeypatch.setenv("YUJI_DATA_DIR", str(mine))
    assert main(["status", "--json"]) == 0
    assert chats(capsys) == ["group:1"]  # the variable: the same store as the option
    assert main(["--data-dir", str(other), "stats", "--json"]) == 0
    assert list(json.loads(capsys.readouterr().out)["experiences"]["by_scope"]) == ["group:2"]


def test_data_dir_lasts_one_run(
    stores: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mine, _ = stores
    (tmp_path / "work" / ".env").unlink()  # no setting left: the default data/ is empty
    assert main(["--data-dir", str(mine), "status", "--json"]) == 0
    assert chats(capsys) == ["group:1"]
    assert main(["status"]) == 2
    assert "no yuji store at" in capsys.readouterr().err
    assert not (tmp_path / "work" / "data").exists()


def test_a_relative_data_dir_is_read_from_the_working_folder(
    stores: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["--data-dir", "../mine", "recall", "爬山", "--scope", "group:1"]) == 0
    assert "（没有可注入的记忆）" in capsys.readouterr().out


def test_the_installed_command_takes_it_before_the_subcommand(
    stores: tuple[Path, Path], tmp_path: Path
) -> None:
    mine, _ = stores
    env = {k: v for k, v in os.environ.items() if not k.startswith("YUJI_")}
    done = subprocess.run(
        [sys.executable, "-m", "memory_core.cli", "--data-dir", str(mine), "status"],
        cwd=tmp_path / "work",
        env={**env, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "group:1：待整理 1 条" in done.stdout
    assert "group:2" not in done.stdout
