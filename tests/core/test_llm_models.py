"""A model per job: YUJI_<JOB>_LLM_* override YUJI_LLM_* for chat, consolidation,
nightly and vision; each job's calls go to its own server and are recorded under it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from memory_core import FakeClock, Settings, Yuji
from memory_core.chat.service import Incoming
from memory_core.settings import ModelEndpoint, settings_from_mapping
from memory_core.types import NewExperience
from tests.fakes.openai_server import FakeOpenAIServer, Reply

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
DEFAULT = "http://127.0.0.1:8001/v1"  # never contacted: these tests only read settings


def test_each_job_falls_back_to_the_default_model() -> None:
    settings = settings_from_mapping(
        {
            "YUJI_LLM_BASE_URL": DEFAULT,
            "YUJI_LLM_API_KEY": "sk-main",
            "YUJI_LLM_MODEL": "deepseek-chat",
            "YUJI_CONSOLIDATION_LLM_MODEL": "deepseek-lite",
            "YUJI_NIGHTLY_LLM_BASE_URL": "http://127.0.0.1:11434/v1",
            "YUJI_NIGHTLY_LLM_MODEL": "qwen2.5:7b",
        }
    )
    assert settings.model_for("chat") == ModelEndpoint(DEFAULT, "sk-main", "deepseek-chat")
    assert settings.model_for("consolidation") == ModelEndpoint(DEFAULT, "sk-main", "deepseek-lite")
    # Another provider never receives the default key.
    assert settings.model_for("nightly") == ModelEndpoint(
        "http://127.0.0.1:11434/v1", "", "qwen2.5:7b"
    )
    # Vision has no default model.
    assert settings.model_for("vision") is None
    assert settings.with_changes(vision_llm_model="qwen-vl").model_for("vision") == ModelEndpoint(
        DEFAULT, "sk-main", "qwen-vl"
    )
    assert Settings().model_for("chat") is None
    assert "sk-main" not in repr(settings.model_for("chat"))


def consolidating(body: dict[str, Any]) -> Reply:
    import re

    user = str(body["messages"][1].get("content") or "")
    token = re.search(r"token：(\S+)", user)
    assert token
    return Reply.tool("acknowledge", {"token": token.group(1), "outcome": "nothing"})


async def test_jobs_call_their_own_servers(tmp_path: Path) -> None:
    with FakeOpenAIServer(model="good") as good, FakeOpenAIServer(model="cheap") as cheap:
        good.push("在呢")
        cheap.handler = consolidating
        settings = Settings(
            data_dir=tmp_path / "data",
            llm_base_url=good.base_url,
            llm_api_key="sk-good",
            llm_model="good",
            consolidation_llm_base_url=cheap.base_url,
            consolidation_llm_api_key="sk-cheap",
            consolidation_llm_model="cheap",
            eligible_min_pending=1,
        )
        core = await Yuji.open(settings, clock=FakeClock(NOW))
        try:
            assert core.models.vision is None
            await core.archive.append(
                NewExperience(
                    scope="group:1",
                    fingerprint="m1",
                    sender_id="200",
                    sender_name="阿明",
                    text="今天好冷",
                    sent_at=NOW - timedelta(minutes=3),
                )
            )
            await core.archive.flush()
            report = await core.consolidation.run_once(force=True)
            assert report is not None
            assert report.state == "done"

            async def send(text: str) -> str:
                return "bot-1"

            incoming = Incoming(
                "group:1", "m2", "200", "阿明", "大肥鱼在吗", NOW, "10000", is_private=False
            )
            outcome = await core.chat.respond(incoming, send)
            assert outcome.kind == "reply"
            rows = await core.usage.repo.rows()
        finally:
            await core.close()
        assert [r.body["model"] for r in good.requests] == ["good"]
        assert [r.body["model"] for r in cheap.requests] == ["cheap"]
        assert good.requests[0].headers["authorization"] == "Bearer sk-good"
        assert cheap.requests[0].headers["authorization"] == "Bearer sk-cheap"
    assert sorted((r.job, r.model) for r in rows) == [("chat", "good"), ("consolidation", "cheap")]


async def test_jobs_on_one_endpoint_share_one_client(tmp_path: Path) -> None:
    settings = Settings(
        data_dir=tmp_path / "data",
        llm_base_url="http://127.0.0.1:9/v1",
        llm_model="m",
        nightly_llm_model="n",
    )
    core = await Yuji.open(settings)
    try:
        assert len(core.models.clients) == 2
        chat, nightly = core.models.chat, core.models.nightly
        assert chat is not None
        assert nightly is not None
        assert (chat.model, nightly.model) == ("m", "n")
        assert core.models.consolidation is not None
        assert core.models.consolidation.inner is chat.inner
    finally:
        await core.close()
