"""Recent chat as a recall source: messages not consolidated yet, quoted (pure
choice over what `RecentSource` reads).

A busy chat can leave hours of messages between its acknowledged watermark and the
twenty the prompt already shows; until their batch is acknowledged no memory holds
them. This source searches exactly those (storage/archive/message_search.py's rule: this
chat only, above the watermark, below the recent window, never the bot's own words,
never a redacted message) the way memories are searched: bigram full text (indexed
as the archive commits) and the embedding model (vectors made in the background,
memory_core/vectors/messages.py). Each candidate is read as a memory whose subject
is its sender and whose content is its words, and the same relevance model gives it
P; the best `QUOTES` at or above the floor are quoted: who said it, when, the words,
never a fact the bot learned. A wake that asks about nothing gets no quotes (the
engine does not ask this source then).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from memory_core.storage import MessageSearch, Window
from memory_core.types import Experience, Quoted

from . import features, language
from .dense_port import MessageDense, best_first, scores_of
from .features import FEATURES, Baseline, Seen
from .question import Names, Question, name_tokens
from .ranking import Points, Said, restates
from .relevance import RelevanceModel

QUOTES = 3
"""Messages quoted at most (their own prompt block)."""
WORDS_LIMIT = 40
DENSE_LIMIT = 30


@dataclass(frozen=True, slots=True)
class Heard:
    """The recent messages one question found, before P reads them (their rows need
    the question's baseline, known with its vector)."""

    messages: tuple[Experience, ...]
    seen: tuple[Seen, ...]
    heard: frozenset[str]
    """The question's terms the messages found by words hold."""
    window: Window


@dataclass(frozen=True, slots=True)
class Found:
    """The candidates of one question with their features (no decision yet)."""

    messages: tuple[Experience, ...]
    rows: np.ndarray
    window: Window

    @classmethod
    def of(cls, heard: Heard, q: Question, baseline: Baseline) -> Found:
        rows = features.rows(q, heard.seen, baseline, heard.heard)
        return cls(heard.messages, rows, heard.window)


class RecentSource:
    def __init__(
        self, repo: MessageSearch, dense: MessageDense | None, recent_messages: int
    ) -> None:
        self.repo = repo
        self.dense = dense
        self.recent_messages = recent_messages

    async def find(
        self,
        scope: str,
        q: Question,
        names: Names,
        *,
        before_id: int | None,
        dense: bool,
    ) -> Heard:
        """The chat's quotable messages sharing the question's words or near its vector
        (the engine starts this as soon as the wake is read: it overlaps the memories'
        search)."""
        terms = {f for t in q.terms for f in language.word_forms(t)}
        async with self.repo.db.read() as conn:  # the window and its words, one snapshot
            window = await self.repo.window(scope, self.recent_messages, before_id, conn=conn)
            if window.empty:
                return Heard((), (), frozenset(), window)
            matched = await self.repo.word_candidates(
                scope, terms | name_tokens(q, names), window, limit=WORDS_LIMIT, conn=conn
            )
        bm25 = {m.id: rank for rank, (m, _) in enumerate(matched)}
        heard = frozenset(t for _, tokens in matched for t in tokens) & q.terms
        scores = None
        if dense and self.dense is not None:
            scores = await self.dense.message_scores(
                scope, q.embed_text, window.acked_id, window.start
            )
        dense_rank: dict[int, int] = {}
        if scores is not None and len(scores.ids):
            order = best_first(scores.ids, scores.scores, DENSE_LIMIT)
            dense_rank = {int(scores.ids[i]): r for r, i in enumerate(order)}
        # The word candidates were read under the rule already; only the rest is read.
        by_id = {m.id: m for m, _ in matched}
        rest = sorted(set(dense_rank) - by_id.keys())
        by_id.update((m.id, m) for m in await self.repo.quotable(scope, rest, window))
        # Belt and braces over the SQL: this chat, inside the window, nobody's bot.
        kept = tuple(
            m
            for _, m in sorted(by_id.items())
            if m.scope == scope and window.acked_id < m.id < window.start and not m.is_bot
        )
        cosine: dict[int, float] = {}
        if scores is not None:
            cosine = scores_of(scores.ids, scores.scores, [m.id for m in kept])
        seen = tuple(
            Seen(
                subject=m.sender_name,
                content=m.text,
                ended=False,
                dense=cosine.get(m.id) if scores is not None else None,
                dense_rank=dense_rank.get(m.id),
                bm25_rank=bm25.get(m.id),
                person=m.sender_id,
                kind="person",
            )
            for m in kept
        )
        return Heard(kept, seen, heard, window)


def choose(
    found: Found, model: RelevanceModel, points: Points, limit: int = QUOTES
) -> tuple[Quoted, ...]:
    """The best by P at or above the floor, at most `limit`, a message saying what a
    better one already says counted once; best first."""
    if not found.messages or limit <= 0:
        return ()
    p = model.p(found.rows)
    order = sorted(range(len(p)), key=lambda i: (-p[i], -found.messages[i].id))
    out: list[Quoted] = []
    said: list[Said] = []
    other = FEATURES.index("names_other")
    for i in order:
        band = points.band(float(p[i]))
        if band is None or len(out) >= limit:
            break
        if found.rows[i][other] > 0:  # said by someone else than the wake is about
            band = "related"
        mine = Said.of(found.messages[i].text)
        if any(restates(mine, other) for other in said):
            continue
        said.append(mine)
        out.append(
            Quoted(
                message=found.messages[i],
                score=round(float(p[i]), 4),
                band=band,
                why=model.strongest(found.rows[i]),
            )
        )
    return tuple(out)


def ids_of(quotes: Sequence[Quoted]) -> list[int]:
    return [q.message.id for q in quotes]
