"""`yuji stats [--json]` through memory_core.cli.main, on a database of its own."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memory_core import FakeFetcher, FetchedFile, NewExperience, Settings, Yuji
from memory_core.cli import main
from memory_core.types import AttachmentRef, Source

T0 = datetime(2026, 11, 20, tzinfo=UTC)


async def _fill(data_dir: Path) -> None:
    fetcher = FakeFetcher({"https://a/1.png": FetchedFile(b"\x89PNG" * 10, "image/png")})
    core = await Yuji.open(Settings(data_dir=data_dir), fetcher=fetcher)
    try:

        def exp(scope: str, fp: str, source: Source = "realtime", url: str = "") -> NewExperience:
            refs = (AttachmentRef(0, url),) if url else ()
            return NewExperience(
                scope,
                fp,
                "1",
                "x",
                sent_at=T0,
                source=source,
                attachments=refs,
            )

        await core.archive.append_many(
            [
                exp("group:1", "a", url="https://a/1.png"),
                exp("group:1", "b"),
                exp("group:1", "c", "backfill", url="https://a/404.png"),
                exp("private:9", "d"),
            ]
        )
        await core.archive.wait_attachments()
    finally:
        await core.close()


async def test_stats_json_counts_scopes_sources_attachments_and_bytes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data_dir = tmp_path / "data"
    await _fill(data_dir)
    monkeypatch.setenv("YUJI_DATA_DIR", str(data_dir))
    monkeypatch.chdir(tmp_path)  # no .env here
    out = await _run(["stats", "--json"], capsys)
    report = json.loads(out)
    assert report["experiences"]["total"] == 4
    assert report["experiences"]["by_scope"] == {
        "group:1": {"backfill": 1, "realtime": 2},
        "private:9": {"realtime": 1},
    }
    assert report["attachments"]["by_status"] == {"failed": 1, "stored": 1}
    assert report["attachments"]["stored_bytes"] == 40
    assert report["bytes"]["attachments"] == 40
    assert report["bytes"]["database"] > 0


async def test_stats_text_names_every_scope(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    data_dir = tmp_path / "data"
    await _fill(data_dir)
    monkeypatch.setenv("YUJI_DATA_DIR", str(data_dir))
    monkeypatch.chdir(tmp_path)
    out = await _run(["stats"], capsys)
    assert "存档消息：4 条" in out
    assert "group:1：3（补拉 1，实时 2）" in out
    assert "private:9：1（实时 1）" in out
    assert "附件：下载失败 1，已存 1" in out
    assert "experiences" not in out


async def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    # main() runs its own event loop; keep it off the test's loop.
    code = await asyncio.to_thread(main, argv)
    assert code == 0
    return capsys.readouterr().out
