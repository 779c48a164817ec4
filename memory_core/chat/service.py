"""`core.chat`: from one incoming message to the reply parts that were sent.

    outcome = await core.chat.respond(incoming, send)

`send(text) -> message id | None` is the plugin's side effect. In order: the wake
rules (muted chats stay silent), recall (at most five memories of this chat), the
prompt, the model behind the out-of-character guard (one silent retry, then the
fallback line), citation markers stripped and credited, the reply split and sent,
and what was injected recorded for `/why`. Upstream failures end in the failure
line; nothing in here raises into the plugin and no call waits without a bound.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Literal
from zoneinfo import ZoneInfo

from memory_core.clock import Clock
from memory_core.errors import LLMError, LLMToolsUnsupported, StorageError
from memory_core.llm.base import ChatMessage, LLMClient
from memory_core.llm.wire import strip_think
from memory_core.prompts.budget import estimate_tokens
from memory_core.prompts.chat import (
    ChatPrompt,
    ChatPromptInput,
    PromptBudget,
    PromptFollowUp,
    PromptLine,
    PromptMemory,
    PromptQuote,
    build_chat_prompt,
)
from memory_core.recall.carried import shown_in
from memory_core.recall.quotes import QUOTES as MAX_QUOTED
from memory_core.recall.wake import CONTEXT_TURNS, Turn
from memory_core.settings import LiveSettings, Settings
from memory_core.storage import ChatRepo, ChatState, InjectedBlock, InjectedItem, InjectedQuote
from memory_core.types import Asker, Experience, Quoted, Recalled, group_scope

from .backfill import BackfillReport, CallApi, ParseMessage, backfill_group
from .citations import strip_citations
from .context import ContextView, gather_context
from .degraded import or_default, without_memories
from .guard import OutOfCharacterGuard
from .memory_tool import MemoryTool
from .persona import load_persona
from .ports import (
    ArchivePort,
    BlocksPort,
    ContextPort,
    DeploymentPort,
    FollowupsPort,
    ImageTexts,
    MemoriesPort,
    PeoplePort,
    RecallPort,
)
from .split import split_reply
from .wake import WakeReason, WakeSignals, decide_wake, wake_reason

log = logging.getLogger("yuji.chat")

MAX_INJECTED = 5
TOOL_TURNS = 3
"""Model calls per answer with the memory tool: search, a refused second search, answer."""
DEADLINE_GRACE_S = 5.0
"""Extra seconds over the LLM timeout before the chat path gives up on a call itself."""

Send = Callable[[str], Awaitable[str | None]]
OutcomeKind = Literal[
    "silent", "muted", "no_model", "reply", "fallback", "failure", "answered_elsewhere"
]


@dataclass(frozen=True, slots=True)
class Incoming:
    """One message, as the plugin read it off the event."""

    scope: str
    fingerprint: str
    sender_id: str
    sender_name: str
    text: str
    sent_at: datetime
    self_id: str
    is_private: bool
    mentioned_ids: tuple[str, ...] = ()
    reply_to: str | None = None
    """Fingerprint (message id) of the quoted message, if any."""
    reply_to_bot: bool | None = None
    """Known from the event; None means "look the quoted message up in the archive"."""

    @property
    def asker(self) -> Asker:
        """Who sent it, as recall reads a first person."""
        return Asker(self.sender_id, (self.sender_name,) if self.sender_name else ())

    @property
    def members_mentioned(self) -> tuple[str, ...]:
        """The ids it @-mentions but the persona's own: members the wake names."""
        return tuple(m for m in self.mentioned_ids if m and m != self.self_id)


@dataclass(frozen=True, slots=True)
class ReplyOutcome:
    kind: OutcomeKind
    reason: WakeReason | None = None
    parts: tuple[str, ...] = ()
    """What was sent, in order."""
    injection_id: int | None = None
    injected_ids: tuple[int, ...] = ()
    cited_ids: tuple[int, ...] = ()
    sent_ids: tuple[str, ...] = field(default=())


