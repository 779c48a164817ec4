"""`yuji demo --no-serve`: the sample world goes into its own folder once, labelled,
and never into a folder holding real data."""

from __future__ import annotations

import asyncio
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
    assert "not the sample world" in capsys.readouterr().err


def test_the_default_demo_folder_is_ignored_by_git() -> None:
    root = Path(__file__).resolve().parents[3]
    if not (root / ".git").exists():
        pytest.skip("not a git checkout")
    found = subprocess.run(
        ["git", "check-ignore", "-q", "data-demo/yuji.db"], cwd=root, check=False
    )
    assert found.returncode == 0
