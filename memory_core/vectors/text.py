"""What the vector side path embeds and how it reads a question: pure functions.

Names carry no meaning an embedding model can use (every memory of 小鹿 says 小鹿),
so they are matched symbolically and removed from the text before embedding: the
question's nicknames are first resolved through the chat's explicit aliases, the
named people pick the candidates, and the vectors compare what is said about them.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from memory_core.recall.lexicon import is_stop, is_word, lexicon
from memory_core.recall.query import picked_slots
from memory_core.recall.tokenize import bigram_tokens, is_cjk, normalise

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
    unheard: frozenset[str] = frozenset()
    """Particular things it asks about (`particular_things`) that this chat has never
    named, in these words or any synonym of them (filled in by the side path, which
    reads the chat's vocabulary)."""

    @property
    def has_subject(self) -> bool:
        return bool(self.subjects) or self.first_person


def question_shape(text: str, names: ScopeNames, *, private: bool) -> QuestionShape:
    return QuestionShape(
        has_intent=_QUESTION.search(text.strip()) is not None,
        subjects=mentioned_subjects(text, names),
        first_person=private and _FIRST_PERSON.search(text) is not None,
    )


_POSSESSIVE = frozenset("家的")
_POINTING = frozenset("这那哪某每")
"""A demonstrative ("老王家那只") points at a thing without naming it."""


def particular_things(text: str, names: ScopeNames) -> frozenset[str]:
    """The words a question uses to name one particular thing: what follows a
    person's name and 家/的 ("老王家大黄" -> 大黄, "阿杰的车" -> 车), and the noun of a
    which-one slot ("哪家公司" -> 公司, "啥角色" -> 角色: picking one X presupposes
    the chat knows some X).

    These are what the question is about; when the chat has never named them a
    vector "guess" about the person can only be about some other thing of theirs."""
    canonical = normalise(canonicalise(text, names))
    found: set[str] = set()
    for name in sorted({normalise(s) for s in names.subjects}, key=lambda n: (-len(n), n)):
        start = canonical.find(name)
        while start >= 0:
            after = start + len(name)
            if canonical[after : after + 1] in _POSSESSIVE:
                word = _word_at(canonical, after + 1)
                if word is not None:
                    found.add(word)
            start = canonical.find(name, after)
    found.update(w for w in picked_slots(canonical) if is_word(w) and not is_stop(w))
    return frozenset(found)


def _word_at(text: str, start: int) -> str | None:
    """The word starting at `start`: the longest synonym-table word (血染钟楼, 猫),
    else a two-character word; None for a demonstrative, a question-frame word or
    a pair of characters that is no word."""
    if start >= len(text) or text[start] in _POINTING or not is_cjk(text[start]):
        return None
    table = lexicon().expansions
    longest = min(lexicon().max_len, len(text) - start)
    for size in range(longest, 1, -1):
        if text[start : start + size] in table:
            return text[start : start + size]
    pair = text[start : start + 2]
    if len(pair) == 2 and is_cjk(pair[1]) and is_word(pair) and not is_stop(pair):
        return pair
    return text[start] if text[start] in table else None


def _ways_to_say(word: str) -> tuple[str, ...]:
    """The word and every word the synonym table lets stand for it."""
    return (word, *sorted(lexicon().expansions.get(word, ())))


def said_tokens(words: Iterable[str]) -> frozenset[str]:
    """The index tokens to look up to tell whether a chat ever named these words (or
    a synonym of them): bigrams, and the character itself for a one-character word."""
    return frozenset(t for w in words for way in _ways_to_say(w) for t in bigram_tokens(way))


def unheard(words: Iterable[str], heard: Collection[str]) -> frozenset[str]:
    """The words of which the chat (whose memories hold the tokens `heard`) never
    used the word itself nor any synonym: every token of it must have been heard."""

    def said(way: str) -> bool:
        tokens = bigram_tokens(way)
        return bool(tokens) and all(t in heard for t in tokens)

    return frozenset(w for w in words if not any(said(way) for way in _ways_to_say(w)))
