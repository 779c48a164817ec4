"""`core.chat_commands`: what each slash command does, answered as one Chinese text.

The plugin checks who may run a command (it knows roles and SUPERUSERS), passes the
chat's scope, and sends back the returned text; errors are raised from the error
tree and worded by `texts.error_text`. Every read and write is scoped: an id of
another chat is `NotFound` (`ScopeViolation`, its subclass, where the core can tell),
worded exactly like an id that never existed.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Protocol
from zoneinfo import ZoneInfo

from memory_core.clock import Clock
from memory_core.errors import NotPermitted, ScopeViolation, UsageError, ValidationError
from memory_core.settings import LiveSettings, Settings
from memory_core.storage import ChatRepo
from memory_core.types import Asker, EvidenceRef, Memory, NewExperience, is_group_scope

from . import texts
from .duration import parse_duration
from .ports import ArchivePort, CommandMemoriesPort, RecallPort
from .service import recall_for_reply
from .texts import WhyItem, WhyQuote
from .wake import MUTE_FOREVER, is_muted

REMEMBER_MAX_CHARS = 500


class CardLike(Protocol):
    @property
    def kind(self) -> str: ...

    @property
    def content(self) -> str: ...


class CardsPort(Protocol):
    async def cards(self, scope: str) -> Sequence[CardLike]: ...


class PersonCardLike(Protocol):
    @property
    def version(self) -> int: ...

    @property
    def content(self) -> str: ...

    @property
    def day(self) -> str | None: ...


class PersonCardsPort(Protocol):
    """`core.person_cards`: a member's card in a group, and who answers to a name."""

    async def card_of(self, scope: str, user_id: str) -> tuple[str, PersonCardLike | None]: ...

    async def members_named(self, scope: str, name: str) -> list[str]: ...


SELF_WORDS = frozenset({"我", "me", "自己", "我自己"})
"""`/cards 我`: the asker's own card."""


CarriedReader = Callable[[str, Sequence[int]], Awaitable[Mapping[int, Memory]]]
"""Of these memory ids, those still carried into the chat (memory_core/people/carrying.py)."""


class StatusPort(Protocol):
    async def scope_status(self, scope: str) -> texts.ScopeStatus: ...


@dataclass(frozen=True, slots=True)
class Remembered:
    text: str
    memory_id: int


