"""Reading nonebot-plugin-chatrecorder's database (its 0.7 schema, with
nonebot-plugin-uninfo's session tables), as SQLAlchemy Core mirrors of its models.

Read-only: yuji never writes into another plugin's database. A SQLite file is opened
through SQLite's read-only URI (`mode=ro`), which also never creates one: a mistyped
path is refused in one line instead of leaving an empty database there.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sqlalchemy import (
    JSON,
    Column,
    DateTime,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    func,
    inspect,
    select,
)
from sqlalchemy.engine import URL, Connection, make_url
from sqlalchemy.exc import DBAPIError
from sqlalchemy.ext.asyncio import AsyncEngine, create_async_engine

from memory_core.errors import ValidationError

ONEBOT_V11 = "OneBot V11"
"""nonebot_plugin_uninfo.SupportAdapter.onebot11."""
PRIVATE, GROUP = 0, 1
"""nonebot_plugin_uninfo.SceneType values yuji archives."""
PAGE = 2000

_meta = MetaData()
records = Table(
    "nonebot_plugin_chatrecorder_messagerecord_v2",
    _meta,
    Column("id", Integer, primary_key=True),
    Column("session_persist_id", Integer),
    Column("time", DateTime),
    Column("type", String(32)),
    Column("message_id", String(255)),
    Column("message", JSON),
    Column("plain_text", Text),
)
bots = Table(
    "nonebot_plugin_uninfo_botmodel",
    _meta,
    Column("id", Integer, primary_key=True),
    Column("self_id", String(64)),
    Column("adapter", String(32)),
    Column("scope", String(32)),
)
scenes = Table(
    "nonebot_plugin_uninfo_scenemodel",
    _meta,
    Column("id", Integer, primary_key=True),
    Column("bot_persist_id", Integer),
    Column("parent_scene_persist_id", Integer),
    Column("scene_id", String(64)),
    Column("scene_type", Integer),
    Column("scene_data", JSON),
)
users = Table(
    "nonebot_plugin_uninfo_usermodel",
    _meta,
    Column("id", Integer, primary_key=True),
    Column("bot_persist_id", Integer),
    Column("user_id", String(64)),
    Column("user_data", JSON),
)
sessions = Table(
    "nonebot_plugin_uninfo_sessionmodel",
    _meta,
    Column("id", Integer, primary_key=True),
    Column("bot_persist_id", Integer),
    Column("scene_persist_id", Integer),
    Column("user_persist_id", Integer),
    Column("member_data", JSON),
)


@dataclass(frozen=True, slots=True)
class RecordRow:
    id: int
    time: datetime
    sent_by_bot: bool
    message_id: str
    message: Any
    plain_text: str
    scene_type: int
    scene_id: str
    user_id: str
    user_data: Any
    member_data: Any


def async_url(url: str) -> str:
    """The URL with an async driver (a plain `sqlite:///x.db` works)."""
    try:
        parsed = make_url(url)
    except Exception:
        raise ValidationError(f"not a database URL: {url!r}") from None
    drivers = {
        "sqlite": "sqlite+aiosqlite",
        "postgresql": "postgresql+asyncpg",
        "mysql": "mysql+aiomysql",
    }
    name = drivers.get(parsed.drivername, parsed.drivername)
    return parsed.set(drivername=name).render_as_string(hide_password=False)


def read_only(url: str) -> URL:
    """`url` (already async) with a SQLite file opened read-only; refuses a missing one."""
    parsed = make_url(url)
    if not parsed.drivername.startswith("sqlite") or parsed.database in (None, "", ":memory:"):
        return parsed
    path = Path(parsed.database or "")
    if not path.is_file():
        raise ValidationError(f"no chatrecorder database at {path}: no such file")
    uri = f"file:{quote(str(path.resolve()))}"
    return parsed.set(database=uri, query={**parsed.query, "mode": "ro", "uri": "true"})


class ChatrecorderReader:
    def __init__(self, url: str) -> None:
        self.url = async_url(url)
        self.label = make_url(self.url).render_as_string(hide_password=True)
        self.engine: AsyncEngine = create_async_engine(read_only(self.url))

    async def close(self) -> None:
        await self.engine.dispose()

    def _where(self, scope: str | None) -> list[Any]:
        where: list[Any] = [bots.c.adapter == ONEBOT_V11, scenes.c.scene_type.in_([PRIVATE, GROUP])]
        if scope is not None:
            kind, _, number = scope.partition(":")
            where += [
                scenes.c.scene_type == (GROUP if kind == "group" else PRIVATE),
                scenes.c.scene_id == number,
            ]
        return where

    def _joined(self, *columns: Any) -> Any:
        return (
            select(*columns)
            .select_from(records)
            .join(sessions, sessions.c.id == records.c.session_persist_id)
            .join(bots, bots.c.id == sessions.c.bot_persist_id)
            .join(scenes, scenes.c.id == sessions.c.scene_persist_id)
            .join(users, users.c.id == sessions.c.user_persist_id)
        )

    async def extent(self, scope: str | None) -> tuple[int, int]:
        """(records to read, highest record id) of OneBot v11 groups and private chats."""
        try:
            async with self.engine.connect() as conn:
                missing = await conn.run_sync(_missing_tables)
                if missing:
                    raise ValidationError(
                        f"{self.label} is not a nonebot-plugin-chatrecorder 0.7 database "
                        f"(no table {', '.join(missing)})"
                    )
                row = (
                    await conn.execute(
                        self._joined(func.count(), func.max(records.c.id)).where(
                            *self._where(scope)
                        )
                    )
                ).one()
        except ValidationError:
            raise
        except Exception as error:
            raise ValidationError(
                f"cannot read a chatrecorder database at {self.label}: {_first_line(error)}"
            ) from None
        values: tuple[Any, ...] = tuple(row)
        return int(values[0] or 0), int(values[1] or 0)

    async def rows(self, after: int, scope: str | None) -> AsyncIterator[RecordRow]:
        """Every record with id > after, oldest first, a page at a time."""
        last = after
        while True:
            async with self.engine.connect() as conn:
                page = (
                    await conn.execute(
                        self._joined(
                            records.c.id,
                            records.c.time,
                            records.c.type,
                            records.c.message_id,
                            records.c.message,
                            records.c.plain_text,
                            scenes.c.scene_type,
                            scenes.c.scene_id,
                            users.c.user_id,
                            users.c.user_data,
                            sessions.c.member_data,
                        )
                        .where(records.c.id > last, *self._where(scope))
                        .order_by(records.c.id)
                        .limit(PAGE)
                    )
                ).all()
            if not page:
                return
            for r in page:
                yield RecordRow(
                    id=int(r.id),
                    time=_utc(r.time),
                    sent_by_bot=r.type == "message_sent",
                    message_id=str(r.message_id),
                    message=r.message,
                    plain_text=str(r.plain_text or ""),
                    scene_type=int(r.scene_type),
                    scene_id=str(r.scene_id),
                    user_id=str(r.user_id),
                    user_data=r.user_data,
                    member_data=r.member_data,
                )
            last = int(page[-1].id)


def _missing_tables(conn: Connection) -> list[str]:
    present = set(inspect(conn).get_table_names())
    return sorted(name for name in _meta.tables if name not in present)


def _first_line(error: Exception) -> str:
    """The driver's own words, without SQLAlchemy's appended statement and link."""
    cause = error.orig if isinstance(error, DBAPIError) else error
    return (str(cause).strip().splitlines() or [type(cause).__name__])[0]


def _utc(value: datetime) -> datetime:
    """chatrecorder stores UTC without a zone."""
    return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
