"""Forgetting a person in one chat, on their own request (docs/privacy.md#删除一个人).

`forget_person(scope, user_id)`:
1. names them: their QQ number, every display name they had in this chat, and the
   chat's aliases leading to or from those;
2. retracts every memory of this chat whose subject is one of those names or was
   resolved to them (`subject_person`), and every memory resting only on their messages (history kept, hidden from recall, /why,
   exports and the console's current views);
3. replaces the text of each of their archived messages with a tombstone through the
   one audited path (storage/porting/redaction_repo.py: an audit row per message, which the
   append-only trigger requires), and drops their own names in this chat from the
   person index and their person card here (also when they never spoke here);
4. deletes the image files only their messages link to;
5. takes the forgotten memories out of the full-text index (vectors follow at the
   next `yuji embed`, which skips retracted memories), removes the sentences naming
   them from this chat's consolidation summaries and the lines naming them from the
   chat's current cards (the nightly run repeats the card step);
6. reports what it did and which backups still hold the old data.

It touches nothing of another chat. Every step is idempotent, so a run that was
interrupted completes when started again (the request row stays `running` until then).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TypeVar

from memory_core.archive.store import AttachmentStore
from memory_core.clock import Clock
from memory_core.errors import StorageBusy
from memory_core.memories.service import Memories
from memory_core.ops.manifest import list_manifests
from memory_core.settings import Settings
from memory_core.storage import MemoryRepo, RedactionRepo
from memory_core.storage.engine import Database

from .pack import scrub

MIN_NAME = 2
"""Shorter names are not searched for in summaries and cards (one character would
remove unrelated lines); they are still matched exactly as memory subjects."""
_K = TypeVar("_K")
ROUNDS = 5
"""Times a scrub reads again what other writers kept changing under it, before it
gives up (the request stays running; the next run finishes it)."""
_SENTENCE = re.compile(r"(?<=[。！？!?\n])")


@dataclass(frozen=True, slots=True)
class ForgetReport:
    request_id: int
    scope: str
    user_id: str
    names: tuple[str, ...]
    memories_retracted: int
    memory_ids: tuple[int, ...]
    messages_redacted: int
    messages_total: int
    files_deleted: int
    summaries_rewritten: int
    cards_rewritten: int
    backups: tuple[str, ...]
    """Backups made before this request: they still hold the old text."""

    def to_json(self) -> dict[str, object]:
        data = asdict(self)
        data["names"] = list(self.names)
        data["memory_ids"] = list(self.memory_ids)
        data["backups"] = list(self.backups)
        return data


class Forgetting:
    def __init__(
        self,
        db: Database,
        settings: Settings,
        clock: Clock,
        memories: Memories,
        *,
        memory_repo: MemoryRepo,
        on_change: Callable[[str], None] | None = None,
    ) -> None:
        self.settings = settings
        self.clock = clock
        self.memories = memories
        self.repo = RedactionRepo(db)
        self.memory_repo = memory_repo
        self.store = AttachmentStore(settings.attachments_path)
        self.on_change = on_change

    async def forget_person(
        self, scope: str, user_id: str, *, requested_by: str, delete_files: bool = True
    ) -> ForgetReport:
        user_id = user_id.strip()
        if not user_id:
            raise ValueError("whom to forget: a QQ number")
        names = await self.repo.names_of(scope, user_id, await self.memory_repo.alias_map(scope))
        request = await self.repo.open_request(
            scope, user_id, requested_by, sorted(names), self.clock.now()
        )
        names = set(request.names)
        memory_ids = await self.memory_repo.about_person(scope, user_id, names)
        retracted = 0
        for memory in await self.memories.get_many(scope, memory_ids):
            retracted += memory.status != "retracted"
            await self.memories.forget(
                scope, memory.id, reason="forgotten at the person's own request"
            )
        redacted = 0
        while count := await self.repo.redact_next(request.id, scope, user_id, self.clock.now()):
            redacted += count
        total, _ = await self.repo.messages_of(scope, user_id)
        files = await self._delete_files(scope, user_id) if delete_files else 0
        await self.memory_repo.drop_index_rows(memory_ids)
        searched = searchable(names)
        summaries = await self._scrub_summaries(scope, searched)
        cards = await self.scrub_cards(scope, searched)
        report = ForgetReport(
            request_id=request.id,
            scope=scope,
            user_id=user_id,
            names=tuple(sorted(names)),
            memories_retracted=retracted,
            memory_ids=tuple(memory_ids),
            messages_redacted=redacted,
            messages_total=total,
            files_deleted=files,
            summaries_rewritten=summaries,
            cards_rewritten=cards,
            backups=tuple(self._backups()),
        )
        await self.repo.finish_request(request.id, report.to_json(), self.clock.now())
        await self.repo.purge_log()
        if self.on_change is not None:
            self.on_change(scope)
        return report

    async def scrub_cards(self, scope: str, names: Sequence[str] | None = None) -> int:
        """A new version of each current card that names a forgotten person, without
        those lines (also run by the nightly job after it writes cards). A card that
        gained a version after it was read is read and scrubbed again."""
        if names is None:
            names = searchable(n for r in await self.repo.requests(scope) for n in r.names)
        if not names:
            return 0

        async def read() -> list[tuple[tuple[str, int], str, str]]:
            cards = await self.repo.latest_cards(scope)
            return [((kind, version), text, scrub(text, names)) for kind, version, text in cards]

        async def write(card: tuple[str, int], _old: str, new: str) -> bool:
            kind, version = card
            return await self.repo.add_card_version(scope, kind, version, new, self.clock.now())

        return await _rewrite("cards", read, write)

    async def _scrub_summaries(self, scope: str, names: Sequence[str]) -> int:
        """Each consolidation summary naming them, without those sentences."""

        async def read() -> list[tuple[int, str, str]]:
            found = await self.repo.fragments_naming(scope, names)
            return [(i, text, scrub_sentences(text, names)) for i, text in found]

        return await _rewrite("summaries", read, self.repo.rewrite_fragment)

    async def _delete_files(self, scope: str, user_id: str) -> int:
        files = await self.repo.attachments_only_theirs(scope, user_id)
        paths = [self.store.path_for(sha) for _, sha in files]
        await asyncio.to_thread(_unlink_all, paths)
        await self.repo.mark_cleaned([i for i, _ in files], self.clock.now())
        return len(files)

    def _backups(self) -> list[str]:
        folders = [self.settings.backups_dir]
        if self.settings.backup_mirror:
            folders.append(Path(self.settings.backup_mirror))
        return [str(folder / m.file) for folder in folders for m in list_manifests(folder)]


def searchable(names: Iterable[str]) -> list[str]:
    """Names long enough to search text for, longest first."""
    return sorted({n for n in names if len(n) >= MIN_NAME}, key=len, reverse=True)


def scrub_sentences(text: str, names: Sequence[str]) -> str:
    """The text without each sentence that names one of `names`."""
    return "".join(s for s in _SENTENCE.split(text) if not any(n in s for n in names)).strip()


async def _rewrite(
    what: str,
    read: Callable[[], Awaitable[Sequence[tuple[_K, str, str]]]],
    write: Callable[[_K, str, str], Awaitable[bool]],
) -> int:
    """Write each changed text `read` gives as (key, old, new), where `write` writes
    `new` only while `old` is still there. A text another writer changed after it was
    read is read and scrubbed again, never overwritten with the stale one (two forget
    runs at once each keep the other's removal). Returns the writes made."""
    written = 0
    for _ in range(ROUNDS):
        held = True
        for key, old, new in await read():
            if new == old:
                continue
            if await write(key, old, new):
                written += 1
            else:
                held = False
        if held:
            return written
    raise StorageBusy(
        f"the chat's {what} kept changing during {ROUNDS} scrubs; the forget request "
        "stays open, run it again"
    )


def _unlink_all(paths: Sequence[Path]) -> None:
    for path in paths:
        path.unlink(missing_ok=True)
