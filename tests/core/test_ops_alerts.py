"""Alerts: deduplication and recovery (AlertGate), and the Telegram sink end to end
against a fake Bot API server on loopback."""

from __future__ import annotations

import asyncio
import logging
from datetime import timedelta
from pathlib import Path

import pytest

from memory_core import FakeClock, Settings, Yuji
from memory_core.ops.alerts import AlertGate, LogAlertSink, RecordingAlertSink
from memory_core.ops.telegram import (
    TELEGRAM_API,
    TelegramAlertSink,
    bot_api_base,
    format_fire,
    format_recover,
)
from memory_core.storage import migrate
from memory_core.storage.engine import Database
from memory_core.storage.ops.alert_repo import AlertRepo
from tests.fakes.telegram_server import (
    TOKEN,
    FakeTelegramServer,
    closed_port,
    parse_params,
    telegram_server,
)

__all__ = ["telegram_server"]

HOUR = 3600


def gate(clock: FakeClock, sink: object | None = None) -> tuple[AlertGate, RecordingAlertSink]:
    recording = RecordingAlertSink()
    return AlertGate(sink or recording, clock, HOUR), recording  # type: ignore[arg-type]


# --- AlertGate -----------------------------------------------------------------------------


def test_same_key_reaches_the_sink_once_per_window(clock: FakeClock) -> None:
    alerts, sink = gate(clock)
    alerts.fire("backup", "first")
    clock.advance(timedelta(minutes=30))
    alerts.fire("backup", "second")
    alerts.fire("capacity", "other key")
    clock.advance(timedelta(minutes=29, seconds=59))
    alerts.fire("backup", "third")
    assert sink.fired == [("backup", "first"), ("capacity", "other key")]

    clock.advance(timedelta(seconds=1))
    alerts.fire("backup", "an hour later")
    assert sink.fired[-1] == ("backup", "an hour later\n（上次提醒后又发生 2 次）")
    assert alerts.failing == ("backup", "capacity")


def test_recovery_only_follows_a_failure_the_sink_saw(clock: FakeClock) -> None:
    alerts, sink = gate(clock)
    alerts.recover("backup", "fine")  # never failed: nothing to say
    alerts.fire("backup", "broken")
    alerts.recover("backup", "fixed")
    alerts.recover("backup", "still fine")
    assert sink.recovered == [("backup", "fixed")]
    assert alerts.failing == ()


def test_a_failure_held_back_by_dedup_gets_no_recovery_message(clock: FakeClock) -> None:
    alerts, sink = gate(clock)
    alerts.fire("k", "down")
    alerts.recover("k", "up")
    alerts.fire("k", "down again within the hour")  # held back
    alerts.recover("k", "up again")  # the sink never heard of this failure
    assert sink.fired == [("k", "down")]
    assert sink.recovered == [("k", "up")]


def test_a_throwing_sink_never_reaches_the_caller(clock: FakeClock) -> None:
    class Broken:
        def fire(self, key: str, text: str) -> None:
            raise RuntimeError("sink down")

        def recover(self, key: str, text: str) -> None:
            raise RuntimeError("sink down")

    alerts = AlertGate(Broken(), clock, HOUR)
    alerts.fire("k", "x")
    alerts.recover("k", "y")
    assert alerts.failing == ()


async def test_sent_alerts_are_in_the_log_across_a_restart(
    tmp_path: Path, clock: FakeClock
) -> None:
    settings = Settings(data_dir=tmp_path / "data")
    core = await Yuji.open(settings, clock=clock, alert_sink=RecordingAlertSink())
    core.alerts.fire("backup", "备份失败")
    clock.advance(timedelta(minutes=5))
    core.alerts.fire("backup", "又失败了")  # held back by dedup: the operator was not told
    clock.advance(timedelta(minutes=5))
    core.alerts.recover("backup", "备份恢复")
    await core.close()

    again = await Yuji.open(settings, clock=clock, alert_sink=RecordingAlertSink())
    try:
        week = await again.alerts.history(clock.now() - timedelta(days=7))
        assert [(a.key, a.text, a.recovered) for a in week] == [
            ("backup", "备份恢复", True),
            ("backup", "备份失败", False),
        ]
        clock.advance(timedelta(days=8))
        assert await again.alerts.history(clock.now() - timedelta(days=7)) == []
        assert len(await again.alerts.history(clock.now() - timedelta(days=9))) == 2
        clock.advance(timedelta(days=30))  # the next write prunes rows past 30 days
        again.alerts.fire("capacity", "磁盘快满了")
        everything = await again.alerts.history(clock.now() - timedelta(days=365))
        assert [a.key for a in everything] == ["capacity"]
    finally:
        await again.close()


