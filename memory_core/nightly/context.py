"""What every step gets: the day it works on, the services, and resumable model asks.

A step that asked the model stores the validated reply in its checkpoint before it
applies anything, and records each item it applied. If the process dies half-way
(the checkpoint is still `running`), the next run reuses that reply and skips what
was applied, so nothing is asked or written twice. After an ordinary failure
(`failed`) the model is asked again (its last reply may be what failed), unless some
of that reply's items were already applied: asking again could only write those
twice, so the stored reply is resumed like after a crash.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime, time
from typing import Any, TypeVar
from zoneinfo import ZoneInfo

from pydantic import BaseModel

from memory_core.errors import LLMUnavailable
from memory_core.llm.base import LLMClient
from memory_core.ops.alerts import AlertSink
from memory_core.prompts.nightly import Prompt
from memory_core.settings import LiveSettings, Settings
from memory_core.storage import MemoryRepo, NightlyRepo, StepRow

from .asking import Check, InvalidReply, ask
from .ports import MemoryPort

T = TypeVar("T", bound=BaseModel)

CHANGED_BY = "nightly"


class ModelMissing(LLMUnavailable):
    """No model is configured: steps with material wait instead of failing."""


@dataclass(frozen=True, slots=True)
class Services:
    repo: NightlyRepo
    memory_repo: MemoryRepo
    """Reads only (gc candidates, index upkeep): changes go through `memories`."""
    memories: MemoryPort
    llm: LLMClient | None
    live: LiveSettings
    alerts: AlertSink

    @property
    def settings(self) -> Settings:
        """The settings in effect now (the bot's name follows the console's nicknames)."""
        return self.live.current

    @property
    def bot_name(self) -> str:
        return self.settings.bot_name


@dataclass(frozen=True, slots=True)
class StepResult:
    summary: str
    detail: dict[str, Any] = field(default_factory=dict[str, Any])
    skipped: bool = False
    committed: bool = False
    """True when the step already wrote its `done` checkpoint in its own transaction."""
    asks: int = 0


@dataclass
class DayRun:
    """One (scope, day, step) at work: the day's bounds and the step's checkpoint."""

    services: Services
    scope: str
    day: date
    start: datetime
    """Exclusive."""
    end: datetime
    """Inclusive: the cutoff."""
    tz: ZoneInfo
    cutoff: time
    now: datetime
    step: str
    previous: StepRow | None
    """The step's checkpoint as found before this attempt."""
    done_details: dict[str, dict[str, Any]]
    """Details of the steps already done for this day (step 1's rewrites for step 2...)."""
    progress: dict[str, Any] = field(default_factory=dict[str, Any])
    asks: int = 0

    @property
    def day_text(self) -> str:
        return self.day.isoformat()

    @property
    def crashed(self) -> bool:
        return self.previous is not None and self.previous.state == "running"

    @property
    def resumes(self) -> bool:
        """The stored reply is resumed: after a crash, or after a failure that came
        when some of its items were already applied."""
        if self.previous is None:
            return False
        return self.crashed or (
            self.previous.state == "failed" and bool(self.previous.detail.get("applied"))
        )

    def applied(self) -> set[int]:
        """Indices of the reply's items applied before a crash or failure."""
        if not self.resumes or self.previous is None:
            return set()
        return {int(i) for i in self.previous.detail.get("applied", [])}

    async def ask(self, prompt: Prompt[T], check: Check[T] | None = None) -> T:
        previous = self.previous.detail.get("reply") if self.resumes and self.previous else None
        if previous is not None:
            value = prompt.response.model_validate(previous)
            self.progress["reply"] = previous
            self.progress["applied"] = sorted(self.applied())
            await self.save()
            return value
        llm = self.services.llm
        if llm is None:
            raise ModelMissing("no model configured (YUJI_LLM_BASE_URL / YUJI_LLM_MODEL)")
        settings = self.services.settings
        try:
            asked = await ask(
                llm,
                prompt,
                base_temperature=settings.llm_temperature,
                retries=settings.nightly_llm_retries,
                ooc_patterns=settings.ooc_patterns,
                check=check,
                scope=self.scope,
            )
        except InvalidReply as exc:
            self.asks += len(exc.reasons)
            raise
        self.asks += asked.attempts
        self.progress["reply"] = asked.value.model_dump(mode="json")
        self.progress["applied"] = []
        if asked.reasons:
            self.progress["refused"] = list(asked.reasons)
        await self.save()
        return asked.value

    async def mark_applied(self, index: int) -> None:
        applied = list(self.progress.get("applied", []))
        applied.append(index)
        self.progress["applied"] = applied
        await self.save()

    async def save(self) -> None:
        await self.services.repo.save_detail(self.scope, self.day_text, self.step, self.progress)

    def local(self, instant: datetime) -> datetime:
        return instant.astimezone(self.tz)
