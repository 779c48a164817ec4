"""Alerts as Telegram messages, sent by python-telegram-bot from a background task.

`fire`/`recover` only log the alert and put the message on a bounded queue; one
worker task sends it with a hard timeout and a few spaced retries. A down, slow or
refusing Telegram therefore costs the caller nothing: the alert is in the log either
way, and a message that cannot be delivered is logged as undelivered. The bot token
never reaches a log line from here.

Messages go as plain text (no `parse_mode`): a chat's name or an error holding HTML
or Markdown formats nothing and arrives as written, so nothing needs escaping.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import warnings
from datetime import timedelta

from telegram import Bot
from telegram.error import RetryAfter, TelegramError
from telegram.request import HTTPXRequest

from memory_core.settings import Settings

from .alerts import AlertSink, LogAlertSink
from .redact import Redactor, redact_loggers

log = logging.getLogger("yuji.alerts")

TELEGRAM_API = "https://api.telegram.org/bot"
MAX_TEXT = 4000
"""Telegram refuses messages over 4096 characters."""


def format_fire(key: str, text: str, label: str = "鱼记") -> str:
    return _clip(f"🔴 {label}告警 [{key}]\n{text}")


def format_recover(key: str, text: str, label: str = "鱼记") -> str:
    return _clip(f"🟢 {label}恢复 [{key}]\n{text}")


def bot_api_base(base_url: str) -> str:
    """The base PTB appends the token to: `…/bot` (a bare server URL gets `/bot`)."""
    if not base_url:
        return TELEGRAM_API
    if "{token}" in base_url or base_url.endswith("/bot"):
        return base_url
    return base_url.rstrip("/") + "/bot"


class TelegramAlertSink:
    def __init__(
        self,
        token: str,
        chat_id: str,
        *,
        base_url: str = "",
        timeout_s: float = 10.0,
        attempts: int = 3,
        retry_delay_s: float = 5.0,
        max_pending: int = 100,
    ) -> None:
        self._redact = Redactor([token])
        redact_loggers([token])  # httpx logs request URLs, and ours carry the token
        self._chat_id = chat_id
        self._timeout_s = timeout_s
        self._attempts = max(attempts, 1)
        self._retry_delay_s = retry_delay_s
        self._max_pending = max_pending
        self._requests = (
            HTTPXRequest(
                connection_pool_size=2,
                connect_timeout=timeout_s,
                read_timeout=timeout_s,
                write_timeout=timeout_s,
                pool_timeout=timeout_s,
            ),
            HTTPXRequest(connection_pool_size=1),
        )
        self._bot = Bot(
            token,
            base_url=bot_api_base(base_url),
            request=self._requests[0],
            get_updates_request=self._requests[1],
        )
        self._log = LogAlertSink()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[str] | None = None
        self._worker: asyncio.Task[None] | None = None
        self._closed = False
        self.sent = 0
        self.undelivered = 0

    # --- AlertSink -------------------------------------------------------------------

    def fire(self, key: str, text: str) -> None:
        self._log.fire(key, text)
        self._submit(format_fire(key, text))

    def recover(self, key: str, text: str) -> None:
        self._log.recover(key, text)
        self._submit(format_recover(key, text))

    # --- delivery --------------------------------------------------------------------

    def _submit(self, message: str) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # called from a worker thread
            loop = None
        if loop is None:
            owner = self._loop
            if owner is None or owner.is_closed():
                log.error("telegram alert not sent (no event loop): %s", message)
                return
            owner.call_soon_threadsafe(self._put, message)
            return
        if loop is not self._loop:
            self._loop, self._queue, self._worker = loop, None, None
        self._put(message)

    def _put(self, message: str) -> None:
        if self._closed:
            log.error("telegram alert not sent (sink closed): %s", message)
            return
        if self._queue is None:
            self._queue = asyncio.Queue(self._max_pending)
        try:
            self._queue.put_nowait(message)
        except asyncio.QueueFull:
            self.undelivered += 1
            log.error("telegram alert dropped (%d pending): %s", self._max_pending, message)
            return
        if self._worker is None or self._worker.done():
            self._worker = asyncio.get_running_loop().create_task(
                self._run(self._queue), name="yuji-telegram-alerts"
            )

    async def _run(self, queue: asyncio.Queue[str]) -> None:
        while True:
            message = await queue.get()
            try:
                await self._deliver(message)
            except Exception:  # never let the worker die
                log.exception("telegram alert worker error")
            finally:
                queue.task_done()

    async def _deliver(self, message: str) -> None:
        for attempt in range(1, self._attempts + 1):
            delay = self._retry_delay_s * 2 ** (attempt - 1)
            try:
                async with asyncio.timeout(self._timeout_s):
                    await self._bot.send_message(chat_id=self._chat_id, text=message)
            except RetryAfter as exc:
                delay = max(delay, _retry_after_s(exc))
                reason = "rate limited"
            except (TelegramError, TimeoutError, OSError) as exc:
                reason = self._redact(f"{type(exc).__name__}: {exc}")
            else:
                self.sent += 1
                return
            log.warning("telegram alert attempt %d/%d failed: %s", attempt, self._attempts, reason)
            if attempt < self._attempts:
                await asyncio.sleep(min(delay, 300.0))
        self.undelivered += 1
        log.error("telegram alert undelivered after %d attempts: %s", self._attempts, message)

    async def drain(self, timeout_s: float) -> bool:
        """Wait until every queued alert was sent or given up; False on timeout."""
        queue, worker = self._queue, self._worker
        if queue is None or worker is None or worker.done():
            return True
        try:
            async with asyncio.timeout(timeout_s):
                await queue.join()
        except TimeoutError:
            return False
        return True

    async def aclose(self, timeout_s: float = 5.0) -> None:
        self._closed = True
        if not await self.drain(timeout_s) and self._queue is not None:
            log.error("telegram alerts still pending at shutdown: %d", self._queue.qsize())
        worker = self._worker
        if worker is not None:
            worker.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await worker
        for request in self._requests:
            with contextlib.suppress(Exception):
                await request.shutdown()


def _retry_after_s(exc: RetryAfter) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        value = exc.retry_after
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


def _clip(text: str) -> str:
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def make_alert_sink(settings: Settings) -> AlertSink:
    """Telegram when a bot token and chat id are configured, else the log."""
    if settings.telegram_bot_token and settings.telegram_chat_id:
        return TelegramAlertSink(
            settings.telegram_bot_token,
            settings.telegram_chat_id,
            base_url=settings.telegram_base_url,
            timeout_s=settings.alert_timeout_s,
        )
    return LogAlertSink()
