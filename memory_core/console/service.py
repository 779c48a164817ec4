"""`core.console`: what the web console reads and changes, through the core's services.

Every change is made through the same services the commands use (`core.memories`,
`chat_state`) and written to the audit table first-hand, with who asked and from
where. Ids of another chat read as `NotFound`, like everywhere else.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime, timedelta
from typing import Literal
from zoneinfo import ZoneInfo

from memory_core.archive.service import ArchiveService
from memory_core.clock import Clock
from memory_core.consolidation.service import ConsolidationService
from memory_core.errors import LLMError, NotFound, ValidationError
from memory_core.memories.service import FORGET_ACTOR, Memories
from memory_core.nightly.service import NightlyService, last_run_of
from memory_core.nightly.types import LastRun
from memory_core.ops.alerts import AlertGate
from memory_core.ops.backend import Backend
from memory_core.ops.service import OpsService
from memory_core.people.carrying import Carrying, Travels
from memory_core.people.service import People
from memory_core.prompts.nightly import CARD_LABELS
from memory_core.recall.engine import Recall
from memory_core.settings import LiveSettings, Settings
from memory_core.storage import (
    AuditEntry,
    Batch,
    ChatCounts,
    ChatNames,
    ChatRepo,
    ConsoleRepo,
    Diary,
    MemoryFilter,
    MemoryRepo,
    PersonCardsRepo,
    StepRow,
    TimelineEntry,
)
from memory_core.storage.engine import Database
from memory_core.types import EvidenceRef, Experience, Memory, RecallResult, scope_platform

from . import tunables
from .pure import current_name, day_buckets, line_diff
from .views import (
    Actor,
    ArchivePage,
    CardView,
    ChatRow,
    DayChart,
    EvidenceItem,
    Member,
    MemberDetail,
    MemoryDetail,
    MemoryPage,
    Message,
    Overview,
    Related,
    Turn,
)

Action = Literal["retract", "restore", "pin", "unpin", "star", "unstar", "edit"]
ACTIONS: tuple[Action, ...] = ("retract", "restore", "pin", "unpin", "star", "unstar", "edit")
CHART_DAYS = 30
ACTIVITY_TTL_S = 60.0
ALERT_DAYS = 7
FRAGMENT_MESSAGES_SHOWN = 40
ARCHIVE_SHOWN = 500
SEARCH_WINDOW = 20_000
"""Messages one archive text search reads (newest first); the page links to the next."""
NIGHTS_SHOWN = 14
SAMPLE_LABEL = "sample_label"
"""The overrides row marking a sample database (not a setting; never applied as one)."""


@dataclass
class ConsoleService:
    db: Database
    live: LiveSettings
    """The settings the core runs with: the console's tunables change them live."""
    clock: Clock
    archive: ArchiveService
    memories: Memories
    memory_repo: MemoryRepo
    recall: Recall
    consolidation: ConsolidationService
    nightly: NightlyService
    ops: OpsService
    alerts: AlertGate
    chat_state: ChatRepo
    origins: dict[str, tunables.Origin] = field(default_factory=dict[str, tunables.Origin])
    """Where each setting came from (default, `.env`, the environment), as configured."""
    backend: Callable[[], Awaitable[Backend]] | None = None
    """Which database and vector store run (the overview says so)."""
    people: People | None = None
    """The person index the people pages read (one of its own over `db` when None)."""
    carrying: Carrying | None = None
    """What of a member's words travels where (one of its own over `db` when None)."""

    def __post_init__(self) -> None:
        self.repo = ConsoleRepo(self.db, self.memory_repo)
        self.names = ChatNames(self.db)
        """What each chat is called: the plugin writes what the client says, pages read."""
        self.sample_label = ""
        """Set when the database holds `yuji demo`'s sample world: every page says so."""
        self.zone = ZoneInfo(self.settings.timezone)
        self.index = self.people if self.people is not None else People(self.db, self.clock)
        self.person_cards = PersonCardsRepo(self.db)
        self.carry = self.carrying if self.carrying is not None else Carrying(self.db, self.clock)
        self._cached: tuple[float, list[ChatCounts], DayChart] | None = None

    @property
    def settings(self) -> Settings:
        """The settings in effect now (the configured ones with the overrides applied)."""
        return self.live.current

    # --- overview ------------------------------------------------------------------

    async def _activity(self) -> tuple[list[ChatCounts], DayChart]:
        """Per-chat counts and the 30-day chart: whole-table scans, so they are reused
        for ACTIVITY_TTL_S (a page load never waits on them twice a minute)."""
        now = self.clock.now()
        if self._cached is not None and time.monotonic() - self._cached[0] < ACTIVITY_TTL_S:
            return self._cached[1], self._cached[2]
        today = now.astimezone(self.zone).date()
        messages, written = await self.repo.hourly(now - timedelta(days=CHART_DAYS + 1))
        chart = DayChart(
            days=tuple(
                f"{today - timedelta(days=CHART_DAYS - 1 - i):%m-%d}" for i in range(CHART_DAYS)
            ),
            messages=tuple(day_buckets(messages, today, CHART_DAYS, self.zone)),
            memories=tuple(day_buckets(written, today, CHART_DAYS, self.zone)),
        )
        counts = await self.repo.chat_counts()
        self._cached = (time.monotonic(), counts, chart)
        return counts, chart

    def expire_activity(self) -> None:
        """Make the next page read counts and chart afresh (benchmarks measure this)."""
        self._cached = None

    async def chats(self) -> list[ChatRow]:
        states = {s.scope: s for s in await self.chat_state.states()}
        activity = (await self._activity())[0]
        work = await self.repo.chat_work([c.scope for c in activity])
        names = await self.names.names([c.scope for c in activity])
        rows: list[ChatRow] = []
        for counts in activity:
            state = states.get(counts.scope)
            done = work[counts.scope]
            backlog = await self.consolidation.repo.backlog(counts.scope)
            rows.append(
                ChatRow(
                    scope=counts.scope,
                    messages=counts.messages,
                    memories=counts.memories,
                    pending=done.pending,
                    last_batch=done.last_batch,
                    muted_until=state.muted_until if state else None,
                    night=last_run_of(counts.scope, done.steps, done.health),
                    backlog_chars=backlog.chars,
                    lag_s=backlog.lag_s(self.clock.now()),
                    name=names.get(counts.scope, ""),
                )
            )
        return rows

    async def overview(self, online: bool | None = None) -> Overview:
        now = self.clock.now()
        chats = await self.chats()
        return Overview(
            chats=tuple(chats),
            ops=await self.ops.status(),
            alerts=tuple(await self.alerts.history(now - timedelta(days=ALERT_DAYS))),
            chart=(await self._activity())[1],
            online=online,
            backend=await self.backend() if self.backend is not None else None,
            halted=self.consolidation.halted,
            archive=self.archive.health(),
        )

    async def name_chats(self, names: Mapping[str, str]) -> int:
        """Record what the client calls these chats (scope -> name); how many changed."""
        return await self.names.name(names, self.clock.now())

    async def chat_name(self, scope: str) -> str:
        return (await self.names.names([scope])).get(scope, "")

    # --- memories --------------------------------------------------------------------

    async def memory_page(self, scope: str, where: MemoryFilter) -> MemoryPage:
        items, total = await self.repo.memories(scope, where)
        return MemoryPage(tuple(items), total, tuple(await self.repo.subjects(scope)))

    async def search(self, scope: str, question: str) -> RecallResult:
        """Exactly what the reply path would recall for this question now."""
        return await self.recall.recall(scope, question)

    async def scope_of(self, memory_id: int) -> str:
        scope = await self.repo.scope_of_memory(memory_id)
        if scope is None:
            raise NotFound(f"memory #{memory_id} not found")
        return scope

    async def memory(self, scope: str, memory_id: int) -> MemoryDetail:
        memory = await self.memories.get(scope, memory_id)
        versions = await self.memories.history(scope, memory_id)
        if any(v.changed_by == FORGET_ACTOR for v in versions):
            raise NotFound(f"memory #{memory_id} not found")  # forgotten on request
        refs = await self.memories.evidence(scope, memory_id)
        relations = await self.repo.relations_of(scope, memory_id)
        others = {
            m.id: m
            for m in await self.memories.get_many(
                scope, [r.dst_id if r.src_id == memory_id else r.src_id for r in relations]
            )
        }
        aliases = await self.memories.aliases(scope)
        return MemoryDetail(
            memory=memory,
            versions=tuple(versions),
            evidence=tuple([await self._evidence(scope, ref) for ref in refs]),
            relations=tuple(
                Related(
                    relation=r,
                    other=others.get(r.dst_id if r.src_id == memory_id else r.src_id),
                    outgoing=r.src_id == memory_id,
                )
                for r in relations
            ),
            aliases=tuple(sorted((a, c) for a, c in aliases.items() if memory.subject in (a, c))),
        )

    async def _evidence(self, scope: str, ref: EvidenceRef) -> EvidenceItem:
        if ref.experience_id is not None:
            found = await self.archive.get_many(scope, [ref.experience_id])
            if not found:
                return EvidenceItem(ref.role, missing=f"消息 #{ref.experience_id}")
            return EvidenceItem(ref.role, message=(await self._messages(scope, found))[0])
        if ref.memory_id is not None:
            memories = await self.memories.get_many(scope, [ref.memory_id])
            if not memories:
                return EvidenceItem(ref.role, missing=f"记忆 #{ref.memory_id}")
            return EvidenceItem(ref.role, memory=memories[0])
        fragment_id = ref.fragment_id or 0
        fragments = await self.nightly.repo.fragments_by_ids(scope, [fragment_id])
        if not fragments:
            return EvidenceItem(ref.role, missing=f"片段 #{fragment_id}")
        fragment = fragments[0]
        covered = await self.archive.after(scope, fragment.first_id - 1, FRAGMENT_MESSAGES_SHOWN)
        covered = [e for e in covered if e.id <= fragment.last_id]
        return EvidenceItem(
            ref.role,
            fragment=fragment,
            fragment_messages=tuple(await self._messages(scope, covered)),
        )

    async def _messages(self, scope: str, found: Sequence[Experience]) -> list[Message]:
        return [Message(e, tuple(await self.archive.attachments_of(scope, e.id))) for e in found]

    async def act(
        self,
        scope: str,
        memory_id: int,
        action: str,
        actor: Actor,
        *,
        content: str = "",
        reason: str = "",
    ) -> Memory:
        """One action on a memory of this chat, audited (the audit row is written first,
        so an edit's version can name it as its evidence)."""
        if action not in ACTIONS:
            raise ValidationError(f"未知操作 {action!r}")
        await self.memories.get(scope, memory_id)  # NotFound before anything is recorded
        why = reason.strip() or "控制台操作"
        audit_id = await self._audit(
            actor, action, f"{scope}#{memory_id}", content.strip() if action == "edit" else why
        )
        by = f"console:{actor.address}"
        note = f"控制台审计 #{audit_id}: {why}"
        if action == "retract":
            return await self.memories.retract(scope, memory_id, reason=note, changed_by=by)
        if action == "restore":
            return await self.memories.set_status(
                scope, memory_id, "active", reason=note, changed_by=by
            )
        if action == "edit":
            return await self.memories.edit(
                scope, memory_id, content=content, reason=note, changed_by=by
            )
        flag = action.removeprefix("un")
        value = not action.startswith("un")
        return await self.memories.set_flags(
            scope,
            memory_id,
            pinned=value if flag == "pin" else None,
            starred=value if flag == "star" else None,
        )

    async def set_muted(self, scope: str, until: datetime | None, actor: Actor) -> None:
        await self._audit(actor, "mute" if until else "unmute", scope, f"{until or ''}")
        await self.chat_state.set_muted(scope, until, self.clock.now())

    # --- people ------------------------------------------------------------------------

    async def members(self, scope: str) -> list[Member]:
        """Everyone with a name in this chat (the person index), the one seen there last
        first, with the chat's memories about each of them counted per word and their
        card here."""
        counts = await self.repo.person_counts(scope)
        found = await self.index.in_chat(scope)
        cards = await self.person_cards.current(scope, [p.person.user_id for p in found])
        return [
            Member(
                person=p.person,
                name=current_name(p.names),
                names=p.names,
                memories=counts.get(p.person.user_id, {}),
                card=cards.get(p.person.user_id),
            )
            for p in found
        ]

    async def member(self, scope: str, user_id: str) -> MemberDetail:
        """One member of this chat: their names here over time, their card here and
        this chat's memories about them. A user id with no name in this chat (a member
        of another chat, no one) is `NotFound`, as another chat's memory id is."""
        person = await self.index.person_of(scope_platform(scope), user_id)
        names = await self.index.names_of(scope, person) if person is not None else []
        if person is None or not names:
            raise NotFound(f"no member {user_id!r} in {scope}")
        counts = (await self.repo.person_counts(scope)).get(user_id, {})
        card = (await self.person_cards.current(scope, [user_id])).get(user_id)
        return MemberDetail(
            member=Member(person, current_name(names), tuple(names), counts, card),
            memories=tuple(await self.repo.memories_about(scope, user_id)),
        )

    async def travels(self, scope: str, user_id: str) -> Travels:
        """What of a member's own words travels from this chat and where, and what would
        come into it (memory_core/people/carrying.py)."""
        return await self.carry.travels(scope, user_id)

    # --- archive, consolidation and nightly ------------------------------------------------

    async def archive_day(
        self, scope: str, day: date | None, text: str = "", before: int | None = None
    ) -> ArchivePage:
        """The messages of one local day (default today); or, with `text`, those
        containing it among the SEARCH_WINDOW newest messages before `before`."""
        text = text.strip()
        older: int | None = None
        if text:
            found, older = await self.repo.search_messages(
                scope, text, before=before, window=SEARCH_WINDOW, limit=ARCHIVE_SHOWN
            )
        else:
            day = day or self.clock.now().astimezone(self.zone).date()
            start = datetime(day.year, day.month, day.day, tzinfo=self.zone)
            found = await self.repo.day_messages(
                scope, start=start, end=start + timedelta(days=1), limit=ARCHIVE_SHOWN
            )
        messages = [
            Message(
                e,
                tuple(await self.archive.attachments_of(scope, e.id))
                if any(s.get("type") in ("image", "mface") for s in e.segments)
                else (),
            )
            for e in found
        ]
        return ArchivePage(tuple(messages), older, SEARCH_WINDOW if text else 0)

    async def work(self, scope: str) -> tuple[list[Batch], list[StepRow], LastRun]:
        """Consolidation batches (newest first) and the latest nights' steps."""
        batches = await self.consolidation.repo.batches(scope, limit=30)
        grid = await self.repo.night_grid(scope, NIGHTS_SHOWN)
        return batches, grid, await self.nightly.last_run(scope)

    async def run_batch(self, scope: str, actor: Actor) -> str:
        await self._audit(actor, "run_batch", scope, "")
        try:
            report = await self.consolidation.run_once(scope=scope, force=True)
        except LLMError as exc:
            return f"没有配置模型或模型不可用：{exc}"
        return (
            "没有可整理的消息"
            if report is None
            else (
                f"批次 #{report.batch_id}：{report.state}，工具调用 {report.tool_calls} 次，"
                f"拒绝 {report.refused} 次，写入 {len(report.written)} 条"
            )
        )

    async def run_night(self, scope: str, day: str, actor: Actor) -> str:
        await self._audit(actor, "run_night", scope, day)
        try:
            reports = await self.nightly.run(day=day or None, scope=scope)
        except LLMError as exc:
            return f"没有配置模型或模型不可用：{exc}"
        return "; ".join(f"{r.day} {r.step}: {r.outcome}" for r in reports) or "没有要跑的"

    async def close_circuit(self, scope: str, actor: Actor) -> None:
        await self._audit(actor, "close_circuit", scope, "")
        await self.nightly.health.update(
            scope,
            self.clock.now(),
            lambda health: replace(
                health, circuit_open=False, consecutive_failures=0, retry_at=None
            ),
        )

    # --- cards, diaries, timeline, turns --------------------------------------------------

    async def cards(self, scope: str) -> list[CardView]:
        views: list[CardView] = []
        for kind, label in CARD_LABELS.items():
            versions = await self.nightly.card_history(scope, kind)
            diffs = tuple(
                tuple(line_diff(a.content, b.content)) for a, b in itertools.pairwise(versions)
            )
            views.append(CardView(kind, label, tuple(versions), diffs))
        return views

    async def diaries(self, scope: str, limit: int = 30) -> list[Diary]:
        return await self.repo.diaries(scope, limit)

    async def timeline(self, scope: str, limit: int = 100) -> list[TimelineEntry]:
        return await self.repo.timeline(scope, limit)

    async def turns(self, scope: str, limit: int = 10) -> list[Turn]:
        injections = await self.repo.injections(scope, limit)
        ids = {item.memory_id for i in injections for item in i.items}
        memories = {m.id: m for m in await self.memories.get_many(scope, sorted(ids))}
        carried = [x.memory_id for i in injections for x in i.items if x.stage == "carried"]
        if carried:  # another chat's: only while they may still be carried here
            memories.update(await self.carry.recheck(scope, carried))
        triggers = {
            e.id: e
            for e in await self.archive.get_many(
                scope, [i.trigger_experience_id for i in injections if i.trigger_experience_id]
            )
        }
        quoted = {
            e.id: e
            for e in await self.archive.get_many(
                scope, [q.message_id for i in injections for q in i.quotes]
            )
        }
        return [
            Turn(
                injection=i,
                trigger=triggers.get(i.trigger_experience_id or 0),
                memories={k: memories[k] for k in (x.memory_id for x in i.items) if k in memories},
                messages={
                    q.message_id: quoted[q.message_id] for q in i.quotes if q.message_id in quoted
                },
            )
            for i in injections
        ]

    # --- audit and tunables ---------------------------------------------------------------

    async def _audit(self, actor: Actor, action: str, target: str, detail: str) -> int:
        return await self.repo.add_audit(
            at=self.clock.now(),
            address=actor.address,
            via=actor.via,
            action=action,
            target=target,
            detail=detail,
        )

    async def audit(self, limit: int = 200) -> list[AuditEntry]:
        return await self.repo.audit(limit)

    async def settings_views(self) -> list[tunables.SettingView]:
        overrides = await self.repo.overrides()
        return tunables.views(self.settings, overrides, self.origins)

    async def load_overrides(self) -> Settings:
        """Apply the stored overrides to the configured settings (at start-up, and
        after every change): every service holding `live` reads them from now on."""
        overrides = await self.repo.overrides()
        self.sample_label = str(overrides.get(SAMPLE_LABEL, ""))
        self.live.current = tunables.apply(self.live.configured, overrides)
        return self.live.current

    async def set_tunable(self, name: str, raw: str, actor: Actor) -> Settings:
        value = tunables.parse_tunable(name, raw)
        if value is None:  # an optional setting left empty: no console override
            return await self.reset_tunable(name, actor)
        await self._audit(actor, "tunable", name, tunables.shown(name, value))
        await self.repo.set_override(name, value, self.clock.now())
        return await self.load_overrides()

    async def mark_sample(self, label: str) -> None:
        await self.repo.set_override(SAMPLE_LABEL, label, self.clock.now())
        self.sample_label = label

    async def reset_tunable(self, name: str, actor: Actor) -> Settings:
        await self._audit(actor, "tunable_reset", name, "")
        await self.repo.drop_override(name)
        return await self.load_overrides()
