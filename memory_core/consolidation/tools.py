"""The model's tool surface for one batch: parse, check, then call core.memories.

Every refusal is a tool result the model can read (`{"ok": false, "error": ...}`),
never an exception out of the conversation, and is decided before anything is
written: a foreign token, another chat's memory id, an experience id outside the
batch, evidence resting only on the bot's own words for a fact about a person, or a
call after the batch has ended.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from zoneinfo import ZoneInfo

from pydantic import ValidationError as PydanticValidationError

from memory_core.errors import BatchError, NotFound, ScopeViolation, YujiError
from memory_core.llm.base import ToolCall
from memory_core.prompts.consolidation import (
    TOOLS_BY_NAME,
    AcknowledgeArgs,
    AliasArgs,
    ContradictArgs,
    EditArgs,
    RetractArgs,
    SearchArgs,
    SupersedeArgs,
    WriteArgs,
    ok,
    refused,
)
from memory_core.storage import Batch, ConsolidationRepo
from memory_core.types import EvidenceRef, Memory

from .ports import MemoryStore

log = logging.getLogger("yuji.consolidation")

NON_PERSON_SUBJECTS = frozenset({"group", "bot", "群", "本群"})


@dataclass
class ToolStats:
    calls: int = 0
    refused: int = 0
    written: list[int] = field(default_factory=list[int])
    changed: list[int] = field(default_factory=list[int])
    near_duplicates: int = 0


@dataclass(frozen=True, slots=True)
class BatchView:
    """What the tools know about the batch's experiences."""

    ids: frozenset[int]
    bot_sourced: frozenset[int]
    """Experience ids that are the bot's words (sent by it, or repeating it)."""


def parse_instant(value: str, zone: ZoneInfo) -> datetime:
    """ISO 8601 date or date-time; without an offset it is local time in `zone`."""
    parsed = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=zone)
    return parsed


class BatchTools:
    def __init__(
        self,
        batch: Batch,
        view: BatchView,
        *,
        memories: MemoryStore,
        repo: ConsolidationRepo,
        now: Callable[[], datetime],
        zone: ZoneInfo,
        bot_names: Sequence[str],
    ) -> None:
        self.batch = batch
        self.view = view
        self.memories = memories
        self.repo = repo
        self.now = now
        self.zone = zone
        self.bot_subjects = NON_PERSON_SUBJECTS | {n.lower() for n in bot_names}
        self.stats = ToolStats()
        self.acknowledged: str | None = None
        self.fragment_id: int | None = None
        self.ended: str | None = None
        """Why calls are refused now: acknowledged, or ended from outside (watchdog)."""
        self._handlers: dict[str, Callable[[Any], Awaitable[str]]] = {
            "search_memories": self._search,
            "write_memory": self._write,
            "edit_memory": self._edit,
            "supersede_memory": self._supersede,
            "mark_contradiction": self._contradict,
            "retract_memory": self._retract,
            "add_alias": self._alias,
            "acknowledge": self._acknowledge,
        }

    @property
    def changed_by(self) -> str:
        return f"consolidation:batch:{self.batch.id}"

    async def handle(self, call: ToolCall) -> str:
        self.stats.calls += 1
        result = await self._handle(call)
        if result.startswith('{"ok": false'):
            self.stats.refused += 1
            log.info("batch %d: refused %s: %s", self.batch.id, call.name, result)
        return result

    async def _handle(self, call: ToolCall) -> str:
        tool = TOOLS_BY_NAME.get(call.name)
        if tool is None:
            return refused(f"unknown tool {call.name!r}; use one of: {', '.join(TOOLS_BY_NAME)}")
        try:
            raw = json.loads(call.arguments or "{}")
        except ValueError as exc:
            return refused(f"arguments are not valid JSON: {exc}")
        if not isinstance(raw, dict):
            return refused("arguments must be a JSON object")
        try:
            args = tool.args.model_validate(raw)
        except PydanticValidationError as exc:
            problems = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'arguments'}: {e['msg']}"
                for e in exc.errors()
            )
            return refused(f"invalid arguments: {problems}")
        if args.token != self.batch.token:
            return refused("token does not belong to the current batch; nothing was done")
        if self.ended is not None:
            return refused(f"this batch has ended ({self.ended}); nothing was done")
        if not await self.repo.touch(self.batch.id, self.now()):
            self.ended = "closed from outside (watchdog or restart)"
            return refused(f"this batch has ended ({self.ended}); nothing was done")
        try:
            return await self._handlers[call.name](args)
        except (NotFound, ScopeViolation):
            return refused("a memory id you gave does not exist in this chat")
        except YujiError as exc:
            return refused(f"{type(exc).__name__}: {exc}")

    # --- evidence ------------------------------------------------------------------

    async def _evidence(
        self, subject: str | None, experience_ids: Sequence[int], memory_ids: Sequence[int]
    ) -> list[EvidenceRef] | str:
        outside = sorted({i for i in experience_ids if i not in self.view.ids})
        if outside:
            return (
                f"experience ids {outside} are not part of this batch "
                f"(#{self.batch.first_id}..#{self.batch.last_id} of this chat)"
            )
        for memory_id in memory_ids:
            await self.memories.get(self.batch.scope, memory_id)  # NotFound -> refused
        exp_ids = list(dict.fromkeys(experience_ids))
        if (
            subject is not None
            and subject.strip().lower() not in self.bot_subjects
            and exp_ids
            and not memory_ids
            and all(i in self.view.bot_sourced for i in exp_ids)
        ):
            return (
                f"evidence {exp_ids} is only the bot's own words; a fact about {subject!r} "
                "needs a message from a person"
            )
        refs = [EvidenceRef(experience_id=i) for i in exp_ids]
        refs += [EvidenceRef(memory_id=i, role="derived") for i in dict.fromkeys(memory_ids)]
        return refs

    def _instant(self, value: str | None) -> datetime | str | None:
        if value is None:
            return None
        try:
            return parse_instant(value, self.zone)
        except ValueError:
            return f"{value!r} is not an ISO 8601 date or date-time"

    # --- handlers --------------------------------------------------------------------

    async def _search(self, args: SearchArgs) -> str:
        found = await self.memories.search(self.batch.scope, args.query, limit=args.limit)
        return ok(memories=[_brief(m) for m in found])

    async def _write(self, args: WriteArgs) -> str:
        evidence = await self._evidence(args.subject, args.evidence, args.evidence_memories)
        if isinstance(evidence, str):
            return refused(evidence)
        if not evidence:
            return refused("evidence is required: give the # ids of this batch's messages")
        valid_from = self._instant(args.valid_from)
        valid_to = self._instant(args.valid_to)
        if isinstance(valid_from, str) or isinstance(valid_to, str):
            return refused(valid_from if isinstance(valid_from, str) else str(valid_to))
        outcome = await self.memories.write(
            self.batch.scope,
            type=args.type,
            subject=args.subject,
            content=args.content,
            evidence=evidence,
            importance=args.importance,
            confidence=args.confidence,
            valid_from=valid_from,
            valid_to=valid_to,
            origin="consolidation",
            changed_by=self.changed_by,
            subject_id=args.subject_id,
        )
        self.stats.written.append(outcome.memory.id)
        near = None
        if outcome.near_duplicate is not None:
            self.stats.near_duplicates += 1
            near = {**_brief(outcome.near_duplicate), "similarity": round(outcome.similarity, 3)}
        return ok(id=outcome.memory.id, near_duplicate=near)

    async def _edit(self, args: EditArgs) -> str:
        current = await self.memories.get(self.batch.scope, args.memory_id)
        evidence = await self._evidence(args.subject or current.subject, args.evidence, ())
        if isinstance(evidence, str):
            return refused(evidence)
        valid_to = self._instant(args.valid_to)
        if isinstance(valid_to, str):
            return refused(valid_to)
        memory = await self.memories.edit(
            self.batch.scope,
            args.memory_id,
            content=args.content,
            subject=args.subject,
            importance=args.importance,
            confidence=args.confidence,
            valid_to=valid_to,
            reason=args.reason,
            changed_by=self.changed_by,
            evidence=evidence,
        )
        self.stats.changed.append(memory.id)
        return ok(id=memory.id, version=memory.version)

    async def _supersede(self, args: SupersedeArgs) -> str:
        for memory_id in (args.old_id, args.new_id):
            await self.memories.get(self.batch.scope, memory_id)
        outcome = await self.memories.supersede(
            self.batch.scope,
            args.old_id,
            args.new_id,
            reason=args.reason,
            changed_by=self.changed_by,
        )
        self.stats.changed.append(args.old_id)
        return ok(applied=outcome.applied, detail=outcome.detail)

    async def _contradict(self, args: ContradictArgs) -> str:
        for memory_id in (args.a_id, args.b_id):
            await self.memories.get(self.batch.scope, memory_id)
        await self.memories.contradict(
            self.batch.scope, args.a_id, args.b_id, reason=args.reason, changed_by=self.changed_by
        )
        return ok()

    async def _retract(self, args: RetractArgs) -> str:
        memory = await self.memories.retract(
            self.batch.scope, args.memory_id, reason=args.reason, changed_by=self.changed_by
        )
        self.stats.changed.append(memory.id)
        return ok(id=memory.id, status=memory.status)

    async def _alias(self, args: AliasArgs) -> str:
        await self.memories.add_alias(self.batch.scope, args.alias, args.canonical)
        return ok()

    async def _acknowledge(self, args: AcknowledgeArgs) -> str:
        try:
            self.fragment_id = await self.repo.acknowledge(
                self.batch.id, args.token, args.outcome, args.summary, self.now()
            )
        except BatchError as exc:
            self.ended = str(exc)
            return refused(f"acknowledgement refused: {exc}")
        self.acknowledged = args.outcome
        self.ended = f"acknowledged as {args.outcome}"
        return ok(closed=True, outcome=args.outcome)


def _brief(memory: Memory) -> dict[str, Any]:
    return {
        "id": memory.id,
        "type": memory.type,
        "subject": memory.subject,
        "content": memory.content,
        "status": memory.status,
        "valid_from": memory.valid_from.isoformat() if memory.valid_from else None,
        "valid_to": memory.valid_to.isoformat() if memory.valid_to else None,
    }