class ChatService:
    def __init__(
        self,
        *,
        settings: LiveSettings,
        clock: Clock,
        repo: ChatRepo,
        archive: ArchivePort,
        recall: RecallPort,
        memories: MemoriesPort,
        context: ContextPort,
        llm: LLMClient | None,
        blocks: BlocksPort | None = None,
        describe: ImageTexts | None = None,
        deployment: DeploymentPort | None = None,
        people: PeoplePort | None = None,
        followups: FollowupsPort | None = None,
    ) -> None:
        self.live = settings
        self.clock = clock
        self.repo = repo
        self.archive = archive
        self.recall = recall
        self.memories = memories
        self.context = context
        self.llm = llm
        self.blocks = blocks
        self.describe = describe
        self.deployment = deployment
        self.people = people
        self.followups = followups
        self.guard = OutOfCharacterGuard(self.settings.ooc_patterns)
        self.persona = load_persona(self.settings.persona_file)
        self.deadline_grace_s = DEADLINE_GRACE_S
        self._warned_no_model = False
        self.tools_refused = False
        """The chat model refused a request carrying tools: the memory tool is off."""

    @property
    def settings(self) -> Settings:
        """The settings in effect now (wake nicknames and the recall limit move live)."""
        return self.live.current

    async def respond(self, incoming: Incoming, send: Send) -> ReplyOutcome:
        try:
            return await self._respond(incoming, send)
        except Exception:
            # Last line of defence: the plugin never sees a stack trace.
            log.exception("yuji: reply pipeline failed in %s", incoming.scope)
            return ReplyOutcome(kind="failure")

    async def _respond(self, incoming: Incoming, send: Send) -> ReplyOutcome:
        now = self.clock.now()
        reply_to_bot = incoming.reply_to_bot
        if reply_to_bot is None:
            reply_to_bot = await self._quotes_bot(incoming)
        signals = WakeSignals(
            is_private=incoming.is_private,
            text=incoming.text,
            self_id=incoming.self_id,
            mentioned_ids=incoming.mentioned_ids,
            reply_to_bot=reply_to_bot,
        )
        if wake_reason(signals, self.settings.nicknames) is None:
            return ReplyOutcome(kind="silent")  # most messages: no read of the chat's state
        deployment = self.deployment
        scope = incoming.scope
        if deployment is not None and await or_default(
            deployment.is_ours(incoming.sender_id), False, "checking our accounts", scope
        ):
            return ReplyOutcome(kind="silent")  # another of our accounts: bots never chat
        state = await or_default(
            self.repo.state(scope), ChatState(scope=scope), "reading mute state", scope
        )
        decision = decide_wake(
            signals, nicknames=self.settings.nicknames, muted_until=state.muted_until, now=now
        )
        if decision.muted:
            return ReplyOutcome(kind="muted", reason=decision.reason)
        if (
            deployment is not None
            and decision.reason == "nickname"
            and not await self._answers_nickname(deployment, incoming)
        ):
            return ReplyOutcome(kind="answered_elsewhere", reason=decision.reason)
        await or_default(self.repo.touch(scope, now, wake_at=now), None, "noting the wake", scope)
        if self.llm is None:
            if not self._warned_no_model:
                log.warning("yuji: woken but no LLM is configured; not replying")
                self._warned_no_model = True
            return ReplyOutcome(kind="no_model", reason=decision.reason)
        return await self._reply(incoming, decision.reason, self.llm, send, now)

    @staticmethod
    async def _answers_nickname(deployment: DeploymentPort, incoming: Incoming) -> bool:
        """A nickname wake several of our accounts may have heard: an account it @s
        answers it (as its @-wake); else the process whose claim lands first."""
        if incoming.is_private:
            return True
        for mentioned in incoming.mentioned_ids:
            if mentioned != incoming.self_id and await deployment.is_ours(mentioned):
                return False
        return await or_default(
            deployment.claim(
                incoming.scope,
                incoming.sender_id,
                incoming.sent_at,
                incoming.text,
                incoming.self_id,
            ),
            True,
            "claiming the wake",
            incoming.scope,
        )

    async def backfill(
        self, group_id: int, *, call_api: CallApi, parse: ParseMessage, limit: int | None = None
    ) -> BackfillReport:
        """Fetch and archive missed history of one group (see `backfill.py`)."""
        return await backfill_group(
            group_id,
            scope=group_scope(group_id),
            call_api=call_api,
            parse=parse,
            archive=self.archive,
            limit=self.settings.backfill_max if limit is None else limit,
        )

    async def catch_up(
        self, group_id: int, *, call_api: CallApi, parse: ParseMessage, heard_before: datetime
    ) -> BackfillReport:
        """After a (re)connect or a start: page back through the group's history until
        the last message archived before `heard_before`, within
        `backfill_catchup_max` messages; a group never heard gets `/backfill`'s run."""
        scope = group_scope(group_id)
        known = await self.archive.newest_received_before(scope, heard_before)
        if known is None:
            return await self.backfill(group_id, call_api=call_api, parse=parse)
        return await backfill_group(
            group_id,
            scope=scope,
            call_api=call_api,
            parse=parse,
            archive=self.archive,
            limit=self.settings.backfill_catchup_max,
            until=known,
        )

    async def _quotes_bot(self, incoming: Incoming) -> bool:
        if not incoming.reply_to:
            return False
        quoted = await self.archive.by_fingerprint(incoming.scope, incoming.reply_to)
        return quoted is not None and quoted.is_bot

    async def _reply(
        self,
        incoming: Incoming,
        reason: WakeReason | None,
        llm: LLMClient,
        send: Send,
        now: datetime,
    ) -> ReplyOutcome:
        trigger: Experience | None = None
        recalled: tuple[Recalled, ...] = ()
        quoted: tuple[Quoted, ...] = ()
        prompt: ChatPrompt | None = None
        tool: MemoryTool | None = None
        offered: PromptFollowUp | None = None
        try:
            try:
                trigger = await self.archive.by_fingerprint(incoming.scope, incoming.fingerprint)
                before_id = trigger.id if trigger is not None else None
                recalled, quoted = await recall_turn(
                    self.recall,
                    incoming.scope,
                    incoming.text,
                    now=now,
                    limit=self.settings.recall_limit,
                    before_id=before_id,
                    context=await self._turns_before(incoming, before_id),
                    asker=incoming.asker,
                    mentioned=incoming.members_mentioned,
                )
                view = await gather_context(
                    incoming.scope,
                    now=now,
                    recalled=recalled,
                    trigger_id=before_id,
                    trigger_fingerprint=incoming.fingerprint,
                    settings=self.settings,
                    archive=self.archive,
                    context=self.context,
                    blocks=self.blocks,
                    describe=self.describe,
                    people=self.people,
                    asker=incoming.sender_id,
                    mentioned=list(incoming.members_mentioned),
                    text=incoming.text,
                    # No block, no offer: an offer counts towards the three days.
                    followups=self.followups if self.settings.prompt_followups_tokens else None,
                )
                tool = self._memory_tool(incoming, view, now)
                offered = view.followup
            except StorageError as exc:  # the store is away: answer without it
                without_memories(incoming.scope, exc)
                trigger, recalled, quoted, tool = None, (), (), None
                view = ContextView(zone=ZoneInfo(self.settings.timezone))
            prompt = build_chat_prompt(
                self._prompt_input(incoming, view, recalled, quoted, now),
                PromptBudget(
                    people=self.settings.prompt_people_tokens,
                    followups=self.settings.prompt_followups_tokens,
                ),
            )
            kind, text = await self._generate(llm, prompt.messages, incoming.scope, tool)
        except LLMError as exc:
            log.warning("yuji: model unavailable for %s: %s", incoming.scope, exc)
            kind, text = "failure", self.settings.failure_line
        injected = prompt.memory_ids if prompt is not None else ()
        if tool is not None and tool.found:
            # What the model looked up counts like what it was given (/why, credit).
            known = {r.memory.id for r in recalled}
            recalled = (*recalled, *(r for r in tool.found if r.memory.id not in known))
            injected = tuple(dict.fromkeys((*injected, *(r.memory.id for r in tool.found))))
        cited = strip_citations(text, injected)
        used = cited.used_ids if kind == "reply" else ()
        parts = split_reply(cited.text, self.settings.reply_max_chars)
        # Recorded before sending, so a `/why` right after the reply already sees it.
        injection_id = None
        if prompt is not None:
            injection_id = await or_default(
                self.repo.add_injection(
                    incoming.scope,
                    trigger_experience_id=trigger.id if trigger is not None else None,
                    reply_fingerprint=None,
                    query=incoming.text,
                    items=_items(recalled, injected, used),
                    quotes=[
                        InjectedQuote(q.message.id, q.score, q.band)
                        for q in quoted
                        if q.message.id in prompt.quote_ids
                    ],
                    now=now,
                    blocks=[InjectedBlock(n, estimate_tokens(t), t) for n, t in prompt.blocks],
                ),
                None,
                "recording the injection",
                incoming.scope,
            )
        sent_ids = await self._send_all(parts, send, incoming.scope)
        scope = incoming.scope
        if injection_id is not None and sent_ids and sent_ids[0]:
            fingerprint = self.repo.set_reply_fingerprint(injection_id, sent_ids[0])
            await or_default(fingerprint, None, "noting the reply", scope)
        if used and sent_ids:
            await or_default(self.memories.credit(scope, used, now), None, "crediting", scope)
        if prompt is None:
            offered = None
        if offered is not None and offered.id in used and sent_ids and self.followups is not None:
            # Cited: the reply asked about it in passing; it is not offered again.
            asked = self.followups.mark_asked(scope, offered.id)
            await or_default(asked, None, "noting the follow-up asked", scope)
        if sent_ids:
            sent_at = self.clock.now()
            touched = self.repo.touch(scope, sent_at, reply_at=sent_at)
            await or_default(touched, None, "noting the reply", scope)
        return ReplyOutcome(
            kind=kind,
            reason=reason,
            parts=tuple(parts[: len(sent_ids)]),
            injection_id=injection_id,
            injected_ids=injected,
            cited_ids=used,
            sent_ids=tuple(sent_ids),
        )

    async def _turns_before(self, incoming: Incoming, before_id: int | None) -> tuple[Turn, ...]:
        """The last `CONTEXT_TURNS` messages of this chat before the wake (the newest of
        the recent window the prompt shows), oldest first: the wake's context."""
        messages = await self.archive.recent(incoming.scope, CONTEXT_TURNS + 1, before_id=before_id)
        turns = [
            Turn(m.text, is_bot=m.is_bot, sender=m.sender_name, scope=m.scope)
            for m in messages
            if m.fingerprint != incoming.fingerprint and m.scope == incoming.scope
        ]
        return tuple(turns[-CONTEXT_TURNS:])

    def _memory_tool(
        self, incoming: Incoming, view: ContextView, now: datetime
    ) -> MemoryTool | None:
        if self.settings.chat_memory_tool != "on" or self.tools_refused:
            return None

        async def search(query: str) -> tuple[Recalled, ...]:
            return await recall_for_reply(
                self.recall,
                incoming.scope,
                query,
                now=now,
                limit=self.settings.recall_limit,
                asker=incoming.asker,
            )

        return MemoryTool(search, incoming.scope, lambda item: _prompt_memory(item, view))

    async def _generate(
        self, llm: LLMClient, messages: list[ChatMessage], scope: str, tool: MemoryTool | None
    ) -> tuple[Literal["reply", "fallback"], str]:
        """One answer, one silent retry if it is out of character, then the fallback.

        Both calls share one deadline, `llm_timeout_s` from the first call: the retry
        gets what the first answer left, and none when nothing is left."""
        deadline = asyncio.get_running_loop().time() + self.settings.llm_timeout_s
        for attempt in (1, 2):
            try:
                answer = await self._ask(llm, messages, scope, deadline, tool)
            except LLMError:
                if attempt == 1:
                    raise
                break  # the model did answer, out of character: that is the fallback
            verdict = self.guard.check(strip_citations(answer, ()).text)
            if verdict.ok:
                return "reply", answer
            log.info("yuji: out-of-character reply (attempt %d): %s", attempt, verdict.why)
        return "fallback", self.settings.fallback_line

    async def _ask(
        self,
        llm: LLMClient,
        messages: list[ChatMessage],
        scope: str,
        deadline: float,
        tool: MemoryTool | None,
    ) -> str:
        remaining = deadline - asyncio.get_running_loop().time()
        if remaining <= 0:
            raise LLMError(f"no time left of the {self.settings.llm_timeout_s:.1f}s reply deadline")
        try:
            # Each call is given what is left; the grace only catches a client (or a
            # memory-tool search) that does not keep to it.
            async with asyncio.timeout_at(deadline + self.deadline_grace_s):
                return await self._converse(llm, messages, scope, tool, deadline)
        except TimeoutError as exc:
            raise LLMError(f"no answer within {remaining + self.deadline_grace_s:.1f}s") from exc

    async def _converse(
        self,
        llm: LLMClient,
        messages: list[ChatMessage],
        scope: str,
        tool: MemoryTool | None,
        deadline: float,
    ) -> str:
        """The answer text; with the memory tool, its calls are answered in between
        (the last ask offers no tool, so the model has to answer). Every call of the
        conversation shares the reply's one deadline."""
        loop = asyncio.get_running_loop()
        for turn in range(TOOL_TURNS):
            remaining = deadline - loop.time()
            if remaining <= 0:
                raise LLMError(
                    f"no time left of the {self.settings.llm_timeout_s:.1f}s reply deadline"
                )
            offer = tool is not None and turn < TOOL_TURNS - 1
            try:
                response = await llm.chat(
                    messages,
                    tools=[tool.spec] if offer and tool is not None else None,
                    temperature=self.settings.llm_temperature,
                    timeout_s=remaining,
                    scope=scope,
                )
            except LLMToolsUnsupported:
                if not offer:
                    raise
                # The reply goes on without the tool, now and from now on.
                log.warning(
                    "yuji: the chat model lacks tool calling; YUJI_CHAT_MEMORY_TOOL is ignored"
                )
                self.tools_refused = True
                tool = None
                continue
            calls = response.message.tool_calls
            if tool is None or not calls or not offer:
                # The client already cut a reasoning model's thinking; any client may not.
                return strip_think(response.message.content or "")
            messages = [*messages, response.message]
            for call in calls:
                result = await tool.handle(call)
                messages.append(ChatMessage(role="tool", content=result, tool_call_id=call.id))
        return ""

    async def _send_all(self, parts: Sequence[str], send: Send, scope: str) -> list[str]:
        sent: list[str] = []
        for part in parts:
            try:
                message_id = await send(part)
            except Exception:
                log.exception("yuji: sending a reply part to %s failed", scope)
                break
            sent.append(message_id or "")
        return sent

    def _prompt_input(
        self,
        incoming: Incoming,
        view: ContextView,
        recalled: Sequence[Recalled],
        quoted: Sequence[Quoted],
        now: datetime,
    ) -> ChatPromptInput:
        return view.prompt_input(
            persona=self.persona,
            bot_name=self.settings.bot_name,
            is_private=incoming.is_private,
            message=PromptLine(
                incoming.sender_name or incoming.sender_id,
                incoming.text,
                view.clock_label(incoming.sent_at, now),
            ),
            memories=tuple(_prompt_memory(r, view) for r in recalled),
            quotes=tuple(
                PromptQuote(
                    id=q.message.id,
                    sender=q.message.sender_name or q.message.sender_id,
                    time=view.clock_label(q.message.sent_at, now),
                    text=view.texts.get(q.message.id, q.message.text),
                )
                for q in quoted
            ),
            now=now,
        )


