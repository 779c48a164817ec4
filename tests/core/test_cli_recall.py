"""`yuji recall`: a chat the store never heard of is refused (exit 2), a known one is
answered, and the trace people read is Chinese while `--json` keeps recall's own
lines (memory_core/cli/recall.py, recall_trace.py)."""

from __future__ import annotations

import asyncio
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest

from memory_core import NewExperience, Settings, Yuji
from memory_core.cli import main
from memory_core.cli.recall_trace import trace_words
from memory_core.types import EvidenceRef

KNOWN, QUIET, UNKNOWN = "group:1", "group:3", "group:2"


async def make_store(folder: Path) -> None:
    """group:1 has a message and a memory resting on it; group:3 only messages."""
    core = await Yuji.open(Settings(data_dir=folder))
    try:
        said = datetime(2026, 11, 14, 10, tzinfo=UTC)
        exp = await core.archive.append(
            NewExperience(
                scope=KNOWN, fingerprint="1", sender_id="7", text="我九月开始学吉他", sent_at=said
            )
        )
        await core.archive.append(
            NewExperience(scope=QUIET, fingerprint="2", sender_id="8", text="早", sent_at=said)
        )
        await core.memories.write(
            KNOWN,
            type="fact",
            subject="小明",
            content="小明从九月开始学吉他",
            evidence=[EvidenceRef(experience_id=exp)],
        )
    finally:
        await core.close()


@pytest.fixture
def store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)  # no stray .env
    monkeypatch.delenv("YUJI_DATABASE_URL", raising=False)
    monkeypatch.setenv("YUJI_DATA_DIR", str(tmp_path / "data"))
    asyncio.run(make_store(tmp_path / "data"))
    return tmp_path / "data"


def test_a_chat_the_store_never_heard_of_is_refused(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["recall", "小明学什么", "--scope", UNKNOWN]) == 2
    got = capsys.readouterr()
    assert got.out == ""
    [line] = got.err.strip().splitlines()
    assert line.startswith(f"yuji recall: 没有聊天 {UNKNOWN}：")
    assert f"已知的聊天：{KNOWN}、{QUIET}" in line
    assert "yuji status" in line
    assert main(["recall", "小明学什么", "--scope", UNKNOWN, "--json"]) == 2
    assert capsys.readouterr().out == ""


def test_a_known_chat_is_answered_in_chinese(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["recall", "小明从九月开始学吉他吗", "--scope", KNOWN]) == 0
    out = capsys.readouterr().out
    assert out.startswith("#1〔")
    assert "小明从九月开始学吉他" in out
    assert "P=" in out
    assert any(band in out for band in ("，确定〕", "，相关〕"))

    # A chat with messages but no memory is known too: an empty answer and its trace.
    assert main(["recall", "小明学什么乐器", "--scope", QUIET]) == 0
    out = capsys.readouterr().out
    assert out.startswith("（没有可注入的记忆）\n")
    assert "  · 词：" in out
    assert "  · 选中 0 条，用时 " in out
    assert "terms:" not in out
    assert "chosen in" not in out


@pytest.mark.parametrize("mode", ["on", "shadow"])
@pytest.mark.parametrize(
    "question", ["小明学什么乐器", "早上好", "上周六他以前学过什么", "what does he play"]
)
def test_every_line_of_a_real_trace_is_said_in_chinese(
    store: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    question: str,
    mode: str,
) -> None:
    """The guard against recall's trace changing its words: every line recall writes
    for these questions has a Chinese form, and `--json` keeps the English one."""
    monkeypatch.setenv("YUJI_VECTOR_MODE", mode)
    assert main(["recall", question, "--scope", KNOWN, "--json"]) == 0
    trace: list[str] = json.loads(capsys.readouterr().out)["trace"]
    assert trace[0].startswith("terms: ")
    assert trace[-1].endswith(" ms")
    assert (mode == "shadow") == any("(shadow)" in line for line in trace)
    untranslated = [line for line in trace if trace_words(line) == line]
    assert untranslated == []


@pytest.mark.parametrize(
    ("line", "said"),
    [
        (
            "terms: 乐器 明学; members: 小明; asks: which; about the past; question, depth 0.60"
            "; context: 3 turns; refers to 小明/老周",
            "词：乐器 明学；点名：小明；问的是：哪个；问的是从前；问句，深度 0.60；带上下文 3 句；"
            "指的是 小明/老周",
        ),
        (
            "terms: -; members: -; asks: -; statement, depth 0.50",
            "词：-；点名：-；问的是：-；陈述句，深度 0.50",
        ),
        (
            "candidates: words 3, context words 1, dense 12",
            "候选：字词 3，上下文字词 1，意思 12",
        ),
        (
            "names a day: 上周六 -> 2 dated, 1 candidates on it",
            "说到一天：上周六 → 记在那天的 2 条，候选里在那天的 1 条",
        ),
        (
            "dense: no vectors of api-bge-m3 yet (being built): words only",
            "api-bge-m3 的向量还没建好，只用字词",
        ),
        (
            "dense: the question's embedding took over 0.3s: words only",
            "问题的向量超过 0.3s 还没算出，只用字词",
        ),
        (
            "dense: the embeddings API failed (LLMTimeout): words only",
            "嵌入 API 失败（LLMTimeout），只用字词",
        ),
        (
            "reranker api-r: 2 candidates in 31 ms",
            "重排模型 api-r：2 条候选，用时 31 ms",
        ),
        (
            "reranker failed (TimeoutError: ): bands without it",
            "重排模型失败（TimeoutError: ）：档位不经重排",
        ),
        (
            "the wake asks about nothing: chatter, nothing injected",
            "这句什么也没问：寒暄，不注入",
        ),
        ("recent messages quoted: [812, 813]", "引用的最近消息：[812, 813]"),
        (
            "judge: bands ['sure', 'related'] -> ['related', 'related']",
            "模型判档：[确定, 相关] → [相关, 相关]",
        ),
        ("dense (shadow) would inject: [4, 9]", "意思（影子模式）本会注入：[4, 9]"),
        ("0 chosen in 87.7 ms", "选中 0 条，用时 87.7 ms"),
        ("something recall says one day", "something recall says one day"),
    ],
)
def test_each_shape_of_trace_line(line: str, said: str) -> None:
    assert trace_words(line) == said
