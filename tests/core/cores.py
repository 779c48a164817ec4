"""A core as the core tests open it: the fake embedder (no index until a test builds
one) and the hand-made relevance models of relevance_models.py."""

from __future__ import annotations

from memory_core import FakeClock, Settings, Yuji
from memory_core.vectors import FakeEmbedder

from .relevance_models import FAKE_MODEL, LEXICAL_MODEL


async def open_core(settings: Settings, clock: FakeClock) -> Yuji:
    return await Yuji.open(
        settings,
        clock=clock,
        embedder=FakeEmbedder(),
        relevance=FAKE_MODEL,
        lexical_relevance=LEXICAL_MODEL,
    )
