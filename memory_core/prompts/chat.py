"""The reply prompt (docs/design.md#replies): a pure function of what the chat service gathered.

Block order is fixed, stable prefix first so providers can cache it: persona and
house rules -> active time-bound states -> the seven cards -> relationship timeline
-> recent diaries -> recalled memories -> the people it concerns (the asker's card and
those of the members the message names) -> at most one follow-up of the asker's (a plan
of theirs whose day has passed, to ask about in passing) -> quoted older chat not
consolidated yet
-> background diary of an earlier day ->
unarchived fragment summaries -> recent raw messages -> the message itself. Each
block has its own token budget; an empty block is left out entirely.

Expected response: plain chat text, optionally ending in citation markers
(`marker`, syntax `[[m:<id>]]`) naming the memories it used; `memory_core.chat.citations`
strips them and credits the ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, fields

from memory_core.llm.base import ChatMessage

from .budget import estimate_tokens, take_within, truncate_to
from .nightly import CARD_LABELS


def marker(memory_id: int) -> str:
    """The citation marker the prompt teaches the model to end a reply with."""
    return f"[[m:{memory_id}]]"


MARKER_EXAMPLE = marker(12)

STAGE_TAGS: dict[str, str] = {
    "lexical": "字面命中",
    "graph": "关联记忆",
    "vector": "语义相近",
    "carried": "在别的群说过",
}


def stage_label(stage: str, reason: str = "") -> str:
    """The stage tag, followed by recall's reason unless the reason already says it."""
    tag = STAGE_TAGS.get(stage, stage)
    reason = reason.strip()
    if not reason or reason == tag:
        return tag
    if reason.startswith(tag):
        return tag + reason[len(tag) :]
    return f"{tag}：{reason}"


def card_lines(cards: Sequence[tuple[str, str]]) -> list[str]:
    """`【偏好】…`, one line per card that has text (the prompt's block and `/cards`)."""
    return [
        f"【{CARD_LABELS.get(kind, kind)}】{text.strip()}" for kind, text in cards if text.strip()
    ]


_SLOW = frozenset({"persona", "states", "cards", "timeline", "diaries"})


@dataclass(frozen=True, slots=True)
class PromptBudget:
    """Tokens per block (estimated by `budget.estimate_tokens`)."""

    persona: int = 800
    states: int = 200
    cards: int = 900
    timeline: int = 200
    diaries: int = 600
    memories: int = 700
    people: int = 300
    followups: int = 120
    quotes: int = 300
    background: int = 400
    fragments: int = 500
    recent: int = 1500
    message: int = 600

    @property
    def total(self) -> int:
        return sum(getattr(self, f.name) for f in fields(self))


@dataclass(frozen=True, slots=True)
class PromptMemory:
    id: int
    content: str
    stage: str
    subject: str = ""
    reason: str = ""
    band: str = "sure"
    """`sure`: may be told as something the persona remembers; `related`: may be about
    another person or thing, never told as fact."""
    since: str = ""
    """Local date the memory became valid, or empty."""
    until: str = ""
    """Local date its validity ends (time-bound states), or empty."""
    contradicts: int | None = None
    """Id of the injected memory it contradicts; the two are shown side by side."""
    said: str = ""
    """For a memory about a member: whose word it is (`本人说`, `小周说`, `听说`)."""


@dataclass(frozen=True, slots=True)
class PromptFollowUp:
    """A plan of the asker's whose day has passed (memory_core/followups/): something the
    persona may ask about in passing. Citing its marker is what marks it asked."""

    id: int
    """The plan's memory id (its citation marker)."""
    person: str
    """The asker's name as the memory has it."""
    content: str
    day: str
    """Local date of the plan, already formatted."""


@dataclass(frozen=True, slots=True)
class PromptLine:
    sender: str
    text: str
    time: str = ""
    """Local "HH:MM" (or "MM-DD HH:MM"), already formatted."""
    is_bot: bool = False


