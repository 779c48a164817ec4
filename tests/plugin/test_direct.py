"""`DirectRule` and `direct_preprocessor`: yuji's per-event checks without NoneBot's
dependency injection, still taken by `on_message` and NoneBot's event handling."""

from __future__ import annotations

from typing import Any, cast

import pytest
from nonebot.adapters import Bot, Event
from nonebot.message import _event_preprocessors  # pyright: ignore[reportPrivateUsage]
from nonebot.rule import Rule
from nonebot.typing import T_State

from nonebot_plugin_yuji import chat, ingest, ops_notices
from nonebot_plugin_yuji.commands import _common
from nonebot_plugin_yuji.direct import DirectRule


async def test_a_direct_rule_awaits_its_check_with_what_nonebot_passes() -> None:
    seen: list[tuple[Any, Any, Any]] = []

    async def check(bot: Bot, event: Event, state: T_State) -> bool:
        seen.append((bot, event, state))
        return state.get("yes", False)

    rule = DirectRule(check)
    bot, event = cast(Bot, object()), cast(Event, object())
    assert await rule(bot, event, {"yes": True}, None, {}) is True
    assert await rule(bot, event, {}, None, {}) is False
    assert seen == [(bot, event, {"yes": True}), (bot, event, {})]


async def _never(_bot: Bot, _event: Event, _state: T_State) -> bool:
    return False


def test_on_message_keeps_a_direct_rule_and_it_combines_with_nothing() -> None:
    rule = DirectRule(_never)
    assert (Rule() & rule) is rule  # what on_message builds
    assert (rule & None) is rule
    with pytest.raises(TypeError):
        _ = Rule(_never) & rule
    with pytest.raises(TypeError):
        _ = rule & Rule(_never)


def test_yujis_matchers_and_preprocessor_are_direct() -> None:
    for matcher in (chat.chat, _common.commands, ops_notices.bot_offline, ops_notices.heartbeat):
        assert isinstance(matcher.rule, DirectRule), matcher
        assert not matcher.rule.checkers  # nothing for NoneBot to solve
    [archiving] = [p for p in _event_preprocessors if p.call is ingest._archive_parsed]  # pyright: ignore[reportPrivateUsage]
    assert not archiving.params
