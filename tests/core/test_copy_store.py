"""`yuji copy-store`: every row and id of every table arrives, the target is refused
unless empty (and then left as it was), and a copy cut short at a chunk boundary
resumes with `--resume` into the same store."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import insert, text

from memory_core import FakeClock, Settings
from memory_core.cli import main
from memory_core.errors import ValidationError
from memory_core.porting.copy_report import Compared, CopyReport, report_lines
from memory_core.porting.copy_store import copy_store, refusal_of
from memory_core.storage import migrate
from memory_core.storage.engine import Database
from memory_core.storage.porting.copy_repo import COPIED, TableProgress, store_name
from memory_core.storage.schema import experiences
from tests.conftest import copy_head_database
from tests.core.copy_helpers import GROUP, QUESTIONS, derived, dump, fill_every_table
from tests.core.ops_helpers import experience_rows

from .cores import open_core


class Killed(Exception):
    """Stands for the process dying right after a chunk was committed."""


class KillAfter:
    """A progress callback that kills the copy after `chunks` committed chunks."""

    def __init__(self, chunks: int) -> None:
        self.left = chunks

    def start(self, total: int, done: int) -> None:
        del total, done

    def advance_to(self, done: int) -> None:
        del done
        self.left -= 1
        if self.left == 0:
            raise Killed


@pytest.fixture
async def source(settings: Settings, clock: FakeClock) -> Settings:
    """The configured store, with rows in every table; closed before it is copied."""
    core = await open_core(settings, clock)
    try:
        await fill_every_table(core)
    finally:
        await core.close()
    return settings


def sqlite_url(path: Path) -> str:
    return f"sqlite+aiosqlite:///{path}"


async def rows_of(url: str) -> dict[str, list[tuple[object, ...]]]:
    db = Database(url)
    try:
        return await dump(db)
    finally:
        await db.dispose()


async def indexes_of(url: str) -> tuple[int, list[int]]:
    db = Database(url)
    try:
        return await derived(db)
    finally:
        await db.dispose()


async def recalled(settings: Settings, clock: FakeClock) -> list[list[tuple[object, ...]]]:
    core = await open_core(settings, clock)
    try:
        return [
            [
                (item.memory.id, item.stage, round(item.score, 6), item.band)
                for item in (await core.recall.recall(GROUP, question)).items
            ]
            for question in QUESTIONS
        ]
    finally:
        await core.close()


async def test_every_row_of_every_table_arrives_with_its_id(
    source: Settings, tmp_path: Path, clock: FakeClock
) -> None:
    target = tmp_path / "target" / "yuji.db"
    report = await copy_store(source.sqlalchemy_url, sqlite_url(target), clock=clock)

    assert report.ok, "\n".join(report_lines(report))
    assert not report.resumed
    before, after = await rows_of(source.sqlalchemy_url), await rows_of(sqlite_url(target))
    assert [name for name, rows in before.items() if not rows] == []  # every table is tested
    assert after == before
    assert report.copied == sum(len(rows) for rows in before.values())
    assert {c.name for c in report.counts} == {t.name for t in COPIED}
    assert len(report.checksums) == 2
    indexes = await indexes_of(source.sqlalchemy_url)
    assert indexes[0] > 0
    assert len(indexes[1]) > 60
    assert await indexes_of(sqlite_url(target)) == indexes

    copied = Settings(data_dir=target.parent)
    answers = await recalled(copied, clock)
    assert any(answers), "the questions recall nothing: the comparison below would be empty"
    assert answers == await recalled(source, clock)


async def push_sequence(url: str, position: int) -> None:
    """The store's experiences sequence past its largest id (rows deleted since)."""
    db = Database(url)
    async with db.write() as conn:
        if conn.dialect.name == "sqlite":
            statement = "UPDATE sqlite_sequence SET seq = :v WHERE name = 'experiences'"
        else:
            statement = "SELECT setval(pg_get_serial_sequence('experiences', 'id'), :v)"
        await conn.execute(text(statement), {"v": position})
    await db.dispose()


async def next_id(url: str) -> int:
    """The id the store gives the next message it archives (written, then read back)."""
    db = Database(url)
    async with db.write() as conn:
        await conn.execute(insert(experiences), experience_rows(1, GROUP))
        newest = (await conn.execute(text("SELECT max(id) FROM experiences"))).scalar_one()
    await db.dispose()
    return newest


