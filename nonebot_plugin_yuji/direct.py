"""yuji's per-event checks, called by NoneBot without its dependency injection.

In someone else's bot NoneBot runs yuji's event preprocessor and the rule of each of
yuji's matchers for every event of the bot, a plain message of a busy group among them.
Declared the usual way, each of those calls solves its parameters by dependency
injection: a task group checking the parameters and another solving them, a task per
parameter, the rule's own task group and task around it. That machinery, not the check
(a few attribute reads), was most of what yuji added to each event on the stock OneBot
v11 adapter (docs/plugin.md has the profile).

- `DirectRule(check)`: a `Rule` NoneBot calls like any other, which awaits
  `check(bot, event, state)` and nothing else. `on_message(rule=DirectRule(check))`
  keeps it as it is (see `__rand__`).
- `direct_preprocessor(func)`: an event preprocessor awaited as `func(bot, event)`.

A check raises nothing of its own (what it reads is the event's); NoneBot still catches
and logs what one might raise, as for any rule or preprocessor.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any, cast

from nonebot.adapters import Bot, Event
from nonebot.dependencies import Dependent
from nonebot.message import _event_preprocessors  # pyright: ignore[reportPrivateUsage]
from nonebot.rule import Rule
from nonebot.typing import T_DependencyCache, T_State

Check = Callable[[Bot, Event, T_State], Awaitable[bool]]
Preprocess = Callable[[Bot, Event], Awaitable[None]]


class DirectRule(Rule):
    """A rule of one check, awaited directly (no parameters to solve, no tasks)."""

    __slots__ = ("check",)

    def __init__(self, check: Check) -> None:
        super().__init__()
        self.check = check

    def __repr__(self) -> str:
        return f"DirectRule({getattr(self.check, '__name__', self.check)!r})"

    async def __call__(
        self,
        bot: Bot,
        event: Event,
        state: T_State,
        stack: AsyncExitStack | None = None,
        dependency_cache: T_DependencyCache | None = None,
    ) -> bool:
        del stack, dependency_cache  # what NoneBot passes every rule; a check needs neither
        return await self.check(bot, event, state)

    def __rand__(self, other: object) -> Rule:
        """`on_message(rule=...)` builds `Rule() & rule`; Python asks a subclass's
        reflected operator first, so the empty rule's `__and__` (which would keep only
        the checkers, here none: a rule that always passes) is never reached."""
        return self._alone(other)

    def __and__(self, other: object) -> Rule:
        return self._alone(other)

    def _alone(self, other: object) -> Rule:
        if other is None or (isinstance(other, Rule) and not other.checkers):
            return self
        raise TypeError(f"{self!r} does not combine with other rules")


class _DirectDependent(Dependent[None]):
    async def __call__(self, **kwargs: Any) -> None:
        call = cast(Preprocess, self.call)
        await call(kwargs["bot"], kwargs["event"])


def direct_preprocessor(func: Preprocess) -> Preprocess:
    """`nonebot.message.event_preprocessor`, awaited as `func(bot, event)`."""
    _event_preprocessors.add(_DirectDependent(call=func))
    return func
