"""`core.recall`: at most five memories of this chat for one question (SPEC.md §8).

1. visibility first: one predicate (recall/visibility.py) in every stage's query,
   and the same rule checked again in Python on every row a stage returns;
2. exact words (FTS5, per-chat IDF, a distinctive content term must match);
3. near wording, only when stage 1 found too little (bigram cosine + synonyms);
   when both found nothing: "X是谁" brings what the chat says X is, and a question
   about a state that has since changed brings the version that replaced it;
4. graph neighbours, one hop, only to fill the remaining slots;
5. the vector side path, only when stages 1-2 found nothing;
6. ranking (ranking.py). Silence is a valid answer.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime

from sqlalchemy import ColumnElement
from sqlalchemy.ext.asyncio import AsyncConnection

from memory_core.clock import Clock, as_utc
from memory_core.memories.aliases import mentioned_names, name_groups
from memory_core.settings import Settings
from memory_core.storage import memory_repo as repo
from memory_core.storage.engine import Database
from memory_core.storage.memory_repo import m
from memory_core.types import Memory, Recalled, RecallResult, RelationKind

from . import fts, scoring
from .answer_type import can_answer
from .chat_cache import ChatCache
from .lexicon import Lexicon, lexicon
from .query import analyse, identity_question
from .ranking import SAME_MEMORY_DICE, Candidate, RankParams, select
from .tokenize import bigram_tokens, normalise, unigram_tokens
from .vector_port import VECTOR_LABEL, VectorAsk, VectorSidePath
from .visibility import is_retrospective, is_visible, visible, visible_bound, visible_params

log = logging.getLogger(__name__)

SUCCESSOR_HOPS = 3
"""How far a changed state is followed to its current version (A -> B -> C)."""
IDENTITY_LIMIT = 2
IDENTITY_SCORE = 0.5
"""Score of a "what X is" statement answering "X是谁" (as a middling lexical match)."""
GRAPH_KINDS: tuple[RelationKind, ...] = ("supports", "related", "contradicts")
_KIND_WORDS = {
    "supports": "支持",
    "related": "相关",
    "contradicts": "矛盾",
    "supersedes": "前后版本",
}


@dataclass(frozen=True, slots=True)
class EngineParams:
    scoring: scoring.Params = field(default_factory=scoring.Params)
    ranking: RankParams = field(default_factory=RankParams)
    near_when_below: int = 1
    """Stage 2 runs when stage 1 kept fewer than this many memories."""
    graph_factor: float = 0.5
    posting_budget: int = 3000
    """Candidates are fetched through the rarest terms whose document counts add up to
    about this (common terms still count in scoring, they just don't fetch)."""
    stats_ttl_s: float = 30.0
    """How long a chat's memory count, names and aliases are reused between questions
    (writes through core.memories refresh them at once)."""


class Recall:
    def __init__(
        self,
        db: Database,
        clock: Clock,
        settings: Settings,
        *,
        vector: VectorSidePath | None = None,
        params: EngineParams | None = None,
    ) -> None:
        self._db = db
        self._clock = clock
        self._settings = settings
        self.vector = vector
        self.params = params or EngineParams()
        self._cache = ChatCache(self.params.stats_ttl_s)

    async def recall(
        self,
        scope: str,
        text: str,
        *,
        now: datetime | None = None,
        limit: int | None = None,
        sender_id: str | None = None,
    ) -> RecallResult:
        """What to inject for `text` asked in `scope` at `now`; may be empty."""
        del sender_id  # reserved: "我" could resolve to the sender's subject later
        now = as_utc(now or self._clock.now())
        limit = self._settings.recall_limit if limit is None else limit
        retrospective = is_retrospective(text)
        trace: list[str] = []
        started = time.perf_counter()
        linked: set[int] = set()
        async with self._db.read() as conn:
            found = await self._stages(conn, scope, text, now, retrospective, trace, linked)
            contradicts = await self._graph(
                conn, scope, now, retrospective, found, limit, trace, linked
            )
            floor = self._settings.recall_min_score
            kept = [c for c in found.values() if c.score >= floor]
            chosen = select(
                kept,
                limit,
                now,
                retrospective=retrospective,
                contradicts=contradicts,
                params=self.params.ranking,
            )
            if not any(c.stage in ("lexical", "near") for c in chosen):
                guessed = await self._vector(conn, scope, text, now, retrospective, trace)
                chosen = (chosen + guessed)[: max(limit, 0)] if guessed else chosen
        items = tuple(Recalled(c.memory, c.stage, round(c.score, 4), c.reason) for c in chosen)
        trace.append(f"{len(items)} chosen in {(time.perf_counter() - started) * 1000:.1f} ms")
        return RecallResult(items=items, retrospective=retrospective, trace=tuple(trace))

    async def search(self, scope: str, text: str, limit: int, now: datetime) -> list[Memory]:
        """The model's search tool: this chat's current memories by relevance, without
        the injection bars (it needs to see what exists before writing)."""
        now = as_utc(now)
        async with self._db.read() as conn:
            ctx = await self._context(conn, scope, text)
            rows = await self._candidates(conn, scope, ctx, now, False, near=True)
        lex = lexicon()
        scored: list[tuple[float, Memory]] = []
        for memory, bi, stranger in rows:
            found = _match(ctx, memory, bi, stranger, lex)
            if found is not None:
                scored.append((found.score, memory))
        scored.sort(key=lambda s: (-s[0], -s[1].id))
        return [memory for _, memory in scored[:limit]]

    async def baseline_bm25(
        self, scope: str, text: str, *, limit: int = 5, now: datetime | None = None
    ) -> list[Memory]:
        """Plain FTS5 bm25 top-k over the same index (no bars, no validity, no stages)."""
        del now
        match = fts.match_any(scope, bi=bigram_tokens(text))
        if match is None:
            return []
        async with self._db.read() as conn:
            ranked = await repo.fts_bm25(
                conn, match, (m.scope == scope) & (m.status == "active"), limit=limit
            )
            return await repo.get_many_ordered(conn, scope, [mid for mid, _ in ranked])

    def invalidate(self, scope: str) -> None:
        """A write changed this chat's memories, names or aliases."""
        self._cache.invalidate(scope)

    async def reindex(self) -> int:
        """Rebuild the derived full-text index from the memories table."""
        async with self._db.write() as conn:
            count = await repo.fts_rebuild(conn)
        self._cache.clear()
        return count

    # --- stages -------------------------------------------------------------------------

    async def _context(self, conn: AsyncConnection, scope: str, text: str) -> scoring.Weights:
        """The question analysed against this chat's names and statistics."""
        lex = lexicon()
        probe = analyse(text)
        wanted = set(bigram_tokens(text)) | probe.singles
        for word in probe.lexicon_words:
            for other in (word, *lex.expansions.get(word, ())):
                wanted.update(bigram_tokens(other))
        n, subjects, alias_map = await self._cache.names(conn, scope)
        df = await self._cache.frequencies(conn, scope, wanted)
        groups = member_groups(subjects, alias_map, self._settings.nicknames)
        names = [name for group in groups for name in group] + list(self._settings.nicknames)
        query = analyse(
            text,
            names=names,
            alias_names=mentioned_names(text, alias_map),
            groups=groups,
        )
        return scoring.Weights(query, df, n, self.params.scoring, names=tuple(names))

    async def _candidates(
        self,
        conn: AsyncConnection,
        scope: str,
        ctx: scoring.Weights,
        now: datetime,
        retrospective: bool,
        *,
        near: bool,
        linked: set[int] | None = None,
    ) -> list[tuple[Memory, frozenset[str], bool]]:
        """Visible memories sharing a content term (or, for `near`, a synonym) with the
        question, best bm25 first, checked once more against the visibility rule;
        with a flag for those that don't mention the members the question names.
        The ids of fetched memories that have any relation are added to `linked`."""
        singles = ctx.content & ctx.query.singles
        bi_terms = _selective(ctx.content - singles, ctx.df, self.params.posting_budget)
        uni_terms = _selective(singles, ctx.df, self.params.posting_budget)
        if near:
            lex = lexicon()
            for word in ctx.query.lexicon_words:
                for other in (word, *lex.expansions.get(word, ())):
                    if len(other) == 1:
                        uni_terms.update(unigram_tokens(other))
                    else:
                        bi_terms.update(bigram_tokens(other))
            budget = self.params.posting_budget
            bi_terms = _selective(bi_terms, ctx.df, budget)
            uni_terms = _selective(uni_terms, ctx.df, budget)
        match = fts.match_any(scope, bi=bi_terms, uni=uni_terms)
        if match is None:
            return []
        rows = await repo.fts_recall_candidates(
            conn,
            match,
            visible_bound(retrospective),
            visible_params(scope, now),
            limit=self.params.scoring.candidate_limit,
        )
        if linked is not None:
            linked.update(memory.id for memory, _, has_edges in rows if has_edges)
        return [
            (
                memory,
                fts.column_tokens(bi),
                not ctx.query.mentions_person(memory.subject, memory.content),
            )
            for memory, bi, _ in rows
            if is_visible(memory, scope, now, retrospective=retrospective)
            and can_answer(ctx.query.wants, memory.content)
        ]

    async def _stages(
        self,
        conn: AsyncConnection,
        scope: str,
        text: str,
        now: datetime,
        retrospective: bool,
        trace: list[str],
        linked: set[int],
    ) -> dict[int, Candidate]:
        ctx = await self._context(conn, scope, text)
        params = self.params.scoring
        persons = ", ".join("/".join(sorted(g)) for g in ctx.query.persons) or "-"
        trace.append(f"terms: {' '.join(sorted(ctx.known)) or '-'}; members: {persons}")
        exact: list[tuple[Memory, scoring.Match]] = []
        rows = await self._candidates(
            conn, scope, ctx, now, retrospective, near=False, linked=linked
        )
        ctx = ctx.without_restatements(
            scoring.restatement_counts(
                [(memory.content, bi) for memory, bi, _ in rows], SAME_MEMORY_DICE
            )
        )
        for memory, bi, stranger in rows:
            found = _match(ctx, memory, bi, stranger)
            if found is not None:
                exact.append((memory, found))
        spoke = any(scoring.speaks(f, params) for _, f in exact)
        best = max((f.cover for _, f in exact if scoring.speaks(f, params)), default=0.0)
        found_: dict[int, Candidate] = {}
        if spoke:
            for memory, f in exact:
                if scoring.fills(f, params, best):
                    found_[memory.id] = Candidate(
                        memory, "lexical", f.score, _reason("字面命中", f.shown, memory, now)
                    )
        trace.append(f"lexical: {len(found_)}")
        if len(found_) >= self.params.near_when_below:
            return found_
        lex = lexicon()
        nearby: list[tuple[Memory, scoring.Match]] = []
        rows = await self._candidates(
            conn, scope, ctx, now, retrospective, near=True, linked=linked
        )
        for memory, bi, stranger in rows:
            if memory.id in found_:
                continue
            f = _match(ctx, memory, bi, stranger, lex)
            if f is not None and (f.synonyms or not spoke):
                nearby.append((memory, f))
        best = max([best, *(f.cover for _, f in nearby if scoring.speaks(f, params))], default=0.0)
        spoke = spoke or best > 0
        kept = 0
        if spoke:
            for memory, f in nearby:
                if scoring.fills(f, params, best):
                    found_[memory.id] = Candidate(
                        memory, "near", f.score, _reason("近义命中", f.shown, memory, now)
                    )
                    kept += 1
        trace.append(f"near: {kept}")
        if not found_ and ctx.query.persons and identity_question(text, ctx.names):
            await self._identity(conn, scope, ctx.query.persons, now, retrospective, found_)
            trace.append(f"who-is: {len(found_)}")
        if not found_ and not retrospective and await self._cache.has_replaced(conn, scope):
            await self._successors(conn, scope, ctx, now, found_)
            trace.append(f"since changed: {len(found_)}")
        return found_

    async def _successors(
        self,
        conn: AsyncConnection,
        scope: str,
        ctx: scoring.Weights,
        now: datetime,
        found: dict[int, Candidate],
    ) -> None:
        """ "大刘还住在下沙吗" names a state that has since changed: the past version
        matches, and the version that replaced it is the answer for now."""
        params = self.params.scoring
        past: dict[int, tuple[Memory, scoring.Match]] = {}
        for memory, bi, stranger in await self._candidates(conn, scope, ctx, now, True, near=False):
            if is_visible(memory, scope, now):
                continue  # current ones were weighed by the lexical stage already
            f = _match(ctx, memory, bi, stranger)
            if f is not None and scoring.speaks(f, params):
                past[memory.id] = (memory, f)
        origin = {mid: mid for mid in past}
        frontier = set(past)
        vis = visible(scope, now)
        for _ in range(SUCCESSOR_HOPS):
            if not frontier:
                break
            edges = await repo.relations(conn, scope, frontier, ("supersedes",))
            newer = {src: origin[dst] for src, dst, _ in edges if dst in frontier}
            if not newer:
                break
            for memory in await repo.select_where(conn, m.id.in_(sorted(newer)), vis):
                if is_visible(memory, scope, now) and memory.id not in found:
                    old, f = past[newer[memory.id]]
                    reason = f"问到的旧情况（#{old.id}「{old.content[:12]}…」）已被这条更新"
                    found[memory.id] = Candidate(memory, "graph", f.score, reason)
            origin.update(newer)
            frontier = set(newer) - found.keys()

    async def _identity(
        self,
        conn: AsyncConnection,
        scope: str,
        persons: Sequence[frozenset[str]],
        now: datetime,
        retrospective: bool,
        found: dict[int, Candidate],
    ) -> None:
        """ "X是谁": what the chat says X is, most important first (at most two)."""
        names = sorted({name for group in persons for name in group})
        vis = visible(scope, now, retrospective=retrospective)
        for memory in await repo.identity_statements(conn, names, vis, limit=IDENTITY_LIMIT):
            if is_visible(memory, scope, now, retrospective=retrospective):
                said = next((n for n in names if f"{n}是" in normalise(memory.content)), names[0])
                reason = f"问的是{said}是谁：记忆里说「{said}是…」" + _when(memory, now)
                found[memory.id] = Candidate(memory, "lexical", IDENTITY_SCORE, reason)

    async def _graph(
        self,
        conn: AsyncConnection,
        scope: str,
        now: datetime,
        retrospective: bool,
        found: dict[int, Candidate],
        limit: int,
        trace: list[str],
        linked: set[int],
    ) -> dict[int, frozenset[int]]:
        """One hop from what stages 1-2 found: neighbours fill free slots (scored below
        their source), contradicting partners are always fetched so they can be shown
        together. Returns the contradiction pairs among the candidates. `linked`: the
        sources that have any relation (the others need no query)."""
        sources = {mid: c for mid, c in found.items() if c.stage in ("lexical", "near")}
        if not sources:
            return {}
        kinds = (*GRAPH_KINDS, "supersedes") if retrospective else GRAPH_KINDS
        edges = await repo.relations(conn, scope, sources, kinds) if linked & sources.keys() else []
        fill = len(found) < limit
        links: dict[int, tuple[int, RelationKind]] = {}
        earlier: set[int] = set()
        for src, dst, kind in edges:
            if kind == "supersedes" and src in sources and dst not in found:
                # "以前…": the version a found memory replaced is what is asked about.
                links[dst] = (src, kind)
                earlier.add(dst)
        for src, dst, kind in edges:
            for a, b in ((src, dst), (dst, src)):
                wanted = fill or kind == "contradicts"
                if wanted and a in sources and b not in found and b not in links:
                    links[b] = (a, kind)
        added = 0
        if links:
            vis: ColumnElement[bool] = visible(scope, now, retrospective=retrospective)
            for memory in await repo.select_where(conn, m.id.in_(sorted(links)), vis):
                if not is_visible(memory, scope, now, retrospective=retrospective):
                    continue
                source_id, kind = links[memory.id]
                reason = f"与#{source_id}{_KIND_WORDS[kind]}" + _when(memory, now)
                source = sources[source_id]
                if memory.id in earlier:
                    found[memory.id] = Candidate(memory, source.stage, source.score, reason)
                else:
                    score = source.score * self.params.graph_factor
                    found[memory.id] = Candidate(memory, "graph", score, reason)
                added += 1
        trace.append(f"graph: {added}")
        pairs: dict[int, set[int]] = {}
        for src, dst, kind in edges:
            if kind == "contradicts" and src in found and dst in found:
                pairs.setdefault(src, set()).add(dst)
                pairs.setdefault(dst, set()).add(src)
        return {k: frozenset(v) for k, v in pairs.items()}

    async def _vector(
        self,
        conn: AsyncConnection,
        scope: str,
        text: str,
        now: datetime,
        retrospective: bool,
        trace: list[str],
    ) -> list[Candidate]:
        side = self.vector
        if side is None or side.mode == "off":
            return []
        ids = await self._cache.visible_ids(conn, scope, now, retrospective)
        _, _, aliases = await self._cache.names(conn, scope)
        try:
            guess = await side.guess(VectorAsk(scope, text, ids, conn, aliases))
        except Exception:  # the side path must never break recall
            log.exception("vector side path failed")
            return []
        if guess is None or guess.memory_id not in ids:
            return []
        trace.append(f"vector ({side.mode}): #{guess.memory_id} {guess.score:.3f}")
        if side.mode != "candidate":
            log.info("vector shadow guess in %s: #%s %.3f", scope, guess.memory_id, guess.score)
            return []
        memory = await repo.get(conn, scope, guess.memory_id)
        if memory is None or not is_visible(memory, scope, now, retrospective=retrospective):
            return []
        return [Candidate(memory, "vector", guess.score, VECTOR_LABEL)]


def _match(
    ctx: scoring.Weights,
    memory: Memory,
    bi: frozenset[str],
    stranger: bool,
    lex: Lexicon | None = None,
) -> scoring.Match | None:
    """How one fetched memory answers the question (`lex`: through synonyms too)."""
    text = f"{memory.subject} {memory.content}"
    return scoring.match(ctx, memory.id, bi, lex=lex, doc_text=text, stranger=stranger)


def _selective(terms: set[str] | frozenset[str], df: Mapping[str, int], budget: int) -> set[str]:
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


def member_groups(
    subjects: Sequence[str], alias_map: Mapping[str, str], nicknames: Sequence[str]
) -> list[frozenset[str]]:
    """The chat's members, each with all of their names (normalised)."""
    bots = {normalise(n) for n in nicknames} | {"group", "bot", "群", ""}
    groups = [frozenset(normalise(n) for n in g) for g in name_groups(alias_map)]
    known = set().union(*groups) if groups else set()
    for subject in subjects:
        name = normalise(subject.strip())
        if name not in known and name not in bots:
            groups.append(frozenset({name}))
            known.add(name)
    return [g for g in groups if not g & bots]


def _reason(label: str, matched: Sequence[str], memory: Memory, now: datetime) -> str:
    words = "、".join(f"「{w}」" for w in matched[:4])
    return f"{label}{words}" + _when(memory, now)


def _when(memory: Memory, now: datetime) -> str:
    if memory.valid_to is not None and memory.valid_to <= now:
        return f"（以前的情况，{memory.valid_to.date().isoformat()} 起不再成立）"
    if memory.status == "cold":
        return "（很久没用到的旧记忆）"
    return ""
