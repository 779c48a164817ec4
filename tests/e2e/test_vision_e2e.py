"""Images end to end: a OneBot peer sends an image, the bot fetches and stores it, the
fake vision model (on loopback) describes it from a data URL, and the description
reaches the consolidation batch as `[图片：描述]`. A sticker sent twice is described
once."""

from __future__ import annotations

import base64
import re
from pathlib import Path
from typing import Any

import pytest

from tests.fakes.file_server import FileServer
from tests.fakes.openai_server import FakeOpenAIServer, Reply, openai_server

from .harness import query, running_bot, wait_until

__all__ = ["openai_server"]

pytestmark = pytest.mark.e2e

GROUP = 6001
SCOPE = f"group:{GROUP}"
PNG = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4
DESCRIPTION = "一只橘猫趴在键盘上睡觉"


def image_urls(body: dict[str, Any]) -> list[str]:
    urls: list[str] = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            urls += [p["image_url"]["url"] for p in content if p.get("type") == "image_url"]
    return urls


def model(body: dict[str, Any]) -> Reply | None:
    if image_urls(body):
        return Reply.text(DESCRIPTION)
    messages = body.get("messages", [])
    if body.get("tools") and len(messages) >= 2:
        token = re.search(r"token：(\S+)", str(messages[1].get("content") or ""))
        if token:
            return Reply.tool("acknowledge", {"token": token.group(1), "outcome": "nothing"})
    return Reply.text("嗯嗯")


async def test_an_image_is_described_once_and_reaches_the_batch(
    tmp_path: Path, openai_server: FakeOpenAIServer, file_server: FileServer
) -> None:
    openai_server.handler = model
    url = file_server.add("/cat.png", PNG, content_type="image/png")
    env = {
        **openai_server.env(),
        "YUJI_ATTACHMENT_ALLOW_LOOPBACK": "true",  # the file server plays a QQ client on this host
        "YUJI_VISION_LLM_MODEL": "fake-vision",
        "YUJI_VISION_INTERVAL_S": "1",
        "YUJI_CONSOLIDATION_TICK_S": "1",
        "YUJI_ELIGIBLE_MIN_PENDING": "3",
        "YUJI_ELIGIBLE_MAX_WAIT_S": "3600",
    }
    async with running_bot(tmp_path, env=env) as bot, bot.peer() as peer:
        for message_id in (1, 2):  # the same picture twice: one hash
            await peer.send_event(
                peer.group_message(
                    [
                        {"type": "text", "data": {"text": "看我家猫"}},
                        {"type": "image", "data": {"file": "cat.png", "url": url}},
                    ],
                    group_id=GROUP,
                    message_id=message_id,
                )
            )
        await wait_until(
            lambda: (
                query(bot.database, "SELECT status, description FROM image_descriptions")
                == [("done", DESCRIPTION)]
            ),
            timeout_s=30,
        )
        await peer.send_event(peer.group_message("好可爱", group_id=GROUP, message_id=3))
        await wait_until(
            lambda: any(r.body.get("tools") for r in openai_server.requests), timeout_s=30
        )

    vision = [r for r in openai_server.requests if image_urls(r.body)]
    assert len(vision) == 1
    assert vision[0].body["model"] == "fake-vision"
    (data_url,) = image_urls(vision[0].body)
    assert data_url == "data:image/png;base64," + base64.b64encode(PNG).decode()
    (batch,) = [r for r in openai_server.requests if r.body.get("tools")][:1]
    prompt = batch.messages[1]["content"]
    assert prompt.count(f"看我家猫[图片：{DESCRIPTION}]") == 2
