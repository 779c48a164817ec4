"""A model that hangs, fails or talks garbage: the chat gets the failure line, the
archive keeps going, and no watermark moves (figures: benchmarks/faults/run.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_core import Settings

from .model_faults import MEANWHILE, MODES, probe


@pytest.mark.parametrize("mode", MODES)
async def test_a_failing_model_costs_the_chat_one_line_and_moves_nothing(
    tmp_path: Path, mode: str
) -> None:
    result = await probe(mode, tmp_path / "data")

    assert result.reply_kind == "failure"
    assert result.reply_text == Settings().failure_line
    assert result.archived_meanwhile == MEANWHILE
    assert result.batch_state == "failed"
    assert result.watermarks_after == result.watermarks_before == (0, 0)
