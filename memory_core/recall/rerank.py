"""An optional reranker (`YUJI_RERANK_*`, docs/providers.md): a model that reads the
question and a memory together, over a provider's API or a local cross-encoder.

It is one stage between the features and the decision, and it changes nothing when it
is not configured. On a wake that asks something, the `CANDIDATES` best candidates by
P without it (the engine's default: 20) are sent to it in one call; its score becomes
one more column of their rows (`relevance.RERANK`, 0 for the candidates it did not
read), and weights fitted for this pair of embedding model and reranker (`yuji eval
--calibrate`, stored per pair) decide instead of the default ones. On a timeout, an
error or an answer that does not parse, the rows and the weights stay those without
it, so the bands are exactly what they would have been: the failure is counted (here
and as an `llm_usage` row) and alerted at most once an hour.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Protocol

import numpy as np
import numpy.typing as npt

from memory_core.tokenize import normalise
from memory_core.types import Memory

from .relevance import RelevanceModel

if TYPE_CHECKING:
    from .decision import Explained

log = logging.getLogger(__name__)

ALERT_EVERY_S = 3600.0
GRACE_S = 0.25
"""The stage's deadline stands this far behind the provider's own, so a slow API ends
as the provider's timeout (counted as such) rather than a cancellation."""


class Reranker(Protocol):
    @property
    def reranker_id(self) -> str:
        """Names the model; weights are calibrated per (embedding model, this id)."""
        ...

    async def scores(
        self, query: str, documents: Sequence[str], *, scope: str | None = None
    ) -> list[float]:
        """One score per document, higher = more relevant; raises LLMError."""
        ...

    async def aclose(self) -> None:
        """Release its connections (at shutdown)."""
        ...


def document(memory: Memory) -> str:
    """What the reranker reads of a memory: its subject when the text does not name
    it (a person's fact written without the name), then its text."""
    subject = memory.subject.strip()
    if (
        not subject
        or subject in ("group", "bot")
        or normalise(subject) in normalise(memory.content)
    ):
        return memory.content
    return f"{subject}：{memory.content}"


def leaders(p: npt.NDArray[np.float64], k: int) -> list[int]:
    """The positions of the `k` highest P, best first (ties: the earlier row)."""
    return [int(i) for i in np.argsort(-p, kind="stable")[:k]]


def squashed(scores: Sequence[float]) -> list[float]:
    """Scores in 0..1 as they are; raw logits (a provider that does not normalise)
    through the logistic function, all of them alike."""
    if all(0.0 <= s <= 1.0 for s in scores):
        return list(scores)
    return [1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, s)))) for s in scores]


def with_column(
    rows: npt.NDArray[np.float64], at: Sequence[int], scores: Sequence[float]
) -> npt.NDArray[np.float64]:
    """`rows` with the reranker's column appended (0 where it did not read)."""
    column = np.zeros((len(rows), 1), dtype=np.float64)
    column[list(at), 0] = scores
    return np.hstack([rows, column])


class RerankStage:
    def __init__(
        self,
        reranker: Reranker,
        *,
        candidates: int = 20,
        timeout_s: float = 2.0,
        alert: Callable[[str], None] | None = None,
    ) -> None:
        self.reranker = reranker
        self.candidates = candidates
        self.timeout_s = timeout_s
        self._alert = alert
        self._alerted_at: float | None = None
        self.failures = 0
        """Wakes whose reranking failed since start (each also an `llm_usage` row)."""

    @property
    def reranker_id(self) -> str:
        return self.reranker.reranker_id

    async def rows(
        self, scope: str, ex: Explained, base: RelevanceModel
    ) -> tuple[npt.NDArray[np.float64] | None, str]:
        """(the rows with the reranker's column, a trace line); None and why when it failed."""
        at = leaders(base.p(ex.rows), self.candidates)
        documents = [document(ex.memories[i]) for i in at]
        started = time.perf_counter()
        try:
            async with asyncio.timeout(self.timeout_s + GRACE_S):
                found = await self.reranker.scores(ex.question.embed_text, documents, scope=scope)
        except Exception as exc:  # a timeout, an LLMError, a model that would not run
            return None, self._failed(scope, f"{type(exc).__name__}: {exc}")
        ms = (time.perf_counter() - started) * 1000
        if len(found) != len(documents):
            return None, self._failed(scope, f"{len(found)} scores for {len(documents)} memories")
        return with_column(ex.rows, at, squashed(found)), (
            f"reranker {self.reranker_id}: {len(documents)} candidates in {ms:.0f} ms"
        )

    def _failed(self, scope: str, why: str) -> str:
        self.failures += 1
        log.info("reranker failed in %s (%s); the bands stand without it", scope, why)
        now = time.monotonic()
        if self._alert is not None and (
            self._alerted_at is None or now - self._alerted_at >= ALERT_EVERY_S
        ):
            self._alerted_at = now
            self._alert(
                f"重排模型 {self.reranker_id} 调用失败（{why}），回忆暂时不用它；"
                f"启动以来失败 {self.failures} 次"
            )
        return f"reranker failed ({why}): bands without it"
