"""The ingest path end to end: raw frames a real client may send, through `bot.py`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .harness import query, running_bot, wait_until

pytestmark = pytest.mark.e2e

MAX_STORED_DEPTH = 40
"""Generous bound on the nesting of what the archive stores (the cap is 32 levels)."""


def depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)  # pyright: ignore[reportUnknownArgumentType, reportUnknownVariableType]
    return 0


async def test_lone_surrogates_and_deep_nesting_keep_the_message(tmp_path: Path) -> None:
    deep: Any = "bottom"
    for _ in range(600):
        deep = {"d": deep}
    async with running_bot(tmp_path) as bot, bot.peer() as peer:
        # Defect 1: half an emoji in the text, the card and a segment key. The client
        # escapes it in JSON (`\ud83d`), as Java and JavaScript clients do.
        broken = peer.group_message(
            [
                {"type": "text", "data": {"text": "半个表情\ud83d在这"}},
                {"type": "weird", "data": {"k\udc00ey": "v"}},
            ],
            group_id=5,
            message_id=1,
            card="阿\ud83d鱼",
        )
        await peer.send_raw(json.dumps(broken))
        # Defect 2: segment data nested 600 levels.
        nested = peer.group_message(
            [{"type": "text", "data": {"text": "深"}}, {"type": "json", "data": {"data": deep}}],
            group_id=5,
            message_id=2,
        )
        await peer.send_raw(json.dumps(nested))
        await peer.send_event(peer.group_message("之后", group_id=5, message_id=3))

        def rows() -> list[tuple[Any, ...]]:
            return query(
                bot.database,
                "SELECT fingerprint, text, sender_name, segments FROM experiences ORDER BY id",
            )

        await wait_until(lambda: any(r[0] == "3" for r in rows()))
        got = {r[0]: r for r in rows()}
        assert set(got) == {"1", "2", "3"}
        assert got["1"][1] == "半个表情\ufffd在这[weird]"
        assert got["1"][2] == "阿\ufffd鱼"
        first = json.loads(got["1"][3])
        assert first[1]["data"] == {"k\ufffdey": "v"}
        # The original code units stay recoverable from the stored segment.
        assert json.loads(first[0]["original"]) == {"text": "半个表情\ud83d在这"}
        assert got["2"][1] == "深[卡片]"
        assert depth(json.loads(got["2"][3])) <= MAX_STORED_DEPTH
        assert bot.running
