"""`yuji demo`'s sample world: a small, fictional, labelled chat world written into an
empty database through the core's own write paths (archive, memories, nightly
results and members' person cards, reply records), so a newcomer sees cards,
memories and recall without a QQ account or a model key. The browser tests load the
same world.
"""

from __future__ import annotations

import json
import struct
import zlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from importlib import resources
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from memory_core.errors import ValidationError
from memory_core.prompts.budget import estimate_tokens
from memory_core.storage import InjectedBlock, InjectedItem, PersonCardsRepo
from memory_core.types import EvidenceRef, NewExperience

if TYPE_CHECKING:
    from memory_core.service import Yuji


@dataclass(frozen=True, slots=True)
class DemoReport:
    label: str
    scopes: tuple[str, ...]
    messages: int
    memories: int
    memory_ids: dict[str, tuple[int, ...]]
    """Per chat, the ids of its memories in the order of the world file."""


def world() -> dict[str, Any]:
    text = (
        resources.files("memory_core.console").joinpath("data/demo_world.json").read_text("utf-8")
    )
    return json.loads(text)


async def load_demo(core: Yuji, data: dict[str, Any] | None = None) -> DemoReport:
    """Write the sample world into `core`'s database (which must hold no messages)."""
    data = data or world()
    if await core.archive.scopes():
        raise ValidationError("the demo world goes into an empty data directory only")
    zone = ZoneInfo(core.settings.timezone)
    now = core.clock.now()
    messages = memories = 0
    ids_by_scope: dict[str, tuple[int, ...]] = {}
    for chat in data["chats"]:
        scope = str(chat["scope"])
        exp_ids = await _messages(core, scope, chat["messages"], now, zone)
        messages += len(exp_ids)
        mem_ids = await _memories(core, scope, chat, exp_ids)
        memories += len(mem_ids)
        ids_by_scope[scope] = tuple(mem_ids)
        await _nightly(core, scope, chat, now, zone)
        await _turns(core, scope, chat["turns"], exp_ids, mem_ids, now)
        if chat.get("name"):
            await core.console.name_chats({scope: str(chat["name"])})
    await core.console.mark_sample(str(data["label"]))
    return DemoReport(
        label=str(data["label"]),
        scopes=tuple(ids_by_scope),
        messages=messages,
        memories=memories,
        memory_ids=ids_by_scope,
    )


def _at(spec: list[int], now: datetime, zone: ZoneInfo) -> datetime:
    days_ago, hour, minute = spec
    day = (now.astimezone(zone) - timedelta(days=days_ago)).date()
    return datetime(day.year, day.month, day.day, hour, minute, tzinfo=zone)


async def _messages(
    core: Yuji, scope: str, rows: list[dict[str, Any]], now: datetime, zone: ZoneInfo
) -> list[int]:
    exps = [
        NewExperience(
            scope=scope,
            fingerprint=f"demo-{i}",
            sender_id=str(row["sender_id"]),
            sender_name=str(row["sender"]),
            text=str(row["text"]),
            sent_at=min(_at(row["at"], now, zone), now),
            segments=[{"type": "text", "data": {"text": row["text"]}}]
            + ([{"type": "image", "data": {"file": "demo.png"}}] if row.get("image") else []),
            is_bot=bool(row.get("is_bot", False)),
        )
        for i, row in enumerate(rows)
    ]
    ids = await core.archive.append_many(exps)
    await core.archive.flush()
    for exp_id, row in zip(ids, rows, strict=True):
        if row.get("image"):
            picture = sample_png()
            digest = core.archive.store.put(picture)
            attachment = await core.archive.repo.record_attachment(
                sha256=digest, mime="image/png", size=len(picture), url="demo://sample.png", at=now
            )
            await core.archive.repo.link(exp_id, attachment, 1)
    return ids


async def _memories(core: Yuji, scope: str, chat: dict[str, Any], exp_ids: list[int]) -> list[int]:
    ids: list[int] = []
    for row in chat["memories"]:
        written = await core.memories.write(
            scope,
            type=row["type"],
            subject=row["subject"],
            content=row["content"],
            evidence=[EvidenceRef(experience_id=exp_ids[i]) for i in row["evidence"]],
            importance=float(row.get("importance", 0.5)),
            origin="demo",
            changed_by="demo",
        )
        ids.append(written.memory.id)
    for rel in chat["relations"]:
        await core.memories.relate(
            scope,
            ids[rel["src"]],
            ids[rel["dst"]],
            kind=rel["kind"],
            reason=rel["reason"],
            changed_by="demo",
        )
    for alias, canonical in chat["aliases"]:
        await core.memories.add_alias(scope, alias, canonical)
    return ids


async def _nightly(
    core: Yuji, scope: str, chat: dict[str, Any], now: datetime, zone: ZoneInfo
) -> None:
    repo = core.nightly.repo

    def day(days_ago: int) -> str:
        return f"{(now.astimezone(zone) - timedelta(days=days_ago)).date():%Y-%m-%d}"

    for entry in chat["cards"]:
        await repo.write_cards(scope, day(entry["day"]), entry["cards"], None, now, {})
    for entry in chat["diaries"]:
        await repo.write_diary(scope, day(entry["day"]), entry["content"], [], now, {})
    for entry in chat["timeline"]:
        await repo.write_cards(scope, day(entry["day"]), {}, entry["content"], now, {})
    cards = PersonCardsRepo(core.db)
    for entry in chat.get("person_cards", []):  # optional: older world files have none
        await cards.append(scope, str(entry["user_id"]), entry["content"], day(entry["day"]), now)


async def _turns(
    core: Yuji,
    scope: str,
    turns: list[dict[str, Any]],
    exp_ids: list[int],
    mem_ids: list[int],
    now: datetime,
) -> None:
    for turn in turns:
        cited = {mem_ids[i] for i in turn["cited"]}
        items = [
            InjectedItem(mem_ids[i], "lexical", 1.0, "原词：样例", mem_ids[i] in cited)
            for i in turn["memories"]
        ]
        blocks = [
            InjectedBlock(name, estimate_tokens(text), _with_ids(text, mem_ids))
            for name, text in turn["blocks"]
        ]
        await core.chat_state.add_injection(
            scope,
            trigger_experience_id=exp_ids[turn["message"]],
            reply_fingerprint=None,
            query=turn["query"],
            items=items,
            now=now,
            blocks=blocks,
        )


def _with_ids(text: str, mem_ids: list[int]) -> str:
    for i, memory_id in enumerate(mem_ids):
        text = text.replace(f"MEM{i}", str(memory_id))
    return text


def sample_png(size: int = 48) -> bytes:
    """A small orange-and-black checked PNG (a stand-in cat photo), made here so the
    demo ships no binary file."""
    rows = b"".join(
        b"\x00"
        + b"".join(
            (b"\xf0\x8c\x2e" if (x // 8 + y // 8) % 2 == 0 else b"\x22\x22\x22")
            for x in range(size)
        )
        for y in range(size)
    )

    def chunk(kind: bytes, body: bytes) -> bytes:
        return (
            struct.pack(">I", len(body)) + kind + body + struct.pack(">I", zlib.crc32(kind + body))
        )

    header = struct.pack(">IIBBBBB", size, size, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )
