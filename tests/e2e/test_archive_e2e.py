"""Issue 2 end to end: the real bot, a OneBot v11 peer over reverse WebSocket."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from websockets.exceptions import InvalidStatus

from tests.fakes.file_server import FileServer

from .harness import count_rows, query, running_bot, wait_until

pytestmark = pytest.mark.e2e

GROUPS = (1001, 1002, 1003)
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8


async def test_archives_every_unique_message_exactly_once(
    tmp_path: Path, file_server: FileServer
) -> None:
    image_url = file_server.add("/cat.png", PNG, content_type="image/png")
    voice_url = file_server.add("/voice.amr", b"amr", content_type="audio/amr")
    big_text = "鱼" * 34_000 + "x" * 400  # 102,400 bytes of UTF-8
    # The file server plays a QQ client serving its images on this host.
    async with running_bot(tmp_path, env={"YUJI_ATTACHMENT_ALLOW_LOOPBACK": "true"}) as bot:
        async with bot.peer() as peer:
            expected: dict[tuple[str, str], str] = {}
            for i in range(1, 301):
                group = GROUPS[i % 3]
                event = peer.group_message(
                    f"第{i}条 hello", group_id=group, message_id=i, user_id=20000 + i % 7
                )
                await peer.send_event(event)
                expected[(f"group:{group}", str(i))] = f"第{i}条 hello"
                if i % 5 == 0:  # a reconnecting client replays messages
                    await peer.send_event(event)
                if i % 50 == 0:
                    await peer.heartbeat()
            await peer.send_event(
                peer.group_message(
                    [
                        {"type": "text", "data": {"text": "看猫"}},
                        {"type": "image", "data": {"file": "cat.png", "url": image_url}},
                    ],
                    group_id=1001,
                    message_id=301,
                )
            )
            await peer.send_event(peer.group_message(big_text, group_id=1002, message_id=302))
            await peer.send_event(
                peer.group_message(
                    [
                        {"type": "text", "data": {"text": "看"}},
                        {"type": "weird_thing", "data": {"x": 1}},
                        {"type": "record", "data": {"file": "v.amr", "url": voice_url}},
                    ],
                    group_id=1003,
                    message_id=303,
                )
            )
            lookalike = "[CQ:at,qq=all] 不是真的 &#91;CQ:image&#93;"
            await peer.send_event(peer.group_message(lookalike, group_id=1001, message_id=304))
            # Malformed: the ids are not numbers and the sender is missing.
            await peer.send_event(
                {
                    "time": 1,
                    "self_id": peer.self_id,
                    "post_type": "message",
                    "message_type": "group",
                    "message_id": "not-a-number",
                    "group_id": "abc",
                    "message": [{"type": "text"}],
                }
            )
            await peer.send_event(peer.group_message("还在吗", group_id=1003, message_id=305))
            expected[("group:1001", "301")] = "看猫[图片]"
            expected[("group:1002", "302")] = big_text
            expected[("group:1003", "303")] = "看[weird_thing][语音]"
            expected[("group:1001", "304")] = lookalike
            expected[("group:1003", "305")] = "还在吗"

            await wait_until(lambda: count_rows(bot.data_dir, "experiences") >= 305)
            await wait_until(lambda: count_rows(bot.data_dir, "experience_attachments") >= 1)
            assert peer.connected
            assert bot.running

        rows = query(bot.database, "SELECT scope, fingerprint, text FROM experiences")
        assert len(rows) == len(expected) == 305
        assert {(scope, fp): text for scope, fp, text in rows} == expected

        sha = hashlib.sha256(PNG).hexdigest()
        stored = query(bot.database, "SELECT sha256, status, size, mime FROM attachments")
        assert stored == [(sha, "stored", len(PNG), "image/png")]
        assert (bot.data_dir / "attachments" / sha[:2] / sha[2:4] / sha).read_bytes() == PNG
        assert "/voice.amr" not in file_server.requests  # voice is recorded, not fetched
        assert "malformed message event skipped" in bot.log_text()


async def test_token_and_data_dir_come_from_the_environment_alone(tmp_path: Path) -> None:
    # ONEBOT_ACCESS_TOKEN and YUJI_DATA_DIR only as environment variables, in a working
    # directory with no .env at all: bot.py must hand them to NoneBot itself.
    async with running_bot(tmp_path, access_token="s3cret-from-env", clean_cwd=True) as bot:
        assert not (bot.cwd / ".env").exists()
        with pytest.raises(InvalidStatus) as refused:
            await bot.peer(access_token="wrong").connect()
        assert refused.value.response.status_code == 403
        with pytest.raises(InvalidStatus):
            await bot.peer(access_token="").connect()
        async with bot.peer() as peer:
            await peer.send_event(peer.group_message("env ok", group_id=7, message_id=1))
            await wait_until(lambda: count_rows(bot.data_dir, "experiences") == 1)
        assert query(bot.database, "SELECT scope, text FROM experiences") == [("group:7", "env ok")]


async def test_the_bots_own_reply_is_archived_as_bot(tmp_path: Path) -> None:
    # No model is configured, so the reply comes from a command (/cards answers anyone).
    async with running_bot(tmp_path) as bot, bot.peer() as peer:
        await peer.send_event(peer.group_message("/cards", group_id=4242, message_id=1))
        call = await peer.wait_for_call("send_msg", lambda c: c.params.get("group_id") == 4242)
        assert call.params.get("message_type") == "group"
        await wait_until(lambda: count_rows(bot.data_dir, "experiences", "is_bot = 1") == 1)
        ((fingerprint, sender_id, scope),) = query(
            bot.database, "SELECT fingerprint, sender_id, scope FROM experiences WHERE is_bot = 1"
        )
        assert scope == "group:4242"
        assert sender_id == str(peer.self_id)
        assert int(fingerprint) >= 900_000  # the message_id our peer handed back
        assert count_rows(bot.data_dir, "experiences") == 2
