"""Issue 4 end to end: the real bot archives 100 group messages from a OneBot peer,
its scheduler consolidates them against a real OpenAI-compatible server on loopback,
and memories appear whose evidence rows point at exactly those messages."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.openai_server import FakeOpenAIServer, Reply, openai_server

from .harness import count_rows, query, running_bot, wait_until

__all__ = ["openai_server"]

pytestmark = pytest.mark.e2e

GROUP = 5001
SCOPE = f"group:{GROUP}"


def consolidating_model(body: dict[str, Any]) -> Reply | None:
    messages = body.get("messages", [])
    if not body.get("tools") or len(messages) < 2:
        return Reply.text("嗯嗯")  # not a consolidation request
    user = str(messages[1].get("content") or "")
    match = re.search(r"token：(\S+)", user)
    if match is None:
        return Reply.text("嗯嗯")
    token = match.group(1)
    if any(m.get("role") == "tool" for m in messages):
        return Reply.text("整理完了")  # the ack already happened in the first turn
    lines = re.findall(r"^#(\d+) \[[^\]]*\] ([^：]+)：(.*)$", user, re.M)
    first_id, sender, text = lines[0]
    return Reply.tools(
        (
            "write_memory",
            {
                "token": token,
                "type": "event",
                "subject": sender.split("(")[0],
                "content": f"{sender.split('(')[0]}说过：{text}",
                "evidence": [int(first_id), int(lines[1][0])],
            },
        ),
        (
            "acknowledge",
            {"token": token, "outcome": "extracted", "summary": f"{len(lines)} 条闲聊"},
        ),
    )


async def test_scheduler_consolidates_archived_group_messages(
    tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    openai_server.handler = consolidating_model
    env = {
        **openai_server.env(api_key="sk-e2e"),
        "YUJI_CONSOLIDATION_TICK_S": "1",
        "YUJI_ELIGIBLE_MAX_WAIT_S": "1",
        "YUJI_CONSOLIDATION_HOURLY_CAP": "20",
    }
    async with running_bot(tmp_path, env=env) as bot:
        async with bot.peer() as peer:
            for i in range(1, 101):
                await peer.send_event(
                    peer.group_message(
                        f"第{i}条：今天食堂的红烧肉{'真香' if i % 2 else '一般'}",
                        group_id=GROUP,
                        message_id=90000 + i,
                        user_id=30000 + i % 4,
                        nickname=f"同学{i % 4}",
                    )
                )
            await wait_until(lambda: count_rows(bot.data_dir, "experiences") == 100)
            max_id = query(bot.database, "SELECT max(id) FROM experiences")[0][0]
            await wait_until(
                lambda: (
                    query(
                        bot.database,
                        "SELECT acked_id FROM consolidation_cursors WHERE scope = ?",
                        (SCOPE,),
                    )
                    == [(max_id,)]
                ),
                timeout_s=60,
            )
            # Consolidation never speaks in the chat.
            assert [c for c in peer.calls if c.action.startswith("send_")] == []
        log = bot.log_text()

    assert "sk-e2e" not in log
    batches = query(
        bot.database,
        "SELECT id, state, outcome, first_id, last_id, message_count FROM consolidation_batches"
        " ORDER BY id",
    )
    assert all(b[1] == "done" and b[2] == "extracted" for b in batches)
    assert sum(b[5] for b in batches) == 100
    assert all(b[5] <= 40 for b in batches)

    evidence = query(
        bot.database,
        "SELECT m.id, m.scope, e.scope, e.fingerprint, e.text FROM memories m"
        " JOIN memory_evidence ev ON ev.memory_id = m.id"
        " JOIN experiences e ON e.id = ev.experience_id",
    )
    assert len({row[0] for row in evidence}) == len(batches)
    assert len(evidence) == 2 * len(batches)
    for _memory_id, memory_scope, exp_scope, fingerprint, text in evidence:
        assert memory_scope == exp_scope == SCOPE
        assert 90001 <= int(fingerprint) <= 90100
        assert text.startswith("第")
    assert count_rows(bot.data_dir, "fragments") == len(batches)

    # What the model was shown: every message exactly once, with the bearer key.
    consolidation_requests = [r for r in openai_server.requests if r.body.get("tools")]
    assert all(r.headers["authorization"] == "Bearer sk-e2e" for r in consolidation_requests)
    prompts = "\n".join(r.messages[1]["content"] for r in consolidation_requests)
    for i in range(1, 101):
        assert prompts.count(f"第{i}条：") == 1
