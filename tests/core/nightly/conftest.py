"""A core with a scripted model and recorded alerts (helpers live in `seed`)."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from memory_core import FakeClock, Settings, Yuji
from memory_core.llm.fake import ScriptedLLM
from memory_core.ops.alerts import RecordingAlertSink

from .seed import sh


@pytest.fixture
def clock() -> FakeClock:
    # 04:00 on the 21st in Shanghai: the 20th has just ended.
    return FakeClock(sh(2026, 11, 21, 4, 0))


@pytest.fixture
def llm() -> ScriptedLLM:
    return ScriptedLLM()


@pytest.fixture
def sink() -> RecordingAlertSink:
    return RecordingAlertSink()


@pytest.fixture
async def core(
    settings: Settings, clock: FakeClock, llm: ScriptedLLM, sink: RecordingAlertSink
) -> AsyncIterator[Yuji]:
    opened = await Yuji.open(settings, clock=clock, llm=llm, alert_sink=sink)
    try:
        yield opened
    finally:
        await opened.close()
