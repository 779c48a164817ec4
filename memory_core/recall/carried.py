"""Recall's one door across chats (#45): a person's own words said in another group,
joined to a wake about them (memory_core/people/carry.py says what may travel).

The memories come only from the carrying scope function (`CarrySource.carried`),
never from this chat's retrievers. Each is read by the same relevance model as the
chat's own candidates (its features depend on the wake and that memory alone:
features.py), with its cosine from its own chat's vectors, and joins only above the
floor: at most `MAX_CARRIED`, always `related`, labelled as said elsewhere (the chat
it came from is never named). A carried memory takes a place only from a `related`
memory of this chat with a lower P; a `sure` one keeps its place.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from datetime import datetime
from typing import Protocol

from memory_core.tokenize import normalise
from memory_core.types import Memory, Recalled, is_group_scope

from . import features
from .decision import Explained
from .dense_port import RELATED_LABEL, DenseSearch
from .features import Seen
from .ranking import Points
from .relevance import RelevanceModel

log = logging.getLogger(__name__)

CARRIED_LABEL = "在别的群说过"
"""How a carried memory is shown: said elsewhere, never where."""
MAX_CARRIED = 2
"""Carried memories joined to one wake at most (the chat's own come first)."""


class CarrySource(Protocol):
    """`core.carrying` (memory_core/people/carrying.py)."""

    async def carried(
        self,
        target: str,
        about: Iterable[str],
        now: datetime | None = None,
        names: Iterable[str] = (),
    ) -> tuple[Memory, ...]: ...


def about_names(ex: Explained) -> frozenset[str]:
    """The names the wake is about (itself, or by the turns before: a pronoun)."""
    return ex.question.named | ex.wake.about


class CarriedStage:
    def __init__(self, source: CarrySource, dense: DenseSearch | None) -> None:
        self.source = source
        self.dense = dense

    async def join(
        self,
        scope: str,
        ex: Explained,
        items: tuple[Recalled, ...],
        models: tuple[RelevanceModel, RelevanceModel],
        points: Callable[[RelevanceModel], Points],
        limit: int,
        now: datetime,
    ) -> tuple[tuple[Recalled, ...], str]:
        """`items` with the carried memories that answer the wake; a trace line.
        `models`: (the model deciding this wake, the words-only one); `points`: the
        floor and sure line of a model."""
        q = ex.question
        if limit <= 0 or not (q.persons or about_names(ex)):
            return items, "carried: the wake is about no one"
        if len(items) >= limit and all(i.band == "sure" for i in items[:limit]):
            return items, "carried: no place (every one is sure)"
        try:
            found = await self.source.carried(scope, q.persons, now, about_names(ex))
            cosines = await self._cosines(q.embed_text, found)
        except Exception:  # fail closed: nothing carried, the chat's own recall stands
            log.warning("carrying into %s failed", scope, exc_info=True)
            return items, "carried: unread, nothing carried"
        scored = self.scored(ex, found, cosines, models, points)
        return merged(items, scored, limit), f"carried: {[r.memory.id for r in scored]}"

    def scored(
        self,
        ex: Explained,
        found: Sequence[Memory],
        cosines: dict[int, float],
        models: tuple[RelevanceModel, RelevanceModel],
        points: Callable[[RelevanceModel], Points],
    ) -> list[Recalled]:
        """The carried memories above the floor, best first, at most MAX_CARRIED."""
        if not found:
            return []
        # The carrying function gave only memories about the people the wake is about.
        q = replace(
            ex.question, persons=ex.question.persons | {m.subject_person or "" for m in found}
        )
        seen = [
            Seen(
                subject=m.subject,
                content=m.content,
                ended=False,
                dense=cosines.get(m.id),
                dense_rank=None,
                bm25_rank=None,
                person=m.subject_person,
                kind=m.subject_kind,
            )
            for m in found
        ]
        model = models[0] if all(m.id in cosines for m in found) else models[1]
        # As in the chat's own rows, only the terms some candidate uses count.
        said = [(features.said_in(f"{m.subject} {m.content}"), normalise(m.content)) for m in found]
        heard = frozenset(t for t in q.terms if any(features.states_term(t, *s) for s in said))
        p = model.p(features.rows(q, seen, ex.baseline, heard))
        floor = points(model)
        order = sorted(range(len(found)), key=lambda i: (-p[i], found[i].id))
        return [
            carried_item(found[i], float(p[i]))
            for i in order
            if floor.band(float(p[i])) is not None
        ][:MAX_CARRIED]

    async def _cosines(self, text: str, found: Sequence[Memory]) -> dict[int, float]:
        if self.dense is None or self.dense.mode != "on" or not found:
            return {}
        out: dict[int, float] = {}
        for scope in sorted({m.scope for m in found}):
            ids = [m.id for m in found if m.scope == scope]
            out.update(await self.dense.cosines(scope, text, ids))
        return out


def carried_item(memory: Memory, p: float) -> Recalled:
    """A carried memory as recall gives it: `related`, said elsewhere."""
    return Recalled(
        memory=memory,
        stage="carried",
        score=round(p, 4),
        reason=f"{RELATED_LABEL}（{CARRIED_LABEL}）",
        band="related",
    )


def merged(
    items: tuple[Recalled, ...], carried: Sequence[Recalled], limit: int
) -> tuple[Recalled, ...]:
    """The chat's own items with the carried ones: each into a free place, else in
    the place of the `related` item of lowest P below its own; placed before the first
    `related` item of lower P (the chat's own keep their order); never more than
    `limit`, never in a `sure` item's place, never as `sure`."""
    out = list(items[:limit])
    for item in carried:
        item = replace(item, band="related")
        if len(out) >= limit:
            weaker = [
                i for i, own in enumerate(out) if own.band == "related" and own.score < item.score
            ]
            if not weaker:
                continue
            del out[min(weaker, key=lambda i: (out[i].score, -i))]
        at = next(
            (i for i, own in enumerate(out) if own.band == "related" and own.score < item.score),
            len(out),
        )
        out.insert(at, item)
    return tuple(out)


def shown_in(item: Recalled, scope: str) -> bool:
    """A recalled item a reply in `scope` may show: the chat's own memory, or one
    carried from a group (never from a private chat, never `sure`). The chat's belt
    and braces over recall's own rule."""
    if item.stage == "carried":
        return is_group_scope(item.memory.scope) and item.band == "related"
    return item.memory.scope == scope