async def test_an_alert_the_log_cannot_take_is_kept_and_written_later(
    tmp_path: Path, clock: FakeClock
) -> None:
    db = Database(f"sqlite+aiosqlite:///{tmp_path / 'a.db'}")  # no tables yet
    alerts = AlertGate(RecordingAlertSink(), clock, HOUR, log=AlertRepo(db))
    try:
        alerts.fire("storage_full", "磁盘满了")
        await alerts.save()  # fails: no alert_log table; the alert stays in memory
        since = clock.now() - timedelta(days=1)
        assert [a.key for a in await alerts.history(since)] == ["storage_full"]
        await migrate.upgrade(db)
        alerts.recover("storage_full", "可以写了")
        await alerts.save()
        assert [a.key for a in await AlertRepo(db).since(since, 10)] == [
            "storage_full",
            "storage_full",
        ]
        assert [a.recovered for a in await alerts.history(since)] == [True, False]
    finally:
        await alerts.aclose()
        await db.dispose()


async def test_core_alerts_default_to_the_log_and_take_an_injected_sink(
    tmp_path: Path, clock: FakeClock
) -> None:
    plain = await Yuji.open(Settings(data_dir=tmp_path / "a"), clock=clock)
    recording = RecordingAlertSink()
    injected = await Yuji.open(Settings(data_dir=tmp_path / "b"), clock=clock, alert_sink=recording)
    telegram = await Yuji.open(
        Settings(data_dir=tmp_path / "c", telegram_bot_token=TOKEN, telegram_chat_id="1"),
        clock=clock,
    )
    try:
        assert isinstance(plain.alerts.sink, LogAlertSink)
        assert isinstance(telegram.alerts.sink, TelegramAlertSink)
        injected.alerts.fire("nightly", "circuit open")
        injected.alerts.fire("nightly", "circuit open")
        assert recording.fired == [("nightly", "circuit open")]
    finally:
        for core in (plain, injected, telegram):
            await core.close()


# --- formatting -------------------------------------------------------------------------


def test_messages_name_the_key_and_fit_telegram() -> None:
    assert format_fire("backup", "磁盘满了") == "🔴 鱼记告警 [backup]\n磁盘满了"
    assert format_recover("backup", "好了").startswith("🟢 鱼记恢复 [backup]")
    assert len(format_fire("k", "x" * 10_000)) == 4000


def test_base_url_accepts_a_bare_self_hosted_server() -> None:
    assert bot_api_base("") == TELEGRAM_API  # empty = Telegram's own server
    assert TELEGRAM_API.endswith("/bot")
    assert bot_api_base("http://127.0.0.1:8081") == "http://127.0.0.1:8081/bot"
    assert bot_api_base("http://127.0.0.1:8081/bot") == "http://127.0.0.1:8081/bot"
    assert bot_api_base("http://h/custom/{token}/x") == "http://h/custom/{token}/x"


def test_fake_server_parses_every_bot_api_encoding() -> None:
    assert parse_params("application/x-www-form-urlencoded", b"chat_id=1&text=a%26b") == {
        "chat_id": "1",
        "text": "a&b",
    }
    assert parse_params(
        "application/json",
        b'{"chat_id": 1, "text": "\xe5\xa5\xbd"}'.replace(b"\xe5\xa5\xbd", "好".encode()),
    ) == {"chat_id": "1", "text": "好"}
    multipart = (
        b'--XX\r\nContent-Disposition: form-data; name="chat_id"\r\n\r\n7\r\n'
        b'--XX\r\nContent-Disposition: form-data; name="text"\r\n\r\nhi\r\n--XX--\r\n'
    )
    assert parse_params("multipart/form-data; boundary=XX", multipart) == {
        "chat_id": "7",
        "text": "hi",
    }


# --- Telegram end to end ------------------------------------------------------------------


def telegram(server_url: str, **kwargs: float) -> TelegramAlertSink:
    options: dict[str, float] = {"retry_delay_s": 0.0, **kwargs}
    return TelegramAlertSink(TOKEN, "4242", base_url=server_url, **options)  # type: ignore[arg-type]


async def test_one_telegram_message_per_key_per_hour_then_a_recovery(
    telegram_server: FakeTelegramServer, clock: FakeClock
) -> None:
    sink = telegram(telegram_server.base_url)
    alerts = AlertGate(sink, clock, HOUR)
    for _ in range(5):
        alerts.fire("backup", "备份没通过检查")
        clock.advance(timedelta(minutes=10))
    assert await sink.drain(10)
    assert [m.text for m in telegram_server.messages] == ["🔴 鱼记告警 [backup]\n备份没通过检查"]

    clock.advance(timedelta(minutes=11))  # 61 minutes after the first message
    alerts.fire("backup", "还是不行")
    alerts.recover("backup", "备份恢复正常")
    alerts.recover("backup", "备份恢复正常")
    await sink.aclose(10)

    messages = telegram_server.messages
    assert [m.chat_id for m in messages] == ["4242"] * 3
    assert messages[1].text.startswith("🔴 鱼记告警 [backup]\n还是不行")
    assert "又发生 4 次" in messages[1].text
    assert messages[2].text == "🟢 鱼记恢复 [backup]\n备份恢复正常"
    # python-telegram-bot posts the parameters form-encoded; the fake parsed them.
    assert {r.content_type for r in telegram_server.requests} == {
        "application/x-www-form-urlencoded"
    }
    assert sink.sent == 3


