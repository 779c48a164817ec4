"""`core.recall`: at most five memories of this chat for one wake (docs/design.md#recall).

The pipeline, in order (each step named here is one function below):

1. **visibility** - one rule (visibility.py) gives the memories this wake may see;
   every retriever searches only inside it and every row is checked again after;
2. **wake** - one analysis (wake.py) reads the message and the turns before it:
   names, content terms, the kind of answer asked, the time cue, its shape, whether
   it asks about anything at all, and how far the relevance model is trusted on it;
3. **candidates** - found widely, from every general signal:
   - words: FTS5 over character bigrams, nicknames expanded both ways (bm25 order),
     for the wake's terms, and apart for the terms only its context says;
   - dense: the embedding model's cosine over every visible memory of the chat, for
     the wake and for each context turn (the dense order weighs them, wake.py);
   - links: one hop along supports / related / contradicts from the leaders;
   - successors: a question about a state that has since changed ("还住在…吗")
     reaches the version that replaced it;
   - dated: the day or days the wake names ("上周六", "last Tuesday"), resolved in the
     chat's time zone (when.py): the memories dated on it (dated.py);
4. **hybrid** - the plain order of those signals (fusion.py: reciprocal ranks of the
   dense and the word orders), the floor under every shape of wake;
5. **relevance** - every candidate's features (features.py, the wake's alone) go
   through the one model (relevance.py): P(it answers the wake); (optional)
   **rerank**: a configured reranker (rerank.py, docs/providers.md) reads the wake
   with the best candidates by P; its score is one more feature, read by the weights
   calibrated for the pair; on any failure P stays as it was;
6. **decision** (decision.py) - nothing for a phatic wake (chatter.py); else the
   best by P fused with the hybrid's order as far as the wake's depth trusts P
   (fusion.py), above the floor (the hybrid's own top is never dropped when P is out of its depth), then
   ranking.py (MMR, contradicting memories side by side); a memory below the sure
   line labelled as a guess;
7. **carried** (carried.py) - a wake about a member may be joined by their own words
   from another group, through the one carrying scope function, always `related`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime
from pathlib import Path
from typing import NamedTuple
from zoneinfo import ZoneInfo

from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.clock import Clock, as_utc
from memory_core.settings import LiveSettings, Settings
from memory_core.storage import MemoryRepo, PeopleRepo
from memory_core.storage.engine import Database
from memory_core.tokenize import bigram_tokens, normalise, token_set
from memory_core.types import Asker, Memory, Quoted, Recalled, RecallResult, RelationKind

from . import chatter, dated, decision, features, fusion, language, mentions, quotes, when
from .carried import CarriedStage
from .chat_cache import ChatCache
from .decision import Explained, choose
from .dense_port import DenseSearch
from .dense_view import cosines_of, top_view
from .features import Baseline, Seen, Via
from .judge import Judge
from .question import Names, Question, analyse, name_tokens
from .quotes import RecentSource
from .ranking import Points, RankParams
from .relevance import LEXICAL, RelevanceModel
from .relevance import load as load_model
from .rerank import RerankStage
from .visibility import is_visible
from .wake import Turn, Wake
from .wake import read as read_wake

log = logging.getLogger(__name__)

LINK_KINDS: tuple[RelationKind, ...] = ("supports", "related", "contradicts")
SUCCESSOR_HOPS = 3
"""How far a changed state is followed to its current version (A -> B -> C)."""


@dataclass(frozen=True, slots=True)
class EngineParams:
    words_limit: int = 40
    """Candidates taken from the full-text index (best bm25 first)."""
    dense_limit: int = 30
    """Candidates taken from the embedding model (best cosine first)."""
    link_sources: int = 6
    """The leaders whose one-hop links are followed."""
    posting_budget: int = 3000
    """Words fetch through the rarest terms whose document counts add up to about this."""
    stats_ttl_s: float = 30.0
    ranking: RankParams = field(default_factory=RankParams)


RELATIVES_READ = 20
"""Memories read for the relation a first-person kin word asks about ("我表姐")."""


class Reading(NamedTuple):
    """A wake read against its chat's names (`Recall.read`)."""

    text: str
    wake: Wake
    names: Names
    chat_size: int
    """The chat's memory count (caps a term's document frequency)."""
    searcher: DenseSearch | None
    """The dense search its vector was asked of (None: words only)."""