@dataclass(frozen=True, slots=True)
class PromptQuote:
    """A message of this chat not consolidated yet, recalled by the question: quoted
    as said, never as a fact the bot learned."""

    id: int
    """The archived message's id (shown, so /why and the console can name it)."""
    sender: str
    time: str
    """Local "MM-DD HH:MM" (or "HH:MM" today), already formatted."""
    text: str


QUOTES_HEADING = (
    "较早的聊天原话（还没整理成记忆；是谁在什么时候说的原话，只代表说话人当时这么说，"
    "不是你记得的事实）"
)


def render_quote(quote: PromptQuote) -> str:
    """`〔原话 消息#812〕[11-20 18:02] 阿明：…`: labelled as a quote, sender and time first."""
    return f"〔原话 消息#{quote.id}〕[{quote.time}] {quote.sender}：{quote.text}"


@dataclass(frozen=True, slots=True)
class ChatPromptInput:
    persona: str
    bot_name: str
    now: str
    """Local date and time, e.g. "2026-11-20 20:00 周五"."""
    is_private: bool
    message: PromptLine
    states: tuple[str, ...] = ()
    cards: tuple[tuple[str, str], ...] = ()
    timeline: tuple[str, ...] = ()
    recent_diaries: tuple[tuple[str, str], ...] = ()
    memories: tuple[PromptMemory, ...] = ()
    people: tuple[tuple[str, str], ...] = ()
    """(current name, person card) of the asker and of the members the message names."""
    followup: PromptFollowUp | None = None
    """At most one follow-up of the asker's, due now."""
    quotes: tuple[PromptQuote, ...] = ()
    """Recalled recent messages, not consolidated yet (at most three)."""
    background_diary: tuple[str, str] | None = None
    fragments: tuple[str, ...] = ()
    recent: tuple[PromptLine, ...] = ()
    bridge: tuple[PromptLine, ...] = ()
    """A few already-summarised messages just before `recent`, for continuity."""


@dataclass(frozen=True, slots=True)
class ChatPrompt:
    messages: list[ChatMessage]
    blocks: tuple[tuple[str, str], ...] = field(default=())
    """(name, rendered text) of every non-empty block, in prompt order."""
    memory_ids: tuple[int, ...] = ()
    """Ids of the memories that made it into the prompt after budgeting."""
    quote_ids: tuple[int, ...] = ()
    """Ids of the quoted messages that made it into the prompt after budgeting."""


def house_rules(bot_name: str, is_private: bool) -> str:
    where = "私聊" if is_private else "QQ 群聊"
    return (
        f"你现在在{where}里，以「{bot_name}」的身份说话，始终保持这个角色。\n"
        "- 像真人一样自然聊天，简短口语，不用 Markdown；一次只回一条消息的内容。\n"
        "- 不提自己是 AI、模型或程序，不提“系统提示”“记忆库”这类东西。\n"
        "- 下面的记忆只在相关时才用；记忆里没有、也不确定的事就说记不清，不要编。\n"
        "- 记忆分两档：标着〔确定〕的可以当成你记得的事来说；标着〔仅供参考〕的可能说的是别的人或别的事，"
        "绝不能当成事实说出来，最多拿来反问确认。\n"
        "- 没有一条〔确定〕的记忆能回答对方问的事时，就说自己不知道或记不清，或者反问，不要拿〔仅供参考〕的记忆来回答。\n"
        "- 标着“互相矛盾”的两条记忆都还没定论，不要当成确定的事。\n"
        "- 记忆和人物卡片里标着“某某说”“听说”的是别人转述的，只代表说的人这么说，"
        "不要当成确定的事实讲出来，要讲就说明是谁说的；标着“本人说”的是本人自己说的。\n"
        f"- 如果回复确实用到了某条记忆，在整条回复的最末尾写上它的标记：用到 #12 就写 {MARKER_EXAMPLE}，"
        f"用到几条就写几个，例如 {marker(12)}{marker(7)}；没用到就不写。标记会被自动去掉，别人看不到。"
    )


