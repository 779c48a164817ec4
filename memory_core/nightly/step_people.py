"""Step 3b, `people`: a short card per member of a group whose memories changed that day.

The members are those with a version of a memory about them (`subject_person`) written
in the day; the most changed first, at most `person_cards_per_night` of them per chat
and night (the rest wait for a day their memories change again). Each card is asked of
the model from that member's active memories that rest on evidence, each marked with
whose word it is (本人说 / 小周说), and the card it replaces; a different text is the
card's next version. Private chats get none, and a card belongs to one chat: a member
of two groups has two cards that never meet.

Resumable without a stored reply per member: a card this night already wrote (its
version carries the day) is not asked again.
"""

from __future__ import annotations

from memory_core.prompts.nightly import Prompt
from memory_core.prompts.person_card import (
    MemberFact,
    PersonCardReply,
    person_card_prompt,
    said_by,
)
from memory_core.storage import PersonCardsRepo
from memory_core.types import is_group_scope

from .asking import InvalidReply, ask
from .context import DayRun, ModelMissing, StepResult
from .stepkit import summary

MEMORIES_PER_CARD = 40
"""The most recently changed memories a card is written from."""
UNKNOWN_WORD = "来源不明"


async def people(run: DayRun) -> StepResult:
    services = run.services
    if not is_group_scope(run.scope):
        return StepResult("private chat: no person cards", skipped=True)
    repo = PersonCardsRepo(services.repo.db)
    changed = await repo.changed_members(run.scope, run.start, run.end)
    cap = services.settings.person_cards_per_night
    chosen = changed[:cap]
    if not chosen:
        return StepResult("no member's memories changed", {"members": []}, skipped=True)
    current = await repo.current(run.scope, chosen)
    written: list[str] = []
    refused: list[str] = []
    for user_id in chosen:
        card = current.get(user_id)
        if card is not None and card.day == run.day_text:
            written.append(user_id)  # an earlier attempt of this night wrote it
            continue
        material = await repo.member_memories(run.scope, user_id, MEMORIES_PER_CARD)
        if not material:
            continue
        speakers = {s for m in material for s in m.speakers}
        names = await repo.names(run.scope, {user_id, *speakers})
        name = names.get(user_id) or material[0].memory.subject
        facts = [
            MemberFact(
                m.memory.id,
                m.memory.type,
                m.memory.content,
                said_by(
                    m.memory.word,
                    name,
                    [names[s] for s in m.speakers if s != user_id and s in names],
                )
                or UNKNOWN_WORD,
            )
            for m in reversed(material)  # oldest first, as things happened
        ]
        prompt = person_card_prompt(
            name,
            facts,
            card.content if card is not None else "",
            day=run.day_text,
            bot_name=services.bot_name,
        )
        text = await _ask(run, prompt, user_id, refused)
        if text is None:
            continue
        if card is None or text != card.content.strip():
            await repo.append(run.scope, user_id, text, run.day_text, run.now)
            written.append(user_id)
    detail = {
        "members": written,
        "waiting": changed[cap:],
        **({"refused": refused} if refused else {}),
    }
    text = f"{len(written)} person cards"
    if len(changed) > cap:
        text += f", {len(changed) - cap} left for another night"
    return StepResult(summary(text, refused), detail)


async def _ask(
    run: DayRun, prompt: Prompt[PersonCardReply], user_id: str, refused: list[str]
) -> str | None:
    """The card text, or None when the model never answered usably (noted in
    `refused`; the other members' cards still go ahead)."""
    llm = run.services.llm
    if llm is None:
        raise ModelMissing("no model configured (YUJI_LLM_BASE_URL / YUJI_LLM_MODEL)")
    settings = run.services.settings
    try:
        asked = await ask(
            llm,
            prompt,
            base_temperature=settings.llm_temperature,
            retries=settings.nightly_llm_retries,
            ooc_patterns=settings.ooc_patterns,
            scope=run.scope,
        )
    except InvalidReply as exc:
        run.asks += len(exc.reasons)
        refused.append(f"{user_id}: {exc}")
        return None
    run.asks += asked.attempts
    return asked.value.card.strip()