async def test_markup_in_an_alert_reaches_telegram_as_plain_text(
    telegram_server: FakeTelegramServer, clock: FakeClock
) -> None:
    """No parse_mode: a chat's name in an alert (whoever named the group wrote it), in
    HTML or Markdown, formats nothing and needs no escaping; it arrives as written."""
    name = (
        '<b>粗</b><a href="tg://user?id=1">@管理员</a> *粗* _斜_ __下划__ ~删~ ||剧透|| '
        "`代码` [点我](https://evil.example) &amp; \\*"
    )
    sink = telegram(telegram_server.base_url)
    AlertGate(sink, clock, HOUR).fire("nightly:group:5", f"夜间整理 {name} 连续失败")
    await sink.aclose(10)
    [sent] = [r.params for r in telegram_server.requests if r.method == "sendMessage"]
    assert sent["text"] == f"🔴 鱼记告警 [nightly:group:5]\n夜间整理 {name} 连续失败"
    assert sorted(sent) == ["chat_id", "text"]  # no parse_mode, no entities


async def test_telegram_down_costs_the_caller_nothing(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="yuji.alerts")
    sink = telegram(f"http://127.0.0.1:{closed_port()}/bot", attempts=2)
    sink.fire("capacity", "磁盘快满了")  # returns at once: only logs and queues
    assert sink.sent == 0
    assert await sink.drain(20)
    assert sink.undelivered == 1
    await sink.aclose(1)
    text = caplog.text
    assert "ALERT [capacity] 磁盘快满了" in text  # the alert is in the log regardless
    assert "undelivered after 2 attempts" in text
    assert TOKEN not in text
    assert TOKEN.split(":")[1] not in text


async def test_a_slow_telegram_never_blocks_the_event_loop(
    telegram_server: FakeTelegramServer,
) -> None:
    # A send that held the loop would do so until its timeout: fire() would take that
    # long, or so would one of the short sleeps below while the request hangs.
    timeout_s = 1.5
    sink = telegram(telegram_server.base_url, timeout_s=timeout_s, attempts=1)
    telegram_server.hold()
    loop = asyncio.get_running_loop()
    started = loop.time()
    sink.fire("watchdog", "batch killed")
    assert loop.time() - started < timeout_s / 2
    deadline = loop.time() + 10
    while not telegram_server.requests:  # the send is under way, and hangs
        assert loop.time() < deadline, "the send never reached Telegram"
        await asyncio.sleep(0.01)
    gaps: list[float] = []
    for _ in range(20):
        before = loop.time()
        await asyncio.sleep(0.01)
        gaps.append(loop.time() - before)
    assert max(gaps) < timeout_s / 2
    assert sink.sent == 0
    assert await sink.drain(10)  # the hard timeout gave up on it
    assert sink.undelivered == 1

    telegram_server.release()
    sink.fire("watchdog", "batch killed again")  # Telegram back: delivery heals
    assert await sink.drain(10)
    await sink.aclose(1)
    assert sink.sent == 1


async def test_a_bot_api_error_is_retried(telegram_server: FakeTelegramServer) -> None:
    sink = telegram(telegram_server.base_url, attempts=3)
    telegram_server.fail_next(502, "Bad Gateway")
    telegram_server.fail_next(429, "Too Many Requests: retry after 0")
    sink.fire("k", "x")
    await sink.aclose(10)
    assert sink.sent == 1
    assert len(telegram_server.requests) == 3


async def test_alerts_from_a_worker_thread_are_delivered(
    telegram_server: FakeTelegramServer,
) -> None:
    sink = telegram(telegram_server.base_url)
    sink.fire("a", "from the loop")  # binds the loop
    await asyncio.to_thread(sink.fire, "b", "from a thread")
    await asyncio.sleep(0)
    assert await sink.drain(10)
    await sink.aclose(1)
    assert sorted(m.text.split("\n")[1] for m in telegram_server.messages) == [
        "from a thread",
        "from the loop",
    ]


async def test_a_wrong_token_is_undelivered_and_never_logged(
    telegram_server: FakeTelegramServer, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    sink = TelegramAlertSink(
        "999:wrong-token-value", "1", base_url=telegram_server.base_url, retry_delay_s=0
    )
    sink.fire("k", "x")
    await sink.aclose(10)
    assert sink.undelivered == 1
    assert telegram_server.messages == []
    assert "wrong-token-value" not in caplog.text


def test_make_sink_without_a_running_loop_logs_instead(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.INFO, logger="yuji.alerts")
    sink = TelegramAlertSink(TOKEN, "1", base_url=f"http://127.0.0.1:{closed_port()}/bot")
    sink.fire("k", "no loop here")
    assert "not sent (no event loop)" in caplog.text
    assert sink.sent == 0