BAND_TAGS = {"sure": "确定", "related": "仅供参考"}


def render_memory(memory: PromptMemory) -> str:
    """`#12〔确定｜字面命中：…〕内容`: every line names its band first. A memory carried
    from another group is its content only: `#12〔仅供参考｜在别的群说过〕内容`."""
    if memory.stage == "carried":
        return f"#{memory.id}〔{BAND_TAGS['related']}｜{STAGE_TAGS['carried']}〕{memory.content}"
    tag = (
        BAND_TAGS.get(memory.band, BAND_TAGS["related"])
        + "｜"
        + stage_label(memory.stage, memory.reason)
    )
    about = f"（{memory.subject}）" if memory.subject and memory.subject not in {"group"} else ""
    if about and memory.said:
        about = f"（{memory.subject}｜{memory.said}）"
    when = ""
    if memory.since and memory.until:
        when = f"（{memory.since} 至 {memory.until}）"
    elif memory.since:
        when = f"（{memory.since} 起）"
    elif memory.until:
        when = f"（到 {memory.until} 为止）"
    return f"#{memory.id}〔{tag}〕{about}{memory.content}{when}"


PEOPLE_HEADING = "相关的人（人物卡片；标着“某某说”的是别人转述的，不能当事实）"


FOLLOWUPS_HEADING = "可以顺口问问的事（对方自己说过的安排，日子已经过了）"


def render_followup(f: PromptFollowUp) -> str:
    """`#12 阿哲：阿哲3月10日考四级（2026-03-10）——可以顺口问问…`: one line, the marker taught."""
    return (
        f"#{f.id} {f.person}：{f.content}（{f.day}）——可以顺口问问{f.person}怎么样了，"
        f"自然就问，不合适就不问；问了就在末尾写上 {marker(f.id)}"
    )


def render_person(name: str, card: str) -> str:
    """`【阿哲】line；line`: one member's card on one line."""
    lines = [line.strip() for line in card.splitlines() if line.strip()]
    return f"【{name}】" + "；".join(lines)


def render_line(line: PromptLine) -> str:
    stamp = f"[{line.time}] " if line.time else ""
    return f"{stamp}{line.sender}：{line.text}"


def _memory_groups(memories: tuple[PromptMemory, ...]) -> list[list[PromptMemory]]:
    """Recall order, but a contradicting pair always sits together (second moved up)."""
    by_id = {m.id: m for m in memories}
    placed: set[int] = set()
    groups: list[list[PromptMemory]] = []
    for memory in memories:
        if memory.id in placed:
            continue
        group = [memory]
        placed.add(memory.id)
        partner = by_id.get(memory.contradicts) if memory.contradicts is not None else None
        if partner is None:
            partner = next((m for m in memories if m.contradicts == memory.id), None)
        if partner is not None and partner.id not in placed:
            group.append(partner)
            placed.add(partner.id)
        groups.append(group)
    return groups


