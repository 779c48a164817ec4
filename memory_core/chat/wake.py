"""When the persona speaks: the wake rules (docs/design.md#replies), as one pure function.

Woken by an @ of the bot, a reply to one of the bot's messages, one of its
nicknames anywhere in the text, or any private message; never while the chat is
muted (muted chats are still archived and consolidated, just not answered).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

WakeReason = Literal["private", "mention", "reply", "nickname"]
MUTE_FOREVER = datetime(9999, 1, 1, tzinfo=UTC)
"""`/mute` without a duration: until `/unmute`."""


@dataclass(frozen=True, slots=True)
class WakeSignals:
    """What the plugin read off one incoming message."""

    is_private: bool
    text: str
    """Plain text of the message (without the @ and reply segments)."""
    self_id: str
    mentioned_ids: tuple[str, ...] = ()
    """QQ ids of every `at` segment, in order."""
    reply_to_bot: bool = False
    """The message quotes a message the bot sent."""


@dataclass(frozen=True, slots=True)
class WakeDecision:
    woken: bool
    reason: WakeReason | None = None
    muted: bool = False
    """Would have woken, but the chat is muted."""


def is_muted(muted_until: datetime | None, now: datetime) -> bool:
    return muted_until is not None and muted_until > now


def wake_reason(signals: WakeSignals, nicknames: Sequence[str]) -> WakeReason | None:
    if signals.is_private:
        return "private"
    if signals.self_id and signals.self_id in signals.mentioned_ids:
        return "mention"
    if signals.reply_to_bot:
        return "reply"
    folded = signals.text.casefold()
    if any(name.strip() and name.strip().casefold() in folded for name in nicknames):
        return "nickname"
    return None


def decide_wake(
    signals: WakeSignals,
    *,
    nicknames: Sequence[str],
    muted_until: datetime | None,
    now: datetime,
) -> WakeDecision:
    reason = wake_reason(signals, nicknames)
    if reason is None:
        return WakeDecision(woken=False)
    if is_muted(muted_until, now):
        return WakeDecision(woken=False, reason=reason, muted=True)
    return WakeDecision(woken=True, reason=reason)