class ChatCommands:
    def __init__(
        self,
        *,
        settings: LiveSettings,
        clock: Clock,
        repo: ChatRepo,
        archive: ArchivePort,
        memories: CommandMemoriesPort,
        recall: RecallPort,
        status: StatusPort,
        cards: CardsPort | None = None,
        person_cards: PersonCardsPort | None = None,
        carried: CarriedReader | None = None,
    ) -> None:
        self.live = settings
        self.clock = clock
        self.repo = repo
        self.archive = archive
        self.memories = memories
        self.recall = recall
        self.status_source = status
        self.cards_source = cards
        self.person_cards = person_cards
        self.carried = carried
        """`core.carrying.recheck`: the carried memories /why may show here again."""
        self.zone = ZoneInfo(self.settings.timezone)

    @property
    def settings(self) -> Settings:
        """The settings in effect now (the recall limit moves live)."""
        return self.live.current

    # --- mute ---------------------------------------------------------------------

    async def mute(self, scope: str, raw_duration: str = "") -> str:
        now = self.clock.now()
        until: datetime | None = None
        if raw_duration.strip():
            try:
                until = now + parse_duration(raw_duration)
            except ValidationError as exc:
                raise UsageError("时长看不懂，比如 /mute 30m、/mute 2h、/mute 1天") from exc
        await self.repo.set_muted(scope, until or MUTE_FOREVER, now)
        return texts.mute_text(until, now, self.zone)

    async def unmute(self, scope: str) -> str:
        now = self.clock.now()
        state = await self.repo.state(scope)
        await self.repo.set_muted(scope, None, now)
        return texts.unmute_text(is_muted(state.muted_until, now))

    async def is_muted(self, scope: str) -> bool:
        return is_muted((await self.repo.state(scope)).muted_until, self.clock.now())

    # --- memories -----------------------------------------------------------------

    async def remember(
        self, scope: str, content: str, *, command: NewExperience, by: str
    ) -> Remembered:
        """A memory now, with the command message itself as its evidence."""
        content = content.strip()
        if not content:
            raise UsageError("用法：/remember <要记住的话>")
        if len(content) > REMEMBER_MAX_CHARS:
            raise UsageError(f"太长了，一次最多记 {REMEMBER_MAX_CHARS} 个字。")
        if command.scope != scope:
            raise ScopeViolation("command message of another chat")
        archived = await self.archive.by_fingerprint(scope, command.fingerprint)
        evidence_id = archived.id if archived is not None else await self.archive.append(command)
        outcome = await self.memories.write(
            scope,
            type="fact",
            subject="group" if is_group_scope(scope) else command.sender_id,
            content=content,
            evidence=[EvidenceRef(experience_id=evidence_id)],
            importance=0.9,
            confidence=1.0,
            origin="admin",
            changed_by=f"admin:{by}",
        )
        text = texts.remember_text(outcome.memory, outcome.near_duplicate, outcome.similarity)
        return Remembered(text=text, memory_id=outcome.memory.id)

    async def forget(self, scope: str, raw_id: str, *, by: str) -> str:
        memory_id = texts.parse_memory_id(raw_id)
        memory = await self.memories.get(scope, memory_id)
        if memory.status == "retracted":
            return f"#{memory.id} 早就忘掉了。"
        retracted = await self.memories.retract(
            scope, memory_id, reason=f"/forget by {by}", changed_by=f"admin:{by}"
        )
        return texts.forget_text(retracted)

    async def recall_preview(
        self,
        scope: str,
        question: str,
        asker: Asker | None = None,
        mentioned: Sequence[str] = (),
    ) -> str:
        """`/recall`: what a wake would be given (`mentioned`: the members it @s)."""
        question = question.strip()
        if not question:
            raise UsageError("用法：/recall <问题>，看看这句话会让我想起什么")
        items = await recall_for_reply(
            self.recall,
            scope,
            question,
            now=self.clock.now(),
            limit=self.settings.recall_limit,
            asker=asker,
            mentioned=mentioned,
        )
        return texts.recall_text(items)

    async def why(self, scope: str, reply_fingerprint: str | None = None) -> str:
        """What went into the bot's last reply here (or into the quoted bot message)."""
        injection = None
        if reply_fingerprint:
            injection = await self.repo.injection_for_reply(scope, reply_fingerprint)
        if injection is None:
            injection = await self.repo.last_injection(scope)
        now = self.clock.now()
        if injection is None:
            return texts.why_text(None, None, self.zone, now)
        ids = [item.memory_id for item in injection.items]
        # A retracted memory (taken back, or a forgotten person's) is not shown again.
        found = {
            m.id: m for m in await self.memories.get_many(scope, ids) if m.status != "retracted"
        }
        carried = [item.memory_id for item in injection.items if item.stage == "carried"]
        if carried and self.carried is not None:  # only what may still be carried here
            found.update(await self.carried(scope, carried))
        items = [
            WhyItem(
                memory_id=item.memory_id,
                stage=item.stage,
                score=item.score,
                reason=item.reason if item.memory_id in found else "",
                cited=item.cited,
                content=found[item.memory_id].content if item.memory_id in found else None,
            )
            for item in injection.items
        ]
        said = {
            e.id: e
            for e in await self.archive.get_many(scope, [q.message_id for q in injection.quotes])
        }
        quoted = [
            WhyQuote(
                message_id=q.message_id,
                score=q.score,
                band=q.band,
                message=said.get(q.message_id),
            )
            for q in injection.quotes
        ]
        return texts.why_text(items, injection.created_at, self.zone, now, quoted)

    async def cards(
        self,
        scope: str,
        target: str = "",
        *,
        asker: str | None = None,
        mentioned: Sequence[str] = (),
        is_admin: Callable[[], Awaitable[bool]] | None = None,
    ) -> str:
        """The chat's seven cards; with a member named (`mentioned`: @-mentioned ids,
        else `target`: a name, or 我), that member's card in this group. A member sees
        their own card; another's only when `is_admin()` says the asker administers
        the group (it is asked only then)."""
        target = target.strip()
        if not target and not mentioned:
            cards = await self.cards_source.cards(scope) if self.cards_source is not None else []
            return texts.cards_text([(card.kind, card.content) for card in cards])
        if not is_group_scope(scope):
            raise UsageError(texts.GROUP_ONLY)
        if self.person_cards is None:
            raise UsageError("人物卡片还没开启。")
        user_id = await self._member(scope, target, mentioned, asker)
        if user_id != asker and (is_admin is None or not await is_admin()):
            raise NotPermitted(texts.OWN_CARD_ONLY)
        name, card = await self.person_cards.card_of(scope, user_id)
        if card is None:
            return texts.person_card_text(name, None)
        return texts.person_card_text(name, card.content, card.version, card.day)

    async def _member(
        self, scope: str, target: str, mentioned: Sequence[str], asker: str | None
    ) -> str:
        """The one member `/cards` names: the first @-mention, else 我, else a name
        exactly one member of this group answers to."""
        if mentioned:
            return mentioned[0]
        if target.lower() in SELF_WORDS and asker:
            return asker
        assert self.person_cards is not None
        found = await self.person_cards.members_named(scope, target)
        if not found:
            raise UsageError(f"这个群里没有找到叫「{target}」的人。")
        if len(found) > 1:
            raise UsageError(f"这个群里有好几个人叫「{target}」，请用 @ 指明是谁。")
        return found[0]

    async def status(self, scope: str) -> str:
        status = await self.status_source.scope_status(scope)
        return texts.status_text(status, self.zone, self.clock.now())
