"""The real bot with its embedding model over a loopback embeddings API (issue 36):
memories written by /remember are embedded by `yuji embed` through the API, the
question is embedded through it too, and the reply's prompt holds the recalled memory;
every call is counted under the `embed` job."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from tests.core.relevance_models import DENSE, hand_model
from tests.fakes.openai_server import FakeOpenAIServer, Reply, openai_server
from tests.fakes.provider_server import ProviderServer, provider_server

from .harness import count_rows, running_bot
from .test_chat_e2e import ENV, MEMORY_LINE, Chat, reply_prompt, text_of

__all__ = ["openai_server", "provider_server"]

pytestmark = pytest.mark.e2e


async def test_the_bot_recalls_through_an_embeddings_api(
    tmp_path: Path, openai_server: FakeOpenAIServer, provider_server: ProviderServer
) -> None:
    openai_server.handler = lambda body: None if body.get("tools") else Reply.text("记得呀")
    openai_server.default = Reply.text("嗯")
    calibration = tmp_path / "calibration"
    calibration.mkdir()
    model = hand_model("api-bge-m3", DENSE)
    (calibration / model.file_name).write_text(model.to_json(), encoding="utf-8")
    env = {
        **ENV,
        **openai_server.env(),
        "YUJI_EMBED_BASE_URL": provider_server.base_url,
        "YUJI_EMBED_MODEL": "bge-m3",
        "YUJI_EMBED_API_KEY": "embed-key",
        "YUJI_CALIBRATION_DIR": str(calibration),
    }
    async with running_bot(tmp_path, env=env) as bot, bot.peer() as peer:
        chat = Chat(peer)
        for fact in ("阿明九月开始学吉他", "小红喜欢吃火锅"):
            assert "记住了" in text_of(await chat.ask(f"/remember {fact}", role="admin"))
        child_env = {k: v for k, v in os.environ.items() if not k.startswith("YUJI_")}
        child_env.update(env, YUJI_DATA_DIR=str(bot.data_dir))
        embedder = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "memory_core.cli",
            "embed",
            env=child_env,
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await asyncio.wait_for(embedder.communicate(), 120)
        assert embedder.returncode == 0, err.decode()
        before = len(openai_server.requests)
        asked = len(provider_server.requests)
        answer = await chat.ask("阿明学的什么乐器", at_bot=True)
        assert text_of(answer) == "记得呀"
        prompt = reply_prompt(openai_server, before)
        assert "阿明九月开始学吉他" in prompt
        assert 1 <= len(MEMORY_LINE.findall(prompt)) <= 5
        questions = [r for r in provider_server.requests[asked:] if r.path == "/v1/embeddings"]
        assert any("乐器" in "".join(r.body["input"]) for r in questions)
        assert {r.authorization for r in provider_server.requests} == {"Bearer embed-key"}
    assert count_rows(bot.data_dir, "llm_usage", "job = 'embed'") >= 3