class Recall:
    def __init__(
        self,
        db: Database,
        clock: Clock,
        settings: LiveSettings,
        *,
        repo: MemoryRepo,
        dense: DenseSearch | None = None,
        model: RelevanceModel | None = None,
        lexical_model: RelevanceModel | None = None,
        params: EngineParams | None = None,
        judge: Judge | None = None,
        recent: RecentSource | None = None,
        rerank: RerankStage | None = None,
        carried: CarriedStage | None = None,
    ) -> None:
        self._db = db
        self._clock = clock
        self._live = settings
        self.dense = dense
        self.params = params or EngineParams()
        self._repo = repo
        self._people = PeopleRepo(db)
        self._cache = ChatCache(self._repo, self.params.stats_ttl_s)
        self._model = model
        self._lexical_model = lexical_model
        self._judge = judge
        self.recent = recent
        """Recent chat not consolidated yet, quoted (quotes.py); None: not searched."""
        self.rerank = rerank
        """The optional reranker stage (rerank.py); None: today's path, unchanged."""
        self._reranked: dict[str, RelevanceModel] = {}
        self.carried = carried
        """A person's own words from their other groups (carried.py); None: none."""

    @property
    def _settings(self) -> Settings:
        """The settings in effect now (the console's tunables move them live)."""
        return self._live.current

    @property
    def lexical_model(self) -> RelevanceModel:
        """The weights without dense features (YUJI_VECTOR_MODE=off, and shadow)."""
        if self._lexical_model is None:
            self._lexical_model = load_model(LEXICAL)
        return self._lexical_model

    @property
    def model(self) -> RelevanceModel:
        """The weights for the embedding model in use; raises ConfigError when the file
        names another model (checked at start-up by `check`)."""
        if self._model is None:
            if self.dense is None:
                return self.lexical_model
            path = self._settings.relevance_weights
            self._model = load_model(
                self.dense.embedder_id,
                Path(path) if path else None,
                calibrated=self._settings.calibration_path,
            )
        return self._model

    def reranked_model(self, embedder: str) -> RelevanceModel:
        """The weights `yuji eval --calibrate` fitted for `embedder` with the reranker."""
        assert self.rerank is not None
        if embedder not in self._reranked:
            self._reranked[embedder] = load_model(
                embedder,
                reranker=self.rerank.reranker_id,
                calibrated=self._settings.calibration_path,
            )
        return self._reranked[embedder]

    def check(self) -> None:
        """Load the relevance weights now, so a mismatch stops the start, not a reply."""
        _ = self.lexical_model, self.model
        if self.rerank is not None:
            for base in {self.lexical_model.embedder, self.model.embedder}:
                self.reranked_model(base)

    # --- the public path -------------------------------------------------------------

    async def recall(
        self,
        scope: str,
        text: str,
        *,
        now: datetime | None = None,
        limit: int | None = None,
        before_id: int | None = None,
        context: Sequence[Turn] = (),
        asker: Asker | None = None,
        mentioned: Sequence[str] = (),
    ) -> RecallResult:
        """What to inject for `text` asked in `scope` at `now`; may be empty.
        `before_id`: the archived id of the asking message (the recent window the
        prompt shows ends before it; None: the newest archived message); `context`:
        the turns just before it in this chat, oldest first (wake.py); `asker`: who
        sent it (a first person is them, and a memory about anyone else is never
        `sure` when the wake is about someone); `mentioned`: the user ids it @-mentions,
        not the persona's own (it names them: mentions.py)."""
        now = as_utc(now or self._clock.now())
        limit = self._settings.recall_limit if limit is None else limit
        started = time.perf_counter()
        use_dense = self.dense is not None and self.dense.mode == "on"
        shadow = self.dense is not None and self.dense.mode == "shadow"
        reading = await self.read(
            scope,
            text,
            dense=use_dense or shadow,
            context=context,
            asker=asker,
            mentioned=mentioned,
        )
        hearing: asyncio.Task[quotes.Heard] | None = None
        if self.recent is not None and limit > 0 and not self._silent(reading.wake):
            # The recent messages are searched while the memories are (their vector is
            # the one being computed for the memories).
            hearing = asyncio.create_task(
                self.recent.find(
                    scope,
                    reading.wake.question,
                    reading.names,
                    before_id=before_id,
                    dense=use_dense,
                )
            )
        try:
            ex = await self.explain_read(scope, reading, now)
            # The lexical model reads only its own (non-dense) columns of the same rows.
            # Memories written since the last `yuji embed` have no vector yet: when none
            # of the candidates has one, the words-only model decides (the dense one
            # would read the missing cosines as evidence against them).
            embedded = features.any_vector(ex.rows)
            dense_model = self.model if use_dense and embedded else self.lexical_model
            trace = list(ex.trace)
            if self._reranks(ex, dense_model, limit):
                assert self.rerank is not None
                rows, line = await self.rerank.rows(scope, ex, dense_model)
                trace.append(line)
                if rows is not None:  # else the bands stand as without the reranker
                    ex = replace(ex, rows=rows)
                    dense_model = self.reranked_model(dense_model.embedder)
            chatter_wake = self.is_chatter(ex, dense_model)
            items = self.decide(ex, dense_model, now, limit)
            quoted: tuple[Quoted, ...] = ()
            if hearing is not None and not chatter_wake:
                quoted = self._quotes(await hearing, ex, use_dense)
        finally:
            if hearing is not None and not hearing.done():
                hearing.cancel()  # an error, or a wake the deciding model calls chatter
            elif hearing is not None and not hearing.cancelled():
                hearing.exception()  # read: a failure left unawaited is not logged as lost
        if not items and len(ex.memories) and chatter_wake:
            trace.append("the wake asks about nothing: chatter, nothing injected")
        elif not items and len(ex.memories) and self.says_nothing_remembered(ex, dense_model):
            trace.append("small talk no memory shares a word with: nothing injected")
        if hearing is not None and not chatter_wake:
            trace.append(f"recent messages quoted: {quotes.ids_of(quoted)}")
        if items and self._judge is not None and self._settings.recall_judge == "llm":
            before = [i.band for i in items]
            items = decision.capped(
                await self._judge.bands(scope, text, items), decision.never_sure(ex)
            )
            trace.append(f"judge: bands {before} -> {[i.band for i in items]}")
        if self.carried is not None and not chatter_wake:  # after the judge: never sure
            models = (self.model if use_dense else self.lexical_model, self.lexical_model)
            items, line = await self.carried.join(
                scope, ex, items, models, self._points, limit, now
            )
            trace.append(line)
        if shadow:
            would = self.decide(ex, self.model, now, limit)
            changed = {i.memory.id for i in would} ^ {i.memory.id for i in items}
            trace.append(f"dense (shadow) would inject: {[i.memory.id for i in would]}")
            if changed:
                log.info("dense shadow in %s would change %s", scope, sorted(changed))
        trace.append(f"{len(items)} chosen in {(time.perf_counter() - started) * 1000:.1f} ms")
        return RecallResult(
            items=items,
            retrospective=ex.question.retrospective,
            trace=tuple(trace),
            quotes=quoted,
        )

    def _quotes(self, heard: quotes.Heard, ex: Explained, use_dense: bool) -> tuple[Quoted, ...]:
        """Recent messages of the chat not consolidated yet that answer (quotes.py)."""
        found = quotes.Found.of(heard, ex.question, ex.baseline)
        model = self.model if use_dense and features.any_vector(found.rows) else self.lexical_model
        return quotes.choose(found, model, self._points(model))

    def _points(self, model: RelevanceModel) -> Points:
        # The console may move both calibrated points live.
        return Points.of(
            _setting_or(self._settings.recall_floor, model.floor),
            _setting_or(self._settings.recall_sure, model.sure),
        )

    def decide(
        self,
        ex: Explained,
        model: RelevanceModel,
        now: datetime,
        limit: int,
    ) -> tuple[Recalled, ...]:
        """The memories to inject: the best by P above the floor, each in its band;
        nothing for a wake that asks about nothing."""
        if not ex.memories or limit <= 0 or self.is_chatter(ex, model):
            return ()
        if self.says_nothing_remembered(ex, model):
            return ()
        return choose(
            ex,
            model,
            self._points(model),
            now,
            limit,
            replace(self.params.ranking, diversity=self._settings.recall_diversity),
        )

    def _reranks(self, ex: Explained, model: RelevanceModel, limit: int) -> bool:
        """The reranker (when configured) reads this wake: it asks something."""
        return (
            self.rerank is not None
            and bool(ex.memories)
            and limit > 0
            and not self.is_chatter(ex, model)
            and not self.says_nothing_remembered(ex, model)
        )

    def is_chatter(self, ex: Explained, model: RelevanceModel) -> bool:
        """The wake asks about nothing a memory could answer (the model's gate)."""
        if ex.small_talk:
            return True
        return model.chatter is not None and model.chatter.is_chatter(ex.wake.signals)

    def says_nothing_remembered(self, ex: Explained, model: RelevanceModel) -> bool:
        """Small talk that no memory of the chat shares a word with, nor the turns
        before it: below the chatter gate's line (chatter.py), or idle by its words
        (smalltalk.py). No memory is injected for it; the recent messages it meets
        are still quoted."""
        # A wake leaning on the turns before is small talk by their cosines (small_talk).
        if ex.wake.idle and not ex.wake.leans and not ex.shares_a_word:
            return True
        gate = model.chatter
        return gate is not None and gate.says_nothing_remembered(ex.wake.signals, ex.shares_a_word)

    def _silent(self, wake: Wake) -> bool:
        """Every model this wake may be decided by reads it as asking about nothing
        (which one decides is known once its candidates are)."""
        gates = (self.model.chatter, self.lexical_model.chatter)
        return all(gate is not None and gate.is_chatter(wake.signals) for gate in gates)

    async def explain(
        self,
        scope: str,
        text: str,
        *,
        now: datetime | None = None,
        dense: bool = True,
        context: Sequence[Turn] = (),
        asker: Asker | None = None,
        mentioned: Sequence[str] = (),
    ) -> Explained:
        """The candidates of one wake with their features (no decision yet)."""
        reading = await self.read(
            scope, text, dense=dense, context=context, asker=asker, mentioned=mentioned
        )
        return await self.explain_read(scope, reading, now)

    async def read(
        self,
        scope: str,
        text: str,
        *,
        dense: bool = True,
        context: Sequence[Turn] = (),
        asker: Asker | None = None,
        mentioned: Sequence[str] = (),
    ) -> Reading:
        """The wake read against its chat's names; its vector is being computed from
        here on (`dense`: when the chat's index can use it)."""
        held = self._cache.fresh_names(scope)
        members: tuple[Asker, ...] = ()
        if held is None or mentioned:
            async with self._db.read() as conn:
                held = await self._cache.names(conn, scope)
                members = await mentions.members(self._people, conn, scope, mentioned)
        n, subjects, aliases = held
        names = Names.of(subjects, aliases, self._settings.nicknames)
        nicknames = self._settings.nicknames
        searcher = self.dense if dense else None
        if searcher is not None and searcher.mode == "off":
            searcher = None
        own = analyse(text, names, nicknames, asker, members)
        kin = language.kin_asked(own.text) if asker is not None else ()
        if searcher is not None and not kin:
            # The wake's own vector is always asked for: it starts before the turns are
            # read (a kin word's wake may be read again, naming whom it means).
            searcher.prefetch(own.embed_text)
        wake = read_wake(scope, text, names, nicknames, context, asker, members, own)
        if kin:
            relatives = await self._relatives(scope, names, names.of_asker(asker), kin)
            if relatives:
                # "我表姐" is whom the asker's remembered relation names: the wake is
                # about them (the asker is only how they are found), in its features,
                # its searches and the sure band.
                told = f"{text} {' '.join(sorted(relatives))}"
                wake = read_wake(scope, told, names, nicknames, context, mentioned=members)
        if searcher is not None:
            for asked in (wake.question.embed_text, wake.lookup.embed_text):
                searcher.prefetch(asked)
        return Reading(text, wake, names, n, searcher)

    async def _relatives(
        self, scope: str, names: Names, me: str | None, kin: Sequence[str]
    ) -> frozenset[str]:
        """The members a memory names together with `me` in a word of the kin family
        `kin` ("林婷和宋妍是表姐妹" for 宋妍's "我表姐")."""
        if me is None:
            return frozenset()
        tokens = {t for word in kin for t in bigram_tokens(normalise(word))}
        async with self._db.read() as conn:
            found = await self._repo.word_candidates(
                scope, tokens, self._clock.now(), with_past=False, limit=RELATIVES_READ, conn=conn
            )
        mine = names.spellings(me)
        out: set[str] = set()
        for mem in found:
            said = normalise(f"{mem.subject} {mem.content}")
            if not any(language.mentions(said, s) for s in mine):
                continue
            if not any(language.mentions(said, normalise(word)) for word in kin):
                continue
            out.update(
                canonical
                for spelling, canonical in names.canonical.items()
                if canonical not in mine and language.mentions(said, spelling)
            )
        return frozenset(out)

    async def explain_read(
        self, scope: str, reading: Reading, now: datetime | None = None
    ) -> Explained:
        """`explain` of a wake already read."""
        now = as_utc(now or self._clock.now())
        trace: list[str] = []
        text, wake, names, searcher = reading.text, reading.wake, reading.names, reading.searcher
        q = wake.question
        look = wake.lookup
        async with self._db.read() as conn:
            retro = q.retrospective
            trace.append(
                f"terms: {' '.join(sorted(q.terms)) or '-'}; members: "
                f"{'/'.join(sorted(q.named)) or '-'}; asks: {q.asks or '-'}"
                + ("; about the past" if retro else "")
                + f"; {wake.shape}, depth {wake.depth:.2f}"
                + (f"; context: {len(wake.context)} turns" if wake.context else "")
                + (f"; refers to {'/'.join(sorted(wake.about))}" if wake.about else "")
                + ("; leans on the turns before" if wake.leans else "")
            )
            extra = wake.context_terms
            # An English word is looked up in each of its regular inflections.
            forms = {t: language.word_forms(t) for t in q.terms | look.terms | extra}
            held = await self._cache.frequencies(
                conn, scope, {f for fs in forms.values() for f in fs} | name_tokens(look, names)
            )
            size = reading.chat_size  # a term is in at most every memory of the chat
            df = {t: min(size, sum(held.get(f, 0) for f in fs)) for t, fs in forms.items()}
            df = {t: c for t, c in df.items() if c > 0}
            ids = await self._cache.visible_ids(conn, scope, now, retro)
            scores = order_scores = None
            small_talk = False
            replaced = not retro and await self._cache.has_replaced(conn, scope)
            with_past = retro or replaced
            # Words first: the question's vector is being computed meanwhile (prefetch).
            matched = await self._found(
                conn, scope, look.terms, look, names, df, held, now, with_past
            )
            span = when.named(text, now, ZoneInfo(self._settings.timezone))
            day = await dated.search(self._repo, conn, scope, span, now, with_past)
            if searcher is not None:
                allowed = ids
                if replaced:
                    allowed = await self._cache.visible_ids(conn, scope, now, True)
                scores = await searcher.scores(scope, q.embed_text, allowed)
                if scores is not None and scores.note:
                    trace.append(scores.note)
                order_scores = scores
                if look is not q and scores is not None:
                    order_scores = await searcher.scores(scope, look.embed_text, allowed)
                # A question that leans ("那他老婆是谁") asks about the turns, whatever
                # their cosines: only a reaction to small talk is small talk.
                if (
                    wake.leans
                    and wake.shape == "statement"
                    and order_scores is not None
                    and order_scores.background is not None
                ):
                    small_talk = chatter.below_the_chat(
                        order_scores.scores, order_scores.background
                    )
                    if small_talk:
                        trace.append("the turns it leans on are near nothing remembered")
            words = [m.id for m, over in matched if retro or not over]
            ended = [m.id for m, over in matched if over]
            dense_rank, cosine, past = top_view(scores, ids, self.params.dense_limit)
            order_rank = dense_rank
            if order_scores is not scores:
                order_rank, _, _ = top_view(order_scores, ids, self.params.dense_limit)
            # The turns count by their words (one search), the weightiest turn's first,
            # and only to fill places the wake's own orders leave empty (fusion.py).
            context_words: list[int] = []
            extra_found: list[tuple[Memory, bool]] = []
            held_by_wake = len(set(words) | set(order_rank))
            if extra and held_by_wake < self._settings.recall_limit:
                extra_found = await self._found(
                    conn, scope, extra, None, names, df, held, now, with_past
                )
                heard_in = _turn_weights(wake, extra_found)
                context_words = sorted(
                    (m.id for m, over in extra_found if retro or not over),
                    key=lambda mid: -heard_in[mid],
                )
            found: dict[int, tuple[int | None, Via]] = {}  # id -> (bm25 rank, via)
            for rank, mid in enumerate(words):
                found[mid] = (rank, "search")
            for mid in context_words:
                found.setdefault(mid, (None, "search"))
            for mid in (*dense_rank, *order_rank):
                found.setdefault(mid, (None, "search"))
            trace.append(
                f"candidates: words {len(words)}, context words {len(context_words)}, "
                f"dense {len(set(dense_rank) | set(order_rank))}"
            )
            if replaced:
                for mid in await self._successors(conn, scope, [*ended[:3], *past]):
                    found[mid] = (found.get(mid, (None, "search"))[0], "successor")
            leaders = _leaders(words, dense_rank, self.params.link_sources)
            edges = await self._repo.relations(scope, leaders, LINK_KINDS, conn=conn)
            for src, dst, _ in edges:
                for a, b in ((src, dst), (dst, src)):
                    if a in leaders:
                        found.setdefault(b, (None, "link"))
            for mid in day.ids:
                found.setdefault(mid, (None, "search"))
            day = await dated.marked(self._repo, conn, scope, day, found)
            trace.extend(day.note)  # last: every source's candidate is dated or not
            # The word searches read their memories already, in this snapshot.
            read = {m.id: m for m, _ in (*matched, *extra_found) if m.id in found}
            rest = await self._repo.get_many(scope, found.keys() - read.keys(), conn=conn)
            fetched = sorted([*read.values(), *rest], key=lambda mem: mem.id)
        kept = [mem for mem in fetched if is_visible(mem, scope, now, retrospective=retro)]
        if scores is not None:
            # A word or link candidate far down the dense ranking still has a cosine: in
            # a large chat most of them lie below the dense top, and none is "unembedded".
            missing = [m.id for m in kept if m.id not in cosine]
            if scores.complete:
                cosine = {**cosine, **cosines_of(scores, missing)}
            elif self.dense is not None and missing:
                cosine = {**cosine, **await self.dense.cosines(scope, q.embed_text, missing)}
        seen = tuple(
            Seen(
                subject=mem.subject,
                content=mem.content,
                ended=mem.valid_to is not None and mem.valid_to <= now,
                dense=cosine.get(mem.id),
                dense_rank=dense_rank.get(mem.id),
                bm25_rank=found[mem.id][0],
                via=found[mem.id][1],
                dated=mem.id in day.on_day,
                person=mem.subject_person,
                kind=mem.subject_kind,
            )
            for mem in kept
        )
        known = scores is not None and scores.background is not None
        baseline = Baseline(scores.background or 0.0, known) if scores is not None else Baseline()
        heard = frozenset(df) & q.terms
        # A pronoun pointing back is about whom the turns before named: a feature of
        # who the wake is about, like a name it says (its words stay the wake's own).
        about = replace(q, named=wake.about) if not q.named and wake.about else q
        rows = features.rows(about, seen, baseline, heard)
        by_words = {mid: r for r, mid in enumerate(words)}
        by_context = {mid: r for r, mid in enumerate(context_words)}
        kept_ids = [m.id for m in kept]
        pairs: dict[int, set[int]] = {}
        for src, dst, kind in edges:
            if kind == "contradicts":
                pairs.setdefault(src, set()).add(dst)
                pairs.setdefault(dst, set()).add(src)
        return Explained(
            question=q,
            memories=tuple(kept),
            seen=seen,
            rows=rows,
            contradicts={k: frozenset(v) for k, v in pairs.items()},
            trace=tuple(trace),
            wake=wake,
            hybrid=fusion.hybrid_ranks(kept_ids, order_rank, by_words, by_context),
            hybrid_words=fusion.hybrid_ranks(kept_ids, {}, by_words, by_context),
            names=names,
            baseline=baseline,
            unrelated=features.unrelated(about, baseline, heard),
            small_talk=small_talk,
            shares_a_word=any(t in df for t in extra)
            or any(not language.is_time(t) for t in heard)
            or (bool(look.named) and bool(words)),
        )

    async def search(self, scope: str, text: str, limit: int, now: datetime) -> list[Memory]:
        """The model's search tool: this chat's current memories by P, without the
        injection threshold (it needs to see what exists before writing)."""
        ex = await self.explain(scope, text, now=now, dense=self.dense is not None)
        if not ex.memories:
            return []
        model = self.model if self.dense is not None else self.lexical_model
        p = model.p(ex.rows)
        order = sorted(range(len(p)), key=lambda i: (-p[i], ex.memories[i].id))
        return [ex.memories[i] for i in order[:limit]]

    async def baseline_bm25(self, scope: str, text: str, *, limit: int = 5) -> list[Memory]:
        """Plain FTS5 bm25 top-k over the same index (no bars, no validity, no stages)."""
        return await self._repo.bm25(scope, bigram_tokens(text), limit=limit)

    def invalidate(self, scope: str) -> None:
        """A write changed this chat's memories, names or aliases."""
        self._cache.invalidate(scope)

    async def reindex(self) -> int:
        """Rebuild the derived full-text index from the memories table."""
        count = await self._repo.rebuild_index()
        self._cache.clear()
        return count

    # --- candidates ------------------------------------------------------------------

    async def _found(
        self,
        conn: AsyncConnection,
        scope: str,
        asked: frozenset[str],
        q: Question | None,
        names: Names,
        df: Mapping[str, int],
        held: Mapping[str, int],
        now: datetime,
        with_past: bool,
    ) -> list[tuple[Memory, bool]]:
        """Visible memories sharing a term of `asked` (in any of its inflections `held`
        by this chat) or naming a member the wake `q` names (any spelling; None: no
        names), the rarest within the posting budget, best bm25 first, each with whether its validity has ended
        (`with_past`: those are included)."""
        # A member's name is searched like a term: within the budget, rarest first. The
        # asker's name stands in every "我…" they say, and in a large chat it is in
        # thousands of memories: unbudgeted, it read them all on each wake; their
        # memories that answer share a term with the wake or lie near it in meaning.
        named = name_tokens(q, names) if q is not None else set[str]()
        chosen = _selective(
            asked | named, {**df, **{t: held.get(t, 0) for t in named}}, self.params.posting_budget
        )
        terms = {f for t in chosen - named for f in language.word_forms(t) if held.get(f, 0) > 0}
        rows = await self._repo.word_candidates(
            scope,
            terms | (chosen & named),
            now,
            with_past=with_past,
            limit=self.params.words_limit,
            conn=conn,
        )
        return [(mem, not is_visible(mem, scope, now)) for mem in rows]

    async def _successors(
        self,
        conn: AsyncConnection,
        scope: str,
        past: Sequence[int],
    ) -> list[int]:
        """The versions that replaced the ended states the question matches best."""
        frontier = set(past)
        out: list[int] = []
        for _ in range(SUCCESSOR_HOPS):
            if not frontier:
                break
            edges = await self._repo.relations(scope, frontier, ("supersedes",), conn=conn)
            newer = {src for src, dst, _ in edges if dst in frontier}
            out.extend(sorted(newer))
            frontier = newer
        return out


