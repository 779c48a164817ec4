"""Bring the vector index up to date with the memories: what `yuji embed` runs.

Rows are keyed by memory id and version. A memory's vector combines its own text
and the messages it was heard in (its evidence). A vector is reused only when the
memory's id and the hash of the exact texts embedded are unchanged; anything new, edited, or
whose text changed (a new alias renames a person) is embedded again, and rows of
memories that are gone or retracted are dropped. Each text is embedded on its own, so a vector never depends
on which other texts happened to share its batch: an incremental run and a rebuild
from nothing write the same bytes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from memory_core.storage import MemoryRepo, MemoryText

from .embedder import Embedder, Matrix, l2_normalise
from .store import STORED_DTYPE, IndexRow, VectorIndex, text_sha

if TYPE_CHECKING:
    from .place import IndexPlace

EVIDENCE_VIEWS = 2
"""Evidence messages blended into a memory's vector: the words people actually used,
which questions tend to echo."""
EVIDENCE_CHARS = 200


@dataclass(frozen=True, slots=True)
class EmbedReport:
    model_id: str
    folder: str
    total: int
    embedded: int
    reused: int
    dropped: int

    def as_dict(self) -> dict[str, object]:
        return asdict(self)


def memory_views(content: str, evidence: Sequence[str]) -> tuple[str, ...]:
    """What a memory's vector is made of: its text, then the messages it was heard in."""
    heard = [t[:EVIDENCE_CHARS] for t in evidence if t.strip()]
    return (content, *heard[:EVIDENCE_VIEWS])


def embed_views(embedder: Embedder, views: Sequence[str]) -> Matrix:
    """One memory's vector: its own text's vector plus the mean of its evidence
    messages' vectors, renormalised (each text embedded alone, for determinism)."""
    own = embedder.embed([views[0]])[0]
    if len(views) == 1:
        return own
    heard = np.mean(np.stack([embedder.embed([v])[0] for v in views[1:]]), axis=0)
    return l2_normalise((own + heard).reshape(1, -1))[0]


def embed_many(embedder: Embedder, views: Sequence[Sequence[str]]) -> list[Matrix]:
    """Each memory's vector (`embed_views`). An embeddings API (`batched`) gets every
    text in one call, which it sends in batches (a request per text would take hours
    for a large store); a local model still embeds each text alone."""
    if not getattr(embedder, "batched", False):
        return [embed_views(embedder, v) for v in views]
    texts = list(dict.fromkeys(t for v in views for t in v))
    found = dict(zip(texts, embedder.embed(texts), strict=True))
    out: list[Matrix] = []
    for v in views:
        own = found[v[0]]
        if len(v) == 1:
            out.append(own)
            continue
        heard = np.mean(np.stack([found[t] for t in v[1:]]), axis=0)
        out.append(l2_normalise((own + heard).reshape(1, -1))[0])
    return out


def plan_index(
    memories: Sequence[MemoryText],
    embedder: Embedder,
    previous: VectorIndex | None,
    evidence: dict[int, list[str]] | None = None,
) -> tuple[VectorIndex, EmbedReport]:
    # A vector depends only on the text embedded: a new version with the same text
    # (a status change, a closed validity) keeps its vector under the new key.
    reusable: dict[tuple[int, str], int] = {}
    if previous is not None:
        reusable = {(r.memory_id, r.text_sha): i for i, r in enumerate(previous.rows)}
    rows: list[IndexRow] = []
    vectors: list[npt.NDArray[np.floating] | None] = []
    missing: dict[int, tuple[str, ...]] = {}
    for m in sorted(memories, key=lambda m: (m.scope, m.id)):
        views = memory_views(m.content, (evidence or {}).get(m.id, []))
        row = IndexRow(m.id, m.version, m.scope, m.subject, text_sha("\x1f".join(views)))
        pos = reusable.get((row.memory_id, row.text_sha))
        if previous is not None and pos is not None:
            vectors.append(previous.vectors[pos])
        else:
            missing[len(vectors)] = views
            vectors.append(None)
        rows.append(row)
    embedded = len(missing)
    for at, vector in zip(missing, embed_many(embedder, list(missing.values())), strict=True):
        vectors[at] = vector
    matrix = (
        np.stack([v for v in vectors if v is not None]).astype(STORED_DTYPE)
        if vectors
        else np.zeros((0, embedder.dim), dtype=STORED_DTYPE)
    )
    index = VectorIndex(embedder.model_id, int(matrix.shape[1]), tuple(rows), matrix)
    kept = {(r.memory_id, r.text_sha) for r in rows}
    dropped = sum(1 for key in reusable if key not in kept)
    report = EmbedReport(
        model_id=embedder.model_id,
        folder="",
        total=len(rows),
        embedded=embedded,
        reused=len(rows) - embedded,
        dropped=dropped,
    )
    return index, report


async def sync_index(
    repo: MemoryRepo, embedder: Embedder, place: IndexPlace, *, rebuild: bool = False
) -> EmbedReport:
    """Embed what is missing or stale and write the index (only if it changed)."""
    fingerprint = await repo.source_fingerprint()
    memories = await repo.embeddable()
    evidence = await repo.evidence_texts(EVIDENCE_VIEWS)
    previous = None if rebuild else await place.load(embedder.model_id)
    index, report = plan_index(memories, embedder, previous, evidence)
    built = await place.source(embedder.model_id) is not None
    unchanged = previous is not None and previous.rows == index.rows and built
    await place.save(index, fingerprint, changed=not unchanged)
    return replace(report, folder=place.where(embedder.model_id))
