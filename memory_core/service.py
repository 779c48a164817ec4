"""`Yuji`: the core opened as one object, the thing plugins and the CLI hold.

It owns the database handle, the settings and the injected side effects, and
exposes each concept's service as an attribute. Opening it applies migrations and
wires every service once, by constructor arguments.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from zoneinfo import ZoneInfo

from .archive.fetcher import AttachmentFetcher
from .archive.service import ArchiveService
from .chat.carry_commands import CarryCommands
from .chat.commands import ChatCommands
from .chat.service import ChatService
from .chat.sources import ChatContextSource, ChatStatusSource, vector_mode_line
from .clock import Clock, SystemClock
from .console.service import ConsoleService
from .console.tunables import Origin
from .consolidation.service import ConsolidationService
from .deployment.service import Deployment
from .followups import FollowUps, Unprompted
from .llm.base import LLMClient
from .llm.models import Models, open_models
from .llm.usage import UsageReport, human_tokens
from .memories.service import Memories
from .nightly.service import NightlyService
from .ops.alerts import AlertGate, AlertSink
from .ops.backend import Backend
from .ops.backend import describe as describe_backend
from .ops.capacity import StorageFullAlerts
from .ops.outage import OutageAlerts
from .ops.service import OpsService
from .ops.store_check import check_store
from .ops.telegram import make_alert_sink
from .people.cards import PersonCards
from .people.carrying import Carrying
from .people.service import People
from .porting.service import Porting
from .providers import ThreadedUsage, reranker_from_settings, reranker_id
from .recall.carried import CarriedStage
from .recall.engine import Recall
from .recall.judge import Judge
from .recall.quotes import RecentSource
from .recall.relevance import LEXICAL, RelevanceModel
from .recall.relevance import load as load_weights
from .recall.rerank import RerankStage
from .settings import LiveSettings, Settings
from .storage import (
    AlertRepo,
    ChatRepo,
    JobTotals,
    MemoryRepo,
    MessageSearch,
    UsageRepo,
    migrate,
)
from .storage.engine import Database
from .vectors.dense import Dense
from .vectors.embedder import Embedder
from .vectors.factory import embedder_from_settings
from .vectors.messages import MessageVectors
from .vectors.place import IndexPlace
from .vectors.places import place_for
from .vision.service import VisionService

RERANK_ALERT = "recall-reranker"


@dataclass
class Yuji:
    live: LiveSettings
    """The settings in effect: configured, with the console's overrides (`settings`)."""
    db: Database
    clock: Clock
    llm: LLMClient | None
    """The chat job's model, unmetered; None when none is configured."""
    archive: ArchiveService
    people: People
    """The person index: who answers to a name in a chat, a person's names there."""
    carrying: Carrying
    """A person's own words in their other chats: choices, blocks, the scope function."""
    alerts: AlertGate
    """Everyone's `fire(key, text)` / `recover(key, text)`; deduplicated, never blocking."""
    ops: OpsService
    memory_repo: MemoryRepo
    """Every query of the memory aggregate, one for all the services (writes go through
    `memories`)."""
    memories: Memories
    recall: Recall
    """At most five memories of one chat for one question (stage-tagged, explained)."""
    consolidation: ConsolidationService
    """Background batches: run_once / reconcile / watchdog / status."""
    nightly: NightlyService
    """The nightly pipeline: run/retry_due, blocks for the chat prompt, cards, last_run."""
    chat_state: ChatRepo
    """Per chat: muted until, last wake and reply; what each reply was given (/why)."""
    chat_status: ChatStatusSource
    chat: ChatService
    """Wake rules and the reply pipeline: respond(incoming, send); backfill."""
    chat_commands: ChatCommands
    carry_commands: CarryCommands
    """`/carry` and its forms: a person's choices, a group's block."""
    """What each slash command does, answered as one Chinese text."""
    vectors: Dense | None
    """Dense retrieval; None when YUJI_VECTOR_MODE=off (the model is never loaded)."""
    message_vectors: MessageVectors | None
    """Vectors of recent chat not consolidated yet (`embed_pending`, run by the bot in
    the background); None when YUJI_VECTOR_MODE=off."""
    vector_place: IndexPlace
    """Where the memory vector index lives (a folder, or the database on PostgreSQL)."""
    usage: UsageReport
    """Tokens per job (today, 7 days) and the cache-hit share, from one row per call."""
    porting: Porting
    """Imports (QQ exports, chatrecorder, facts, packs), exports, forgetting a person."""
    console: ConsoleService
    """The web console's reads and audited changes; its tunables change `live` (no restart)."""
    vision: VisionService
    """Describes new images once per hash (`run_once`) and shows them (`texts`)."""
    models: Models
    """Each job's model (chat, consolidation, nightly, vision), metered; None = unset."""
    deployment: Deployment
    """This process among those sharing the store: leadership (the bot starts it; the
    CLI never leads), the deployment's accounts, wake claims."""
    provider_usage: ThreadedUsage
    """Where the embeddings API and the reranker count their calls (llm_usage)."""
    followups: FollowUps
    """Members' own dated plans the persona may ask about: what is due, what was done."""
    unprompted: Unprompted
    """Asking a due follow-up unprompted where allowed (`run_once(send)`, the leader's job)."""

    @classmethod
    async def open(
        cls,
        settings: Settings,
        *,
        clock: Clock | None = None,
        llm: LLMClient | None = None,
        fetcher: AttachmentFetcher | None = None,
        alert_sink: AlertSink | None = None,
        embedder: Embedder | None = None,
        relevance: RelevanceModel | None = None,
        lexical_relevance: RelevanceModel | None = None,
        vision: LLMClient | None = None,
        origins: Mapping[str, Origin] | None = None,
        existing: bool = False,
    ) -> Yuji:
        """`llm` (tests, benchmarks) replaces the chat, consolidation and nightly
        models, `vision` the vision model; else each job's comes from `settings`.
        `relevance` / `lexical_relevance` replace the relevance weights (with and
        without dense features) that recall would otherwise load for the model in use.
        `origins` says where each setting came from (the console shows it; the plugin
        knows, the core does not read the environment). `existing`: only open a store
        that is there (the commands that only read), never make one."""
        # One line naming the fix, before anything is made (not a migration's
        # traceback half-way); the same check bot.py and the plugin run first.
        await check_store(settings, existing=existing)
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        db = Database(settings.sqlalchemy_url, busy_timeout_s=settings.db_busy_timeout_s)
        try:
            await migrate.upgrade(db)
        except BaseException:  # busy, full, a bad file: close what was opened
            await db.dispose()
            raise
        clock = clock or SystemClock()
        live = LiveSettings(settings)
        usage_repo = UsageRepo(db)
        models = open_models(settings, sink=usage_repo, clock=clock, injected=llm, vision=vision)
        people = People(db, clock)
        carrying = Carrying(db, clock)
        archive = ArchiveService(db, settings, clock, fetcher=fetcher, people=people)
        images = VisionService(
            db,
            clock,
            llm=models.vision,
            model=models.vision.model if models.vision else "",
            store=archive.store,
            timeout_s=settings.llm_timeout_s,
        )
        alerts = AlertGate(
            alert_sink or make_alert_sink(settings),
            clock,
            settings.alert_dedup_s,
            log=AlertRepo(db),
        )
        # The one link made after construction, for a real cycle: the gate logs into
        # the database, and the database tells the gate when it is full.
        storage_alerts = StorageFullAlerts(alerts)
        db.on_full, db.on_writable = storage_alerts.full, storage_alerts.writable
        outage_alerts = OutageAlerts(alerts)
        db.on_down, db.on_up = outage_alerts.down, outage_alerts.up
        ops = OpsService(db, settings, clock, alerts)
        vector_place = await place_for(db, settings.vectors_dir, clock)
        provider_usage = ThreadedUsage(usage_repo, clock)
        vectors = (
            Dense(settings, embedder=embedder, place=vector_place, record=provider_usage)
            if settings.vector_mode != "off"
            else None
        )
        reranker = reranker_from_settings(settings, provider_usage)
        memory_repo = MemoryRepo(db)
        message_vectors = MessageVectors(db, vectors) if vectors is not None else None
        recall = Recall(
            db,
            clock,
            live,
            repo=memory_repo,
            dense=vectors,
            model=relevance,
            lexical_model=lexical_relevance,
            judge=Judge(models.judge, settings.recall_judge_timeout_s)
            if models.judge is not None
            else None,
            recent=RecentSource(MessageSearch(db), message_vectors, settings.recent_messages),
            rerank=RerankStage(
                reranker,
                candidates=settings.rerank_candidates,
                timeout_s=settings.rerank_timeout_s,
                alert=lambda text: alerts.fire(RERANK_ALERT, text),
            )
            if reranker is not None
            else None,
            carried=CarriedStage(carrying, vectors),
        )

        def memories_changed(scope: str) -> None:
            recall.invalidate(scope)
            carrying.memories_changed(scope)

        memories = Memories(
            db,
            clock,
            settings,
            repo=memory_repo,
            search=recall.search,
            on_change=memories_changed,
        )
        consolidation = ConsolidationService(
            db,
            live,
            clock,
            archive=archive,
            memories=memories,
            llm=models.consolidation,
            alerts=alerts,
            describe=images.texts,
            usage=usage_repo,
        )
        archive.writer.on_commit.append(consolidation.wake.set)
        porting = Porting(
            db,
            settings,
            clock,
            archive=archive,
            memories=memories,
            memory_repo=memory_repo,
            on_change=memories_changed,
        )
        nightly = NightlyService(
            db,
            live,
            clock,
            memory_repo=memory_repo,
            memories=memories,
            archive=archive,
            llm=models.nightly,
            alerts=alerts,
            after_cards=porting.forgetting.scrub_cards,
        )
        chat_state = ChatRepo(db)
        person_cards = PersonCards(db)

        async def backend() -> Backend:
            return await _backend(db, vectors, recall, usage)

        async def backend_lines() -> Mapping[str, str]:
            return (await backend()).lines()

        usage = UsageReport(usage_repo, clock, ZoneInfo(settings.timezone))
        followups = FollowUps(db, live, clock)
        chat_status = ChatStatusSource(
            consolidation,
            chat_state,
            extras=(
                archive.status_lines,
                consolidation.status_lines,
                nightly.status_lines,
                ops.status_lines,
                vector_mode_line(settings, backend_lines),
                usage.status_lines,
                memories.status_lines,
                followups.status_lines,
            ),
        )
        deployment = Deployment(db, clock, alerts)
        outage_alerts.speaks = deployment.leader.speaks_for_deployment
        chat = ChatService(
            settings=live,
            clock=clock,
            repo=chat_state,
            archive=archive,
            recall=recall,
            memories=memories,
            context=ChatContextSource(memory_repo, consolidation),
            llm=models.chat,
            blocks=nightly,
            describe=images.texts,
            deployment=deployment,
            people=person_cards,
            followups=followups,
        )
        chat_commands = ChatCommands(
            settings=live,
            clock=clock,
            repo=chat_state,
            archive=archive,
            memories=memories,
            recall=recall,
            status=chat_status,
            cards=nightly,
            person_cards=person_cards,
            carried=carrying.recheck,
        )
        console = ConsoleService(
            db=db,
            live=live,
            clock=clock,
            archive=archive,
            memories=memories,
            memory_repo=memory_repo,
            recall=recall,
            consolidation=consolidation,
            nightly=nightly,
            ops=ops,
            alerts=alerts,
            chat_state=chat_state,
            origins=dict(origins or {}),
            backend=backend,
            people=people,
            carrying=carrying,
        )
        core = cls(
            live=live,
            db=db,
            clock=clock,
            llm=models.chat.inner if models.chat is not None else None,
            archive=archive,
            people=people,
            carrying=carrying,
            alerts=alerts,
            ops=ops,
            memory_repo=memory_repo,
            memories=memories,
            recall=recall,
            consolidation=consolidation,
            nightly=nightly,
            chat_state=chat_state,
            chat_status=chat_status,
            chat=chat,
            chat_commands=chat_commands,
            carry_commands=CarryCommands(carrying),
            vectors=vectors,
            message_vectors=message_vectors,
            vector_place=vector_place,
            usage=usage,
            porting=porting,
            console=console,
            models=models,
            vision=images,
            deployment=deployment,
            provider_usage=provider_usage,
            followups=followups,
            unprompted=Unprompted(
                followups,
                models.followup,
                ok=lambda text: chat.guard.check(text).ok,
                persona=lambda: chat.persona,
                is_muted=chat_commands.is_muted,
                recent=archive.recent,
            ),
        )
        try:
            await console.load_overrides()
        except BaseException:  # a busy or unreadable database: close what was opened
            await core.close()
            raise
        return core

    @property
    def settings(self) -> Settings:
        """The settings in effect now: a console change shows here at once."""
        return self.live.current

    async def backend(self) -> Backend:
        """Which database and which vector store this core runs on."""
        return await _backend(self.db, self.vectors, self.recall, self.usage)

    async def close(self) -> None:
        if self.recall.rerank is not None:
            await self.recall.rerank.reranker.aclose()
        await self.provider_usage.drain()
        if self.vectors is not None:
            self.vectors.close()
        await self.consolidation.aclose()
        await self.deployment.aclose()
        await self.models.aclose()
        await self.archive.close()
        await self.alerts.aclose()
        await self.db.dispose()


