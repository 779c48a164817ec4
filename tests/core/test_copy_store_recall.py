"""Issue 33, item 6: after `yuji copy-store` from SQLite to PostgreSQL, `yuji recall` on
the copy answers what it answers on the source (ids, bands, P), at once: copy-store
carries the memory vectors into the copy and recalls sample questions on both, and a
copy whose vectors were left behind would not pass (it answers otherwise)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import delete

from memory_core import Settings, Yuji
from memory_core.cli import main
from memory_core.storage.schema import memory_vectors, vector_builds
from memory_core.vectors.build import sync_index
from tests.conftest import copy_head_database

from .vectors.helpers import add_memory

pytestmark = pytest.mark.pg_only("the copy goes to PostgreSQL")

GROUP = "group:600287"
AT = "2026-11-20T21:30:00+08:00"
MEMORIES = (
    ("大刘", "大刘上个月搬到了杭州，现在住在西湖边"),
    ("小美", "煤球是小美养的黑猫，三岁了"),
    ("老周", "老周的儿子今年九月出生"),
    ("阿杰", "阿杰在学吉他，每周六上课"),
    ("小美", "小美对花生过敏"),
    ("群", "群里约好每月第一个周末爬山"),
)
QUESTIONS = ("大刘现在住哪里？", "煤球是谁的猫？", "谁在学乐器", "谁对什么过敏")


async def recall_on(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    monkeypatch.setenv("YUJI_DATA_DIR", str(settings.data_dir))
    monkeypatch.setenv("YUJI_DATABASE_URL", settings.database_url)
    answers = []
    for question in QUESTIONS:
        out = await cli(["recall", question, "--scope", GROUP, "--at", AT, "--json"])
        answers.append([(i["id"], i["band"], i["score"]) for i in json.loads(out)["items"]])
    return answers


async def cli(argv: list[str]) -> str:
    import contextlib
    import io

    buffer = io.StringIO()

    def run() -> int:
        with contextlib.redirect_stdout(buffer):
            return main(argv)

    code = await asyncio.to_thread(run)
    assert code == 0, buffer.getvalue()
    return buffer.getvalue()


async def test_the_copy_recalls_what_the_source_recalls(
    database_url: str,
    tmp_path: Path,
    head_database: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    source = Settings(data_dir=copy_head_database(head_database, tmp_path / "source"))
    core = await Yuji.open(source)
    try:
        for subject, content in MEMORIES:
            await add_memory(core.db, GROUP, subject, content)
        assert core.vectors is not None
        report = await sync_index(core.memory_repo, core.vectors.embedder, core.vector_place)
        assert report.embedded == len(MEMORIES)
    finally:
        await core.close()
    before = await recall_on(source, monkeypatch)
    assert any(before)

    out = await cli(["copy-store", "--to", database_url])
    assert f"带过去 {len(MEMORIES)} 条记忆向量" in out
    assert "副本和源一致" in out
    assert sum(line.startswith("recall group:600287") for line in out.splitlines()) == 5

    copy = source.with_changes(database_url=database_url)
    assert await recall_on(copy, monkeypatch) == before

    # Without the vectors the copy answers otherwise: what the check above would catch.
    core = await Yuji.open(copy.with_changes(data_dir=tmp_path / "elsewhere"))
    try:
        async with core.db.write() as conn:
            await conn.execute(delete(memory_vectors))
            await conn.execute(delete(vector_builds))
    finally:
        await core.close()
    assert await recall_on(copy, monkeypatch) != before
