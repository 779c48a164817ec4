"""What the vector side path embeds and how it reads a question: pure functions.

Names carry no meaning an embedding model can use (every memory of 小鹿 says 小鹿),
so they are matched symbolically and removed from the text before embedding: the
question's nicknames are first resolved through the chat's explicit aliases, the
named people pick the candidates, and the vectors compare what is said about them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

SPECIAL_SUBJECTS = frozenset({"group", "bot"})

_FUNCTION_CHARS = frozenset(
    "的了吗呢吧啊呀嘛哦么是不在有没和跟与就都也还又很太最个这那哪什啥怎咋几多少谁"
    "我你他她它们家里上下过着得地把被给让对说要会能想去来到一"
)
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9/_.+-]*")
_DIGITS = re.compile(r"[0-9.]+")

_QUESTION = re.compile(
    r"[?？]|吗|呢|什么|啥|谁|哪|怎|咋|几|多少|多久|多大|为何|是否|如何"
    r"|是不是|有没有|能不能|会不会|要不要|可不可以|了没|没有?$|记得|还是"
    r"|干嘛|干吗|是.{1,2}是|告诉我|说说|讲讲|聊聊|推荐"
    r"|(.)[不没]\1"
)
_FIRST_PERSON = re.compile(r"我")


@dataclass(frozen=True, slots=True)
class ScopeNames:
    """The people (and other named subjects) of one chat, and its explicit aliases."""

    subjects: frozenset[str]
    aliases: Mapping[str, str]

    @property
    def all_names(self) -> tuple[str, ...]:
        """Longest first, so 豆豆妈 is removed before 豆豆."""
        names = set(self.subjects) | set(self.aliases) | set(self.aliases.values())
        return tuple(sorted(names - SPECIAL_SUBJECTS, key=lambda n: (-len(n), n)))


def scope_names(subjects: Iterable[str], aliases: Mapping[str, str]) -> ScopeNames:
    clean = frozenset(s.strip() for s in subjects if s.strip()) - SPECIAL_SUBJECTS
    return ScopeNames(subjects=clean, aliases=dict(aliases))


def canonicalise(text: str, names: ScopeNames) -> str:
    """Every alias replaced by its canonical name (longest alias first)."""
    for alias in sorted(names.aliases, key=lambda a: (-len(a), a)):
        text = text.replace(alias, names.aliases[alias])
    return text


def strip_names(text: str, names: ScopeNames, extra: Iterable[str] = ()) -> str:
    removed = text
    for name in (*names.all_names, *sorted(extra, key=lambda n: (-len(n), n))):
        if name:
            removed = removed.replace(name, " ")
    removed = " ".join(removed.split())
    return removed or text.strip()


def mentioned_subjects(text: str, names: ScopeNames) -> frozenset[str]:
    """The chat's subjects a text names, aliases resolved."""
    canonical = canonicalise(text, names)
    return frozenset(s for s in names.subjects if s in canonical)


def involves_all(subject: str, content: str, people: Iterable[str], names: ScopeNames) -> bool:
    """The memory (its subject or its text, aliases resolved) names every one of them."""
    text = f"{subject} {canonicalise(content, names)}"
    return all(person in text for person in people)


def memory_text(content: str, names: ScopeNames) -> str:
    """A memory's own text as embedded."""
    return strip_names(content, names)


EVIDENCE_VIEWS = 8
"""At most this many evidence messages describe a memory besides its own text."""
EVIDENCE_CHARS = 200


def memory_views(content: str, evidence: Sequence[str], names: ScopeNames) -> tuple[str, ...]:
    """What a memory's vector is made of: its text, then the messages it was heard in
    (the words people actually used, which questions tend to echo)."""
    heard = [strip_names(t[:EVIDENCE_CHARS], names) for t in evidence if t.strip()]
    return (memory_text(content, names), *heard[:EVIDENCE_VIEWS])


def question_text(text: str, names: ScopeNames, nicknames: Iterable[str] = ()) -> str:
    """The text embedded for a question: aliases resolved, names and the bot's
    nicknames removed, an @ mention dropped."""
    return strip_names(canonicalise(text, names).replace("@", " "), names, nicknames)


def content_terms(text: str, names: ScopeNames, nicknames: Iterable[str] = ()) -> frozenset[str]:
    """CJK character bigrams and latin words of a text, names removed, bigrams made
    only of function characters and bare numbers left out."""
    bare = strip_names(canonicalise(text, names), names, nicknames)
    terms: set[str] = set()
    for run in _CJK.findall(bare):
        for i in range(len(run) - 1):
            pair = run[i : i + 2]
            if not (pair[0] in _FUNCTION_CHARS and pair[1] in _FUNCTION_CHARS):
                terms.add(pair)
    for word in _WORD.findall(bare):
        if not _DIGITS.fullmatch(word):
            terms.add(word.lower())
    return frozenset(terms)


@dataclass(frozen=True, slots=True)
class QuestionShape:
    has_intent: bool
    """It asks something (a question word or particle, or a request to tell)."""
    subjects: frozenset[str]
    """The chat's subjects it names."""
    first_person: bool
    """It is about the asker ("我") in a private chat, where the asker is known."""

    @property
    def has_subject(self) -> bool:
        return bool(self.subjects) or self.first_person


def question_shape(text: str, names: ScopeNames, *, private: bool) -> QuestionShape:
    return QuestionShape(
        has_intent=_QUESTION.search(text.strip()) is not None,
        subjects=mentioned_subjects(text, names),
        first_person=private and _FIRST_PERSON.search(text) is not None,
    )
