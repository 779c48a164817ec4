"""After `yuji copy-store` has copied the rows: the copy gets the source's memory
vectors, and is asked what the source is asked.

The vectors are carried, not embedded again. The memory vector index is derived (a
folder beside SQLite, rows of `memory_vectors` on PostgreSQL) and the copy keeps every
memory id, version and text, so the source's vectors are exactly right for it: saved
into the copy's place, they make the copy's recall the source's at once, with no model
run and in seconds, where embedding every memory on the target would take minutes for
a large store and still only match if the model were byte for byte the same. (The
message vectors are rows of `message_vectors` on both backends and come with the
copy.) The index keeps the fingerprint it was built from, so the bot's first embed
pass on the copy finds nothing to redo.

Then a few questions are recalled on both (`SAMPLES`, taken from the source's own
memories, spread over its chats) at one instant, and each answer is compared as ids,
bands and P: a difference fails the copy.
"""

from __future__ import annotations

import tempfile
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

from memory_core.clock import SystemClock
from memory_core.porting.copy_report import Compared
from memory_core.service import Yuji
from memory_core.settings import Settings
from memory_core.types import RecallResult

SAMPLES = 5
QUESTION_CHARS = 40


@dataclass(frozen=True, slots=True)
class RecallCheck:
    carried: int
    """Memory vectors saved into the copy (0: the source had no index)."""
    answers: tuple[Compared, ...]
    """One line per sample question: what each side recalled."""


async def check_copy(settings: Settings, target_url: str) -> RecallCheck:
    """Carry the vectors of the store of `settings` into the copy at `target_url`,
    then compare their recall (see the module)."""
    async with _opened(settings) as source, _opened(_copy_settings(settings, target_url)) as copy:
        carried = await carry_vectors(source, copy)
        questions = await sample_questions(source)
        now = SystemClock().now()
        answers: list[Compared] = []
        for scope, question in questions:
            mine = await source.recall.recall(scope, question, now=now)
            theirs = await copy.recall.recall(scope, question, now=now)
            answers.append(Compared(f"recall {scope} {question[:12]}", _said(mine), _said(theirs)))
    return RecallCheck(carried, tuple(answers))


async def carry_vectors(source: Yuji, target: Yuji) -> int:
    """The source's memory vector index saved into the target's place; its rows."""
    if source.vectors is None or target.vectors is None:
        return 0
    model_id = source.vectors.embedder_id
    index = await source.vector_place.load(model_id)
    fingerprint = await source.vector_place.source(model_id)
    if index is None or fingerprint is None:
        return 0
    await target.vector_place.save(index, fingerprint, changed=True)
    return len(index.rows)


async def sample_questions(core: Yuji, count: int = SAMPLES) -> list[tuple[str, str]]:
    """Up to `count` (chat, question) pairs: the texts of memories spread evenly over
    the store's memories (in chat and id order), each asked in its own chat."""
    memories = sorted(await core.memory_repo.embeddable(), key=lambda m: (m.scope, m.id))
    if not memories:
        return []
    step = max(len(memories) // count, 1)
    return [(m.scope, m.content[:QUESTION_CHARS]) for m in memories[::step][:count]]


def _said(result: RecallResult) -> str:
    return " ".join(f"#{i.memory.id} {i.band} {i.score:.6f}" for i in result.items) or "-"


def _copy_settings(settings: Settings, target_url: str) -> Settings:
    """The copy as a bot on it would open it: an SQLite file's folder is its data
    folder (its vectors beside it); a PostgreSQL copy keeps its vectors in the database."""
    if target_url.startswith("sqlite"):
        folder = Path(target_url.partition(":///")[2]).parent
        return settings.with_changes(database_url=target_url, data_dir=folder)
    return settings.with_changes(database_url=target_url)


@asynccontextmanager
async def _opened(settings: Settings) -> AsyncGenerator[Yuji]:
    if settings.database_url.startswith("postgresql"):
        # Nothing of a PostgreSQL store lives in the folder: a scratch one, not the
        # source's (whose lock and logs belong to its bot).
        with tempfile.TemporaryDirectory(prefix="yuji-copy-") as scratch:
            core = await Yuji.open(settings.with_changes(data_dir=Path(scratch)), existing=True)
            try:
                yield core
            finally:
                await core.close()
        return
    core = await Yuji.open(settings, existing=True)
    try:
        yield core
    finally:
        await core.close()