async def test_new_rows_of_the_copy_never_reuse_an_id_the_source_handed_out(
    source: Settings, tmp_path: Path, clock: FakeClock
) -> None:
    await push_sequence(source.sqlalchemy_url, 5000)
    target = sqlite_url(tmp_path / "target.db")
    await copy_store(source.sqlalchemy_url, target, clock=clock)
    assert await next_id(target) == 5001


async def test_a_target_holding_rows_is_refused_and_left_as_it_was(
    source: Settings, tmp_path: Path, head_database: Path, clock: FakeClock
) -> None:
    folder = copy_head_database(head_database, tmp_path / "other")
    url = Settings(data_dir=folder).sqlalchemy_url
    db = Database(url)
    async with db.write() as conn:
        await conn.execute(insert(experiences), experience_rows(1, "group:5"))
    await db.dispose()
    before = await rows_of(url)

    with pytest.raises(ValidationError, match="is not empty \\(experiences 1 rows\\)"):
        await copy_store(source.sqlalchemy_url, url, clock=clock)
    assert await rows_of(url) == before


async def test_an_older_store_with_rows_is_refused_before_it_is_migrated(
    source: Settings, tmp_path: Path, clock: FakeClock
) -> None:
    url = sqlite_url(tmp_path / "old.db")
    db = Database(url)
    await migrate.upgrade(db, "0015")
    async with db.write() as conn:
        await conn.execute(insert(experiences), experience_rows(2, "group:5"))
    await db.dispose()

    with pytest.raises(ValidationError, match="not empty"):
        await copy_store(source.sqlalchemy_url, url, clock=clock)
    db = Database(url)
    assert await migrate.current_revision(db) == "0015"
    await db.dispose()


async def test_a_copy_killed_between_chunks_resumes_and_ends_identical(
    source: Settings, tmp_path: Path, clock: FakeClock
) -> None:
    target = sqlite_url(tmp_path / "target.db")
    with pytest.raises(Killed):
        await copy_store(
            source.sqlalchemy_url, target, clock=clock, chunk_rows=7, progress=KillAfter(6)
        )
    partial = await rows_of(target)
    copied = sum(len(rows) for rows in partial.values())
    assert 0 < copied < sum(len(rows) for rows in (await rows_of(source.sqlalchemy_url)).values())

    with pytest.raises(ValidationError, match="--resume"):
        await copy_store(source.sqlalchemy_url, target, clock=clock)
    assert await rows_of(target) == partial

    with pytest.raises(Killed):  # killed again, later on
        await copy_store(
            source.sqlalchemy_url,
            target,
            clock=clock,
            resume=True,
            chunk_rows=7,
            progress=KillAfter(4),
        )
    report = await copy_store(source.sqlalchemy_url, target, clock=clock, resume=True)
    assert report.ok
    assert report.resumed
    assert await rows_of(target) == await rows_of(source.sqlalchemy_url)

    with pytest.raises(ValidationError, match="complete copy"):
        await copy_store(source.sqlalchemy_url, target, clock=clock)
    again = await copy_store(source.sqlalchemy_url, target, clock=clock, resume=True)
    assert (again.ok, again.copied) == (True, 0)


async def test_a_resume_refuses_rows_someone_else_wrote_meanwhile(
    source: Settings, tmp_path: Path, clock: FakeClock
) -> None:
    target = sqlite_url(tmp_path / "target.db")
    with pytest.raises(Killed):
        await copy_store(
            source.sqlalchemy_url, target, clock=clock, chunk_rows=7, progress=KillAfter(2)
        )
    db = Database(target)
    async with db.write() as conn:
        await conn.execute(
            insert(experiences), [{**experience_rows(1, "group:5")[0], "id": 10_000}]
        )
    await db.dispose()
    with pytest.raises(ValidationError, match="did not write"):
        await copy_store(source.sqlalchemy_url, target, clock=clock, resume=True)


def test_the_refusals_name_what_to_do() -> None:
    ours = [TableProgress("experiences", "S", (3,), 3, False)]
    assert refusal_of("T", "S", [], {"experiences": 0, "other_app": 0}, resume=False) is None
    assert "other_app 4" in (refusal_of("T", "S", [], {"other_app": 4}, resume=False) or "")
    assert "another store (X)" in (
        refusal_of("T", "S", [TableProgress("experiences", "X", None, 0, False)], {}, resume=True)
        or ""
    )
    assert "--resume" in (refusal_of("T", "S", ours, {"experiences": 3}, resume=False) or "")
    assert refusal_of("T", "S", ours, {"experiences": 3, "memory_fts_x": 9}, resume=True) is None


def test_a_store_is_named_without_its_password_and_by_absolute_path() -> None:
    assert store_name("postgresql+asyncpg://yuji:secret@db/yuji") == (
        "postgresql+asyncpg://yuji:***@db/yuji"
    )
    assert store_name("sqlite+aiosqlite:///data/yuji.db") == (
        f"sqlite+aiosqlite:///{Path('data/yuji.db').resolve()}"
    )


async def test_the_cli_copies_and_refuses_in_one_line(
    source: Settings,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("YUJI_DATA_DIR", str(source.data_dir))
    monkeypatch.setenv("YUJI_DATABASE_URL", source.database_url)
    target = sqlite_url(tmp_path / "copy.db")
    assert await _main(["copy-store", "--to", target]) == 0
    out = capsys.readouterr().out
    assert "副本和源一致" in out
    assert "archive (id, text)" in out

    assert await _main(["copy-store", "--to", target]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1
    assert err[0].startswith("yuji copy-store: ")
    assert "complete copy" in err[0]

    nowhere = f"postgresql+asyncpg://postgres@/yuji?host={tmp_path / 'no-server'}"
    assert await _main(["copy-store", "--to", nowhere]) == 2
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1
    assert err[0].startswith("yuji copy-store: cannot open postgresql+asyncpg://")


async def _main(argv: list[str]) -> int:
    # `main` runs its own event loop: give it a thread of its own.
    import asyncio

    return await asyncio.to_thread(main, argv)


async def test_a_round_trip_through_each_backend_changes_nothing(
    database_url: str, tmp_path: Path, head_database: Path, clock: FakeClock
) -> None:
    """SQLite -> the backend under test (an empty store at head) -> a new SQLite file:
    the same rows, counts, checksums and recall on all three, and the middle store
    numbers new rows after the source's sequence."""
    first = Settings(data_dir=copy_head_database(head_database, tmp_path / "first"))
    core = await open_core(first, clock)
    try:
        await fill_every_table(core)
    finally:
        await core.close()
    await push_sequence(first.sqlalchemy_url, 5000)
    last = sqlite_url(tmp_path / "last" / "yuji.db")

    there = await copy_store(first.sqlalchemy_url, database_url, clock=clock)
    back = await copy_store(database_url, last, clock=clock)

    assert there.ok, "\n".join(report_lines(there))
    assert back.ok, "\n".join(report_lines(back))
    assert there.counts == back.counts
    assert there.checksums == back.checksums
    rows = await rows_of(first.sqlalchemy_url)
    assert await rows_of(database_url) == rows
    assert await rows_of(last) == rows
    assert await indexes_of(database_url) == await indexes_of(first.sqlalchemy_url)
    answers = await recalled(first, clock)
    assert any(answers)
    assert await recalled(first.with_changes(database_url=database_url), clock) == answers
    assert await recalled(Settings(data_dir=tmp_path / "last"), clock) == answers
    assert await next_id(database_url) == 5001
    assert await next_id(last) == 5001


def test_a_difference_is_shown_beside_its_table_and_fails_the_copy() -> None:
    report = CopyReport(
        source="S",
        target="T",
        resumed=False,
        copied=3,
        seconds=1.0,
        indexed=0,
        counts=(Compared("experiences", "3", "3"), Compared("memories", "2", "1")),
        checksums=(Compared("archive (id, text)", "ab" * 32, "ab" * 32),),
    )
    lines = report_lines(report)
    assert not report.ok
    assert next(line.split() for line in lines if "不一致" in line) == [
        "memories",
        "2",
        "1",
        "不一致",
    ]
    assert lines[-1].startswith("不一致")