async def _backend(
    db: Database, vectors: Dense | None, recall: Recall, usage: UsageReport
) -> Backend:
    """Which database and which vector store (none when dense retrieval is off), and
    which recall models with today's calls."""
    today, _ = await usage.totals()
    return await describe_backend(
        db,
        vectors.vector_store if vectors else None,
        models_line(vectors, recall, {t.job: t for t in today}),
    )


def models_line(vectors: Dense | None, recall: Recall, today: Mapping[str, JobTotals]) -> str:
    """`向量 <model>（今天 …）；重排 <model>（今天 …，启动以来失败 N 次）` (docs/providers.md)."""

    def used(job: str) -> str:
        t = today.get(job)
        if t is None:
            return ""
        return f"今天 {t.calls} 次、失败 {t.failed} 次、{human_tokens(t.tokens)} token"

    try:
        embedder = f"向量 {vectors.embedder_id}" if vectors is not None else "向量 关闭"
    except Exception as exc:  # a model folder gone since the start: say so, don't fail
        embedder = f"向量 无法加载（{exc}）"
    if used("embed"):
        embedder += f"（{used('embed')}）"
    stage = recall.rerank
    if stage is None:
        return f"{embedder}；重排 无"
    calls = "、".join(filter(None, [used("rerank"), f"启动以来失败 {stage.failures} 次"]))
    return f"{embedder}；重排 {stage.reranker_id}（{calls}）"


def check_models(settings: Settings) -> None:
    """Before anything starts: the weights of the configured embedding model and
    reranker load (shipped, YUJI_RELEVANCE_WEIGHTS or calibrated), else a ConfigError
    whose one line names `yuji eval --calibrate`. Reads files only."""
    rerank = reranker_id(settings)
    bases = [LEXICAL]
    if settings.vector_mode != "off":
        api = settings.embed_api
        embedder = f"api-{api.model}" if api else embedder_from_settings(settings).model_id
        path = Path(settings.relevance_weights) if settings.relevance_weights else None
        load_weights(embedder, path, calibrated=settings.calibration_path)
        bases.append(embedder)
    if rerank is not None:
        for base in bases:
            load_weights(base, reranker=rerank, calibrated=settings.calibration_path)
