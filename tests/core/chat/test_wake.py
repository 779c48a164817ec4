from __future__ import annotations

from datetime import UTC, datetime, timedelta

from memory_core.chat.wake import WakeSignals, decide_wake, is_muted, wake_reason

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
NICKS = ("大肥鱼", "Fishy")


def group(text: str = "", **kw: object) -> WakeSignals:
    return WakeSignals(is_private=False, text=text, self_id="10000", **kw)  # type: ignore[arg-type]


def test_plain_group_chatter_does_not_wake() -> None:
    assert wake_reason(group("今天吃什么"), NICKS) is None
    assert (
        decide_wake(group("今天吃什么"), nicknames=NICKS, muted_until=None, now=NOW).woken is False
    )


def test_at_bot_wakes_but_at_someone_else_does_not() -> None:
    assert wake_reason(group("在吗", mentioned_ids=("10000",)), NICKS) == "mention"
    assert wake_reason(group("在吗", mentioned_ids=("20000",)), NICKS) is None


def test_reply_to_a_bot_message_wakes() -> None:
    assert wake_reason(group("真的吗", reply_to_bot=True), NICKS) == "reply"


def test_nickname_anywhere_in_the_text_wakes_case_insensitively() -> None:
    assert wake_reason(group("我觉得大肥鱼说得对"), NICKS) == "nickname"
    assert wake_reason(group("hey FISHY what's up"), NICKS) == "nickname"
    assert wake_reason(group("大肥"), NICKS) is None


def test_blank_nicknames_never_match_everything() -> None:
    assert wake_reason(group("随便说说"), ("", "  ")) is None


def test_every_private_message_wakes() -> None:
    signals = WakeSignals(is_private=True, text="hi", self_id="10000")
    assert decide_wake(signals, nicknames=(), muted_until=None, now=NOW).reason == "private"


def test_muted_chat_is_not_woken_until_the_mute_ends() -> None:
    signals = group("大肥鱼在吗")
    until = NOW + timedelta(minutes=30)
    muted = decide_wake(signals, nicknames=NICKS, muted_until=until, now=NOW)
    assert (muted.woken, muted.muted, muted.reason) == (False, True, "nickname")
    later = decide_wake(signals, nicknames=NICKS, muted_until=until, now=until)
    assert later.woken is True


def test_is_muted_boundaries() -> None:
    assert is_muted(None, NOW) is False
    assert is_muted(NOW - timedelta(seconds=1), NOW) is False
    assert is_muted(NOW + timedelta(seconds=1), NOW) is True