def _turn_weights(wake: Wake, found: Sequence[tuple[Memory, bool]]) -> dict[int, float]:
    """Each memory the context's words found -> the weight of the weightiest turn
    that shares a term with it."""
    out: dict[int, float] = {}
    for mem, _ in found:
        said = token_set(f"{mem.subject} {mem.content}")
        out[mem.id] = max((t.weight for t in wake.context if t.terms & said), default=0.0)
    return out


def _leaders(words: Sequence[int], dense_rank: Mapping[int, int], k: int) -> set[int]:
    top_dense = sorted(dense_rank, key=lambda mid: dense_rank[mid])
    return set(words[: k // 2 or 1]) | set(top_dense[: k - k // 2])


def _selective(terms: frozenset[str], df: Mapping[str, int], budget: int) -> set[str]:
    """The rarest terms whose document frequencies sum to about `budget` (at least one);
    terms no memory holds are dropped, they cannot fetch anything."""
    present = sorted((df[t], t) for t in terms if df.get(t, 0) > 0)
    chosen: set[str] = set()
    total = 0
    for count, term in present:
        if chosen and total + count > budget:
            break
        chosen.add(term)
        total += count
    return chosen


def _setting_or(value: float | None, calibrated: float) -> float:
    return calibrated if value is None else value
