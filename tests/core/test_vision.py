"""Images: described once per content hash by the vision model, shown as `[图片：…]` in
consolidation batches and the reply prompt; a stale or failed image never blocks."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from hypothesis import example, given
from hypothesis import strategies as st

from memory_core import FakeClock, Settings, Yuji
from memory_core.errors import LLMUnavailable
from memory_core.llm.fake import LLMRequest, ScriptedLLM, text_response
from memory_core.prompts.vision import PLACEHOLDER, clean_description, with_descriptions
from memory_core.types import NewExperience
from tests.fakes.openai_server import FakeOpenAIServer, Reply, openai_server

__all__ = ["openai_server"]

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
CAT = b"\x89PNG\r\n\x1a\ncat" * 10
DOG = b"\x89PNG\r\n\x1a\ndog" * 10


def test_descriptions_fill_placeholders_in_order() -> None:
    assert (
        with_descriptions("看[图片]和[动画表情]", ["猫", "笑哭"])
        == "看[图片：猫]和[动画表情：笑哭]"
    )
    assert with_descriptions("[图片][图片]", [None, "狗"]) == "[图片][图片：狗]"
    assert with_descriptions("看猫", ["猫"]) == "看猫[图片：猫]"
    assert with_descriptions("[图片]", []) == "[图片]"
    assert with_descriptions("[表情包]", ["摸鱼的猫"]) == "[表情包：摸鱼的猫]"


@given(st.text(max_size=40), st.lists(st.none() | st.text(min_size=1, max_size=5), max_size=4))
@example(text="", descriptions=["[表情包"])  # once closed into a new placeholder
def test_without_descriptions_the_text_is_unchanged(
    text: str, descriptions: list[str | None]
) -> None:
    blanks = [None] * len(descriptions)
    assert with_descriptions(text, blanks) == text
    filled = with_descriptions(text, descriptions)
    assert len(PLACEHOLDER.findall(filled)) <= len(PLACEHOLDER.findall(text))


def test_clean_description_is_one_bounded_line() -> None:
    assert clean_description("  一只猫。\n在睡觉。 ") == "一只猫。 在睡觉"
    assert clean_description("[图片]") == "【图片】"
    assert clean_description("") is None
    assert len(clean_description("猫" * 500) or "") == 80
    assert clean_description("<think>用户发了图，我想想</think>\n一只猫。") == "一只猫"
    assert clean_description("<think>想到一半被截断") is None


async def open_core(tmp_path: Path, vision: ScriptedLLM | None, **settings: object) -> Yuji:
    return await Yuji.open(
        Settings(data_dir=tmp_path / "data").with_changes(**settings),
        clock=FakeClock(NOW),
        llm=ScriptedLLM(),
        vision=vision,
    )


async def image_message(core: Yuji, fp: str, data: bytes, text: str = "看[图片]") -> int:
    exp = await core.archive.append(
        NewExperience(
            scope="group:1",
            fingerprint=fp,
            sender_id="200",
            sender_name="阿明",
            text=text,
            sent_at=NOW - timedelta(minutes=1),
        )
    )
    sha = core.archive.store.put(data)
    repo = core.archive.repo
    attachment = await repo.record_attachment(
        sha256=sha, mime="image/png", size=len(data), url="http://x/y", at=core.clock.now()
    )
    await repo.link(exp, attachment, 1)
    return exp


async def test_each_hash_is_described_once_and_shown_in_place(tmp_path: Path) -> None:
    def describe(request: LLMRequest) -> object:
        (url,) = request.messages[-1].images
        return text_response("一只猫" if url.endswith(_b64(CAT)) else "一只狗")

    vision = ScriptedLLM(default=describe)  # type: ignore[arg-type]
    core = await open_core(tmp_path, vision)
    try:
        first = await image_message(core, "m1", CAT)
        again = await image_message(core, "m2", CAT)  # a sticker sent twice
        other = await image_message(core, "m3", DOG, "[图片][图片]")
        report = await core.vision.run_once()
        assert (report.described, report.failed) == (2, 0)
        assert len(vision.requests) == 2
        assert (await core.vision.run_once()).described == 0
        exps = await core.archive.get_many("group:1", [first, again, other])
        texts = await core.vision.texts(exps)
        rows = await core.usage.repo.rows()
    finally:
        await core.close()
    assert texts == {
        first: "看[图片：一只猫]",
        again: "看[图片：一只猫]",
        other: "[图片：一只狗][图片]",
    }
    assert {r.job for r in rows} == {"vision"}


def _b64(data: bytes) -> str:
    import base64

    return base64.b64encode(data).decode()


async def test_failures_and_stale_images_never_block(tmp_path: Path) -> None:
    vision = ScriptedLLM([LLMUnavailable("down")])
    core = await open_core(tmp_path, vision)
    try:
        exp = await image_message(core, "m1", CAT)
        assert (await core.vision.run_once()).failed == 1
        # A claimed image whose worker died is released after five minutes.
        await image_message(core, "m2", DOG)
        await core.vision.repo.claim(NOW, 10)
        clock = core.clock
        assert isinstance(clock, FakeClock)
        clock.advance(timedelta(minutes=6))
        assert (await core.vision.run_once()).released == 1
        counts = await core.vision.repo.counts()
        (message,) = await core.archive.get_many("group:1", [exp])
        texts = await core.vision.texts([message])
    finally:
        await core.close()
    assert counts == {"failed": 2}
    assert texts == {}  # "[图片]" stays; nothing waits for a description


async def test_without_a_vision_model_nothing_is_asked(tmp_path: Path) -> None:
    core = await open_core(tmp_path, None)
    try:
        await image_message(core, "m1", CAT)
        report = await core.vision.run_once()
        counts = await core.vision.repo.counts()
    finally:
        await core.close()
    assert report.described == report.failed == 0
    assert counts == {}


async def test_an_image_the_worker_never_reached_in_five_minutes_is_failed(
    tmp_path: Path,
) -> None:
    vision = ScriptedLLM(default=text_response("一只猫"))
    core = await open_core(tmp_path, vision)
    try:
        old = await image_message(core, "m1", CAT)
        clock = core.clock
        assert isinstance(clock, FakeClock)
        clock.advance(timedelta(minutes=6))
        fresh = await image_message(core, "m2", DOG)
        report = await core.vision.run_once()
        counts = await core.vision.repo.counts()
        exps = await core.archive.get_many("group:1", [old, fresh])
        texts = await core.vision.texts(exps)
    finally:
        await core.close()
    assert (report.released, report.described) == (1, 1)
    assert len(vision.requests) == 1  # only the new image was sent
    assert counts == {"failed": 1, "done": 1}
    assert texts == {fresh: "看[图片：一只猫]"}


async def test_a_reasoning_vision_model_s_thinking_never_reaches_the_description(
    tmp_path: Path, openai_server: FakeOpenAIServer
) -> None:
    openai_server.push(
        Reply(content="<think>图里好像是猫，我要描述</think>\n一只橘猫。", reasoning="秘密推理")
    )
    settings = Settings(
        data_dir=tmp_path / "data",
        vision_llm_base_url=openai_server.base_url,
        vision_llm_model="fake-vision",
    )
    core = await Yuji.open(settings, clock=FakeClock(NOW))
    try:
        exp = await image_message(core, "m1", CAT)
        assert (await core.vision.run_once()).described == 1
        (message,) = await core.archive.get_many("group:1", [exp])
        texts = await core.vision.texts([message])
    finally:
        await core.close()
    assert texts == {exp: "看[图片：一只橘猫]"}
    assert openai_server.requests[0].body["model"] == "fake-vision"