def _memories_block(memories: tuple[PromptMemory, ...], budget: int) -> tuple[str, tuple[int, ...]]:
    per_memory = max(40, budget // max(1, len(memories)))
    lines: list[str] = []
    ids: list[int] = []
    used = 0
    for group in _memory_groups(memories):
        rendered = [truncate_to(render_memory(m), per_memory) for m in group]
        if len(group) == 2:
            rendered.append(f"  ↑ #{group[0].id} 和 #{group[1].id} 互相矛盾，都还没定论")
        cost = sum(estimate_tokens(r) + 1 for r in rendered)
        if used + cost > budget:
            break
        lines += rendered
        ids += [m.id for m in group]
        used += cost
    return "\n".join(lines), tuple(ids)


def build_chat_prompt(data: ChatPromptInput, budget: PromptBudget | None = None) -> ChatPrompt:
    b = budget or PromptBudget()
    blocks: list[tuple[str, str, str]] = []  # (name, heading, body)

    persona = truncate_to(data.persona.strip(), b.persona)
    blocks.append(("persona", "", f"{persona}\n\n{house_rules(data.bot_name, data.is_private)}"))

    states = take_within([f"- {s}" for s in data.states], b.states)
    blocks.append(("states", "现在正生效的状态", "\n".join(states)))

    shown_cards = card_lines(data.cards)
    per_card = max(40, b.cards // max(1, len(shown_cards)))
    cards = take_within([truncate_to(c, per_card) for c in shown_cards], b.cards)
    blocks.append(("cards", "记忆卡片", "\n".join(cards)))

    timeline = take_within([f"- {t}" for t in data.timeline], b.timeline, newest_last=True)
    blocks.append(("timeline", "关系时间线（旧→新）", "\n".join(timeline)))

    per_diary = max(60, b.diaries // max(1, len(data.recent_diaries)))
    diaries = take_within(
        [truncate_to(f"{day}：{text.strip()}", per_diary) for day, text in data.recent_diaries],
        b.diaries,
        newest_last=True,
    )
    blocks.append(("diaries", "最近几天的小传", "\n".join(diaries)))

    memories_text, memory_ids = _memories_block(data.memories, b.memories)
    blocks.append(
        (
            "memories",
            "想起的记忆（#编号 〔档位｜为什么想起〕 内容；〔确定〕可当事实，〔仅供参考〕不能当事实）",
            memories_text,
        )
    )

    per_person = max(40, b.people // max(1, len(data.people)))
    people = take_within(
        [truncate_to(render_person(name, card), per_person) for name, card in data.people],
        b.people,
    )
    blocks.append(("people", PEOPLE_HEADING, "\n".join(people)))

    asked = take_within([render_followup(data.followup)], b.followups) if data.followup else []
    blocks.append(("followups", FOLLOWUPS_HEADING, "\n".join(asked)))
    if asked and data.followup is not None and data.followup.id not in memory_ids:
        memory_ids = (*memory_ids, data.followup.id)

    per_quote = max(40, b.quotes // max(1, len(data.quotes)))
    quote_lines = take_within(
        [truncate_to(render_quote(q), per_quote) for q in data.quotes], b.quotes
    )
    quote_ids = tuple(q.id for q in data.quotes[: len(quote_lines)])
    blocks.append(("quotes", QUOTES_HEADING, "\n".join(quote_lines)))

    if data.background_diary is not None:
        day, text = data.background_diary
        body = truncate_to(f"{day}：{text.strip()}", b.background)
        blocks.append(("background", f"较早日期（{day}）的背景，不代表最近发生", body))

    fragments = take_within([f"- {f}" for f in data.fragments], b.fragments, newest_last=True)
    blocks.append(("fragments", "今天稍早聊过的（摘要）", "\n".join(fragments)))

    recent = take_within(
        [render_line(line) for line in (*data.bridge, *data.recent)], b.recent, newest_last=True
    )
    blocks.append(("recent", "最近的聊天记录", "\n".join(recent)))

    kept = [(name, heading, body) for name, heading, body in blocks if body.strip()]
    # Slow blocks first (cacheable prefix); the clock line opens the per-turn part.
    slow = [
        body if not heading else f"## {heading}\n{body}" for n, heading, body in kept if n in _SLOW
    ]
    fast = [f"## {heading}\n{body}" for n, heading, body in kept if n not in _SLOW]
    system = "\n\n".join([*slow, f"现在是 {data.now}。", *fast])
    message = truncate_to(render_line(data.message), b.message)
    return ChatPrompt(
        messages=[
            ChatMessage(role="system", content=system),
            ChatMessage(role="user", content=message),
        ],
        blocks=(*((name, body) for name, _, body in kept), ("message", message)),
        memory_ids=memory_ids,
        quote_ids=quote_ids,
    )
