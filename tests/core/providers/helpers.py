"""A core on SQLite with the recall models pointed at a loopback provider server."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from pathlib import Path

from memory_core import EvidenceRef, FakeClock, NewExperience, Settings, Yuji
from memory_core.recall.relevance import RelevanceModel
from tests.core.relevance_models import DENSE, hand_model

G1 = "group:1"
NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)


def reranked(embedder: str, reranker: str, weight: float = 12.0) -> RelevanceModel:
    """Hand weights that read the reranker's score (relevance.RERANK) first."""
    model = hand_model(embedder, {**DENSE, "rerank": weight}, bias=-6.0, floor=0.3, sure=0.8)
    return dataclasses.replace(model, reranker=reranker)


def write_calibration(folder: Path, *models: RelevanceModel) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    for model in models:
        (folder / model.file_name).write_text(model.to_json(), encoding="utf-8")


async def open_core(settings: Settings, **kwargs: object) -> Yuji:
    return await Yuji.open(settings, clock=FakeClock(NOW), **kwargs)  # type: ignore[arg-type]


async def write(core: Yuji, content: str, *, subject: str = "小明", scope: str = G1) -> int:
    exp = await core.archive.append(
        NewExperience(
            scope=scope,
            fingerprint=f"{scope}-{content}",
            sender_id="1",
            text=content,
            sent_at=core.clock.now(),
        )
    )
    out = await core.memories.write(
        scope,
        type="fact",
        subject=subject,
        content=content,
        evidence=[EvidenceRef(experience_id=exp)],
    )
    return out.memory.id
