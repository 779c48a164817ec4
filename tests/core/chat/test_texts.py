from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest

from memory_core.chat.texts import (
    NotPermitted,
    ScopeStatus,
    UsageError,
    WhyItem,
    backfill_text,
    cards_text,
    error_text,
    forget_text,
    mute_text,
    parse_memory_id,
    recall_text,
    remember_text,
    status_text,
    unmute_text,
    why_text,
)
from memory_core.chat.wake import MUTE_FOREVER
from memory_core.errors import (
    EvidenceRequired,
    LLMTimeout,
    NotFound,
    ScopeViolation,
    StorageError,
    ValidationError,
)
from memory_core.recall import RELATED_LABEL
from memory_core.recall.features import FEATURES, MONOTONE
from memory_core.recall.relevance import RERANK
from memory_core.recall.why import ABSENT_WORDS, FEATURE_WORDS, why_words
from memory_core.types import Memory, Recalled

ZONE = ZoneInfo("Asia/Shanghai")
NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)  # 20:00 in Shanghai


def memory(memory_id: int, content: str, status: str = "active") -> Memory:
    return Memory(
        id=memory_id,
        scope="group:1",
        type="fact",
        subject="group",
        content=content,
        importance=0.5,
        confidence=0.8,
        status=status,  # type: ignore[arg-type]
        valid_from=NOW,
        valid_to=None,
        version=1,
        origin="admin",
        created_at=NOW,
        updated_at=NOW,
        last_accessed_at=None,
        hit_count=0,
        pinned=False,
        starred=False,
    )


@pytest.mark.parametrize(
    ("exc", "line"),
    [
        (UsageError("用法：/forget <编号>"), "用法：/forget <编号>"),
        (NotPermitted("只有群主、管理员能用这个命令。"), "只有群主、管理员能用这个命令。"),
        (NotFound("memory 9 not in group:2"), "找不到这条记忆（只能查这个聊天里的）。"),
        (ScopeViolation("x"), "找不到这条记忆（只能查这个聊天里的）。"),
        (EvidenceRequired("x"), "这条没有出处，不能记。"),
        (ValidationError("internal detail"), "这样不行，参数不对。"),
        (LLMTimeout("x"), "模型这会儿连不上，稍后再试。"),
        (StorageError("locked"), "数据库忙不过来，稍后再试。"),
        (RuntimeError("Traceback ..."), "出了点问题，没办成，稍后再试。"),
    ],
)
def test_every_error_is_one_chinese_line_without_internals(exc: BaseException, line: str) -> None:
    assert error_text(exc) == line
    assert "\n" not in error_text(exc)


def test_another_chats_id_reads_exactly_like_an_unknown_id() -> None:
    assert error_text(ScopeViolation("group:2")) == error_text(NotFound("no such id"))


@pytest.mark.parametrize(("raw", "expected"), [("12", 12), ("#12", 12), (" ＃7 ", 7)])
def test_memory_ids(raw: str, expected: int) -> None:
    assert parse_memory_id(raw) == expected


@pytest.mark.parametrize("raw", ["", "abc", "-1", "0", "1.5", "99999999999999999999"])
def test_bad_memory_ids(raw: str) -> None:
    with pytest.raises(UsageError):
        parse_memory_id(raw)


def test_mute_texts() -> None:
    assert mute_text(NOW + timedelta(hours=2), NOW, ZONE) == (
        "好，我安静 2小时（到 11-20 22:00）。消息照常记着。"
    )
    assert "/unmute" in mute_text(None, NOW, ZONE)
    assert unmute_text(True) == "我回来啦。"
    assert unmute_text(False) == "我本来就在呀。"


def test_remember_text_shows_id_and_near_duplicate_hint() -> None:
    assert remember_text(memory(12, "阿明爱吃辣"), None, 0.0) == "记住了（#12）：阿明爱吃辣"
    hinted = remember_text(memory(12, "阿明很爱吃辣"), memory(7, "阿明爱吃辣"), 0.91)
    assert hinted.splitlines() == [
        "记住了（#12）：阿明很爱吃辣",
        "和 #7 很像（相似度 0.91）：阿明爱吃辣",
        "要是重复了，用 /forget 12 去掉新的这条。",
    ]


def test_forget_text() -> None:
    assert forget_text(memory(3, "x" * 100, "retracted")).startswith("好，#3 以后不会再想起了")