async def recall_for_reply(
    recall: RecallPort,
    scope: str,
    text: str,
    *,
    now: datetime,
    limit: int,
    asker: Asker | None = None,
    mentioned: Sequence[str] = (),
) -> tuple[Recalled, ...]:
    """What a reply to `text` is given (and `/recall` previews): at most `MAX_INJECTED`
    (and `limit`) memories, all of this chat."""
    items, _ = await recall_turn(
        recall, scope, text, now=now, limit=limit, asker=asker, mentioned=mentioned
    )
    return items


async def recall_turn(
    recall: RecallPort,
    scope: str,
    text: str,
    *,
    now: datetime,
    limit: int,
    before_id: int | None = None,
    context: Sequence[Turn] = (),
    asker: Asker | None = None,
    mentioned: Sequence[str] = (),
) -> tuple[tuple[Recalled, ...], tuple[Quoted, ...]]:
    """`recall_for_reply`'s memories, and the recent messages not consolidated yet
    that recall quotes (older than the messages before `before_id` the prompt shows);
    `context`: the turns just before the wake, oldest first; `mentioned`: the members
    it @-mentions (user ids)."""
    limit = min(MAX_INJECTED, limit)
    result = await recall.recall(
        scope,
        text,
        now=now,
        limit=limit,
        before_id=before_id,
        context=context,
        asker=asker,
        mentioned=mentioned,
    )
    # Belt and braces over recall's own visibility rule: never another chat's memory
    # or message, never the bot's own words quoted.
    kept = tuple(item for item in result.items if shown_in(item, scope))
    quotes = tuple(q for q in result.quotes if q.message.scope == scope and not q.message.is_bot)
    if len(kept) != len(result.items) or len(quotes) != len(result.quotes):
        log.error("yuji: recall returned another chat's memories or messages for %s", scope)
    return kept[:limit], quotes[:MAX_QUOTED]


def _prompt_memory(item: Recalled, view: ContextView) -> PromptMemory:
    memory = item.memory
    if item.stage == "carried":  # its content only: not whose word, nor where, nor when
        return PromptMemory(id=memory.id, content=memory.content, stage=item.stage, band="related")
    subject, said = view.words.get(memory.id, (memory.subject, ""))
    return PromptMemory(
        id=memory.id,
        content=memory.content,
        stage=item.stage,
        subject=subject,
        said=said,
        reason=item.reason,
        band=item.band,
        since=view.date_label(memory.valid_from),
        until=view.date_label(memory.valid_to),
        contradicts=view.contradicts.get(memory.id),
    )


def _items(
    recalled: Sequence[Recalled], injected: Sequence[int], used: Sequence[int]
) -> list[InjectedItem]:
    wanted = set(injected)
    return [
        InjectedItem(
            memory_id=r.memory.id,
            stage=r.stage,
            score=r.score,
            reason=r.reason,
            cited=r.memory.id in used,
        )
        for r in recalled
        if r.memory.id in wanted
    ]
