"""The nightly pipeline's prompts, each a pure function beside the reply it expects.

Every prompt asks for one JSON object; `memory_core.nightly.asking` validates the
reply against the paired pydantic model and retries (cooler each time) when it does
not fit. The texts are pinned by snapshot tests: change them on purpose only.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from memory_core.llm.base import ChatMessage
from memory_core.types import CardKind as CardKind

CARD_LABELS: dict[str, str] = {
    "preferences": "偏好",
    "interaction_patterns": "相处模式",
    "recent_status": "近况",
    "goals": "目标",
    "relationships": "关系",
    "key_events": "关键事件",
    "interaction_rules": "相处规则",
}
DISPLACING_KINDS = ("recent_status", "preferences")
"""Cards whose replaced lines live on as past-tense `state` memories."""

T = TypeVar("T", bound=BaseModel)


@dataclass(frozen=True, slots=True)
class Prompt(Generic[T]):
    messages: tuple[ChatMessage, ...]
    response: type[T]

    def render(self) -> str:
        """The whole prompt as text (snapshot tests pin this)."""
        return "\n\n".join(f"[{m.role}]\n{m.content}" for m in self.messages)


class _Reply(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True, str_strip_whitespace=True)


# --- inputs --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class StateLine:
    id: int
    subject: str
    content: str
    until: str
    """The deadline as a local date, `YYYY-MM-DD`, or empty when open-ended."""


@dataclass(frozen=True, slots=True)
class FragmentLine:
    id: int
    when: str
    """Local time range, e.g. `11-20 21:03–21:40`."""
    summary: str


@dataclass(frozen=True, slots=True)
class CardText:
    kind: str
    content: str


def _prompt(bot_name: str, task: str, user: str, response: type[T]) -> Prompt[T]:
    """The shared system message (who is asking, `task`, JSON only) and the user turn."""
    system = (
        f"你是群聊机器人「{bot_name}」的记忆整理员，在深夜替它整理当天的记忆。"
        "你不和任何人聊天，也不扮演角色；只做整理，不编造材料里没有的内容。\n"
        f"{task}\n"
        "只输出一个 JSON 对象，不要代码块，不要任何解释。"
    )
    return Prompt(
        (ChatMessage(role="system", content=system), ChatMessage(role="user", content=user)),
        response,
    )


def _states_block(states: Sequence[StateLine]) -> str:
    return "\n".join(
        f"[状态 {s.id}] 对象：{s.subject}；截止：{s.until or '未定'}；内容：{s.content}"
        for s in states
    )


def _bullets(items: Sequence[str]) -> str:
    return "\n".join(f"- {i}" for i in items) if items else "（无）"


def _fragments_block(fragments: Sequence[FragmentLine]) -> str:
    return "\n".join(f"[碎片 {f.id}] {f.when}：{f.summary}" for f in fragments)


def _cards_block(cards: Sequence[CardText]) -> str:
    parts: list[str] = []
    for card in cards:
        body = card.content.strip() or "（空）"
        parts.append(f"## {card.kind}（{CARD_LABELS.get(card.kind, card.kind)}）\n{body}")
    return "\n\n".join(parts)


# --- step 1: settle --------------------------------------------------------------------


class SettleRewrite(_Reply):
    id: int
    past_tense: str = Field(min_length=1, max_length=500)


class SettleReply(_Reply):
    rewrites: list[SettleRewrite]


def settle_prompt(states: Sequence[StateLine], *, day: str, bot_name: str) -> Prompt[SettleReply]:
    task = (
        "下面这些「时效状态」已经过了截止日期，今晚要下线。"
        "把每一条改写成过去时的一句话：保留人物、事情和数字，写明它当时是什么状态，"
        "不要添加原文没有的结局。"
    )
    user = (
        f"日期：{day}\n\n{_states_block(states)}\n\n"
        '输出格式：{"rewrites": [{"id": 状态编号, "past_tense": "过去时的描述"}]}\n'
        "每个状态恰好一条，编号必须来自上面的列表。"
    )
    return _prompt(bot_name, task, user, SettleReply)


# --- step 2: diary ------------------------------------------------------------------------


class DiaryReply(_Reply):
    diary: str = Field(min_length=1, max_length=4000)


def diary_prompt(
    fragments: Sequence[FragmentLine],
    settled: Sequence[str],
    *,
    day: str,
    scope_label: str,
    bot_name: str,
) -> Prompt[DiaryReply]:
    task = (
        "根据当天的碎片摘要写一篇《今日小传》：按时间顺序，写清谁、做了什么、说了什么、"
        "大家的反应，保留具体的名字、数字和约定。三到八句话，不抒情，不评价，"
        "材料里没有的不要写。"
    )
    user = (
        f"聊天：{scope_label}\n日期：{day}\n\n"
        f"当天的碎片摘要：\n{_fragments_block(fragments)}\n\n"
        f"今晚下线的时效状态（已改写为过去时）：\n{_bullets(settled)}\n\n"
        '输出格式：{"diary": "今日小传正文"}'
    )
    return _prompt(bot_name, task, user, DiaryReply)


# --- step 3: cards ---------------------------------------------------------------------------


class CardChange(_Reply):
    kind: CardKind
    action: Literal["add", "change", "conflict"]
    text: str = Field(min_length=1, max_length=300)
    replaces: str | None = None
    """For change/conflict: the exact existing line it replaces."""
    old_past_tense: str | None = None
    """For change/conflict on recent_status/preferences: the replaced line, in past tense."""


class CardsReply(_Reply):
    changes: list[CardChange] = Field(default_factory=list[CardChange])
    timeline: str | None = None
    """One line for the relationship timeline when the day was notable, else null."""


def cards_prompt(
    cards: Sequence[CardText], diary: str, *, day: str, bot_name: str
) -> Prompt[CardsReply]:
    task = (
        "维护这个聊天的七张记忆卡片。你会看到全部现有卡片和今天的小传。"
        "只提取新的、变化了的、或和旧认知冲突的内容；卡片里已经有的，一条都不要重复。"
        "每张卡片是若干行，每行一条。\n"
        "- add：新增一行。\n"
        "- change：某一行的内容变了；replaces 填被替换的那一行原文（一字不差）。\n"
        "- conflict：今天的事和某一行矛盾；replaces 同上。\n"
        "recent_status（近况）和 preferences（偏好）的 change/conflict 还要填 old_past_tense："
        "把被替换的那一行改写成过去时，例如“以前喜欢清淡口味”。\n"
        "如果今天对这段关系来说值得记一笔（第一次、约定、冲突、和好、重要变化），"
        "timeline 写一句话；普通的一天填 null。"
    )
    user = (
        f"日期：{day}\n\n现有卡片：\n{_cards_block(cards)}\n\n今日小传：\n{diary}\n\n"
        '输出格式：{"changes": [{"kind": "卡片名", "action": "add|change|conflict", '
        '"text": "新的一行", "replaces": "被替换的原行或 null", '
        '"old_past_tense": "过去时或 null"}], "timeline": "一句话或 null"}\n'
        '没有变化时输出 {"changes": [], "timeline": null}。'
    )
    return _prompt(bot_name, task, user, CardsReply)


# --- step 3.5: states the diary changes -----------------------------------------------------


class StateChange(_Reply):
    action: Literal["resolved", "extended", "new"]
    id: int | None = None
    """The state changed (resolved/extended); null for a new one."""
    quote: str = Field(min_length=2, max_length=300)
    """The words of the diary that say so, copied exactly."""
    content: str = Field(min_length=1, max_length=300)
    """resolved: the state in past tense; extended/new: the state as it now stands."""
    subject: str = "group"
    until: str | None = None
    """extended/new: the new deadline as `YYYY-MM-DD`; null when the diary names none."""


class StatesReply(_Reply):
    changes: list[StateChange] = Field(default_factory=list[StateChange])


def states_prompt(
    states: Sequence[StateLine], diary: str, *, day: str, bot_name: str
) -> Prompt[StatesReply]:
    task = (
        "根据今日小传调整「时效状态」（有截止日期的短期状态）。只在小传里明确写到时才动手，"
        "不许推测：\n"
        "- resolved：小传明确说某个状态提前结束了；content 写成过去时。\n"
        "- extended：小传明确说某个状态延期了；until 填新的截止日期。\n"
        "- new：小传明确提到一个新的、有期限的短期状态；until 填截止日期（没说就填 null）。\n"
        "每条都要在 quote 里一字不差地抄出小传中说明这件事的原话。"
    )
    lines = _states_block(states) or "（无）"
    user = (
        f"日期：{day}\n\n现有的时效状态：\n{lines}\n\n今日小传：\n{diary}\n\n"
        '输出格式：{"changes": [{"action": "resolved|extended|new", "id": 状态编号或 null, '
        '"quote": "小传原话", "content": "内容", "subject": "人名或 group", '
        '"until": "YYYY-MM-DD 或 null"}]}\n'
        '没有需要调整的就输出 {"changes": []}。'
    )
    return _prompt(bot_name, task, user, StatesReply)


# --- step 4: events ------------------------------------------------------------------------


class EventItem(_Reply):
    subject: str = Field(min_length=1, max_length=64)
    content: str = Field(min_length=1, max_length=500)
    importance: float = Field(default=0.5, ge=0.0, le=1.0)
    fragment_ids: list[int] = Field(min_length=1)


class EventsReply(_Reply):
    events: list[EventItem] = Field(default_factory=list[EventItem])


def events_prompt(
    fragments: Sequence[FragmentLine],
    known: Sequence[str],
    *,
    day: str,
    bot_name: str,
) -> Prompt[EventsReply]:
    task = (
        "从当天的碎片摘要里提取值得长期记住的独立事件：具体的人、具体的事、具体的反应。"
        "一件事一条，写成完整的一句话，带上日期；闲聊、寒暄和已经记过的事不要提取。"
        "每条必须在 fragment_ids 里列出它来自哪些碎片。"
    )
    user = (
        f"日期：{day}\n\n当天的碎片摘要：\n{_fragments_block(fragments)}\n\n"
        f"已经记下的长期事件（不要重复）：\n{_bullets(known)}\n\n"
        '输出格式：{"events": [{"subject": "主要人物或 group", "content": "事件", '
        '"importance": 0到1, "fragment_ids": [碎片编号]}]}\n'
        '没有值得记的就输出 {"events": []}。'
    )
    return _prompt(bot_name, task, user, EventsReply)