def test_recall_text_shows_p_guess_and_what_mattered() -> None:
    items = [
        Recalled(
            memory(3, "撤离率 20%"),
            "lexical",
            0.8234,
            "相关度 0.82：字面命中",
            why=(("cover", 2.0), ("names_other", -0.0), ("names_subject", 0.7)),
        ),
        Recalled(
            memory(5, "阿明养猫"),
            "vector",
            0.55,
            f"{RELATED_LABEL}（相关度 0.55：语义相近）",
            band="related",
            why=(("dense", 1.2), ("names_other", -1.25)),
        ),
    ]
    assert recall_text(items).splitlines() == [
        "这句话我会想起：",
        "#3〔字面命中 P=0.82，确定〕撤离率 20%",
        "　因为：问到的词它都说到了 +2.0、说的正是问到的人 +0.7",
        "#5〔语义相近 P=0.55，相关〕阿明养猫",
        "　因为：说的是别人 -1.2、语义相近 +1.2",
    ]
    assert recall_text([]) == "这句话我想不起任何记忆。"


def test_every_relevance_feature_has_chinese_words() -> None:
    assert set(FEATURE_WORDS) == {*FEATURES, RERANK}
    assert why_words([("cover", 0.01)]) == ""  # moved nothing worth naming


def test_a_lack_that_raised_p_is_named_for_what_the_memory_has() -> None:
    # Measured against an unrelated memory (which lacks the answer), one that gives
    # it raises P through `kind_missing`: it is said as given, not as missing.
    assert why_words([("kind_missing", 1.0), ("names_other", -2.8)]) == (
        "说的是别人 -2.8、给出了问的那类答案 +1.0"
    )
    assert why_words([("unsaid", -0.8)]) == "问到的词漏了几个 -0.8"
    assert set(ABSENT_WORDS) <= {n for n, sign in MONOTONE.items() if sign < 0} | {"short"}


def test_why_text() -> None:
    at = NOW - timedelta(minutes=5)
    items = [
        WhyItem(3, "lexical", 0.8, "相关度 0.80：字面命中", True, "撤离率 20%"),
        WhyItem(4, "graph", 0.3, "与#3相关", False, None),
        WhyItem(
            6,
            "vector",
            0.52,
            f"{RELATED_LABEL}（相关度 0.52：语义相近）（很久没用到的旧记忆）",
            False,
            "阿明养猫",
        ),
    ]
    assert why_text(items, at, ZONE, NOW).splitlines() == [
        "上次回话（11-20 19:55）想起了这些：",
        "#3〔字面命中 P=0.80，确定，用上了〕撤离率 20%",
        "　因为：相关度 0.80：字面命中",
        "#4〔关联记忆 P=0.30，确定〕（读不到了）",
        "　因为：与#3相关",
        "#6〔语义相近 P=0.52，相关〕阿明养猫",
        "　因为：相关度 0.52：语义相近（很久没用到的旧记忆）",
    ]
    assert why_text([], at, ZONE, NOW) == "上次回话（11-20 19:55）没有用到任何记忆。"
    assert why_text(None, None, ZONE, NOW) == "我在这里还没回过话。"


def test_cards_text() -> None:
    assert cards_text([]) == "还没有记忆卡片，每晚整理过后才会有。"
    assert cards_text([("preferences", "爱吃辣"), ("goals", " ")]) == "【偏好】爱吃辣"


def test_status_text() -> None:
    status = ScopeStatus(
        scope="group:1",
        pending=17,
        last_batch_state="done",
        last_batch_at=NOW - timedelta(hours=1),
        muted_until=MUTE_FOREVER,
        last_reply_at=None,
        extra={"昨晚整理": "5/5 步完成"},
    )
    assert status_text(status, ZONE, NOW).splitlines() == [
        "待整理消息：17 条",
        "上一批整理：完成（11-20 19:00）",
        "静音：是，直到 /unmute",
        "上次回话：还没有",
        "昨晚整理：5/5 步完成",
    ]
    quiet = ScopeStatus(scope="group:1", pending=0, muted_until=NOW - timedelta(seconds=1))
    assert "静音：否" in status_text(quiet, ZONE, NOW)
    assert "上一批整理：还没有" in status_text(quiet, ZONE, NOW)


def test_backfill_text() -> None:
    assert backfill_text(20, 5, 15, None) == "补拉了 20 条历史消息：新存 5 条，已有 15 条。"
    assert backfill_text(0, 0, 0, "unsupported") == "拉取历史消息失败了，客户端可能不支持。"
    assert backfill_text(3, 3, 0, "timeout").endswith("（中途出错，只拉到这些）")
