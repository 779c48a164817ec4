"""What a question asks for, as terms (pure): its exact-word tokens, which of them
are names, numbers or question frame, and the lexicon words it uses."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from .answer_type import Asked, Wants, asked
from .lexicon import FUNCTION_CHARS, is_stop, is_word, lexicon
from .tokenize import NUMERAL_CHARS, bigram_tokens, is_cjk, is_numeric, normalise
from .visibility import is_retrospective

NOTHING_ASKED = Asked(Wants.ANY)


@dataclass(frozen=True, slots=True)
class Query:
    text: str
    terms: frozenset[str]
    """Exact-word tokens of the question minus its question frame, plus alias names."""
    names: frozenset[str]
    """Tokens that are person/bot names (member names count almost nothing)."""
    lexicon_words: tuple[str, ...]
    """Synonym-table words found in the question (longest match first)."""
    retrospective: bool
    wants: Asked = NOTHING_ASKED
    """The kind of answer asked for (a number, a date, a name...)."""
    persons: tuple[frozenset[str], ...] = ()
    """Name groups (a member with all their aliases) the question mentions."""
    slots: frozenset[str] = frozenset()
    """Words that name the kind of answer ("什么牌子", "哪道菜", "怎么称呼"): a memory
    states the brand or the dish, not the word, so missing them says nothing."""
    picks: frozenset[str] = frozenset()
    """Slots asking which one ("哪家公司", "什么牌子"): the answer names the company or
    the brand, so a memory that merely uses the word ("被公司派到") has not answered
    and one that lacks it may have ("在网易上班"). They count for a match only where
    the memory names which one ("小设计公司"), never against. "什么样的公司" asks
    for a kind and is not one of these."""

    singles: frozenset[str] = frozenset()
    """Characters that are a word by themselves here ("住" in "现在住哪边", "抽" in
    "还抽不抽"): no character pair around them is a word, so the pairs say nothing
    and the character is matched on its own."""

    def mentions_person(self, subject: str, content: str) -> bool:
        """True when no member is named, or the memory is about/mentions one of them."""
        if not self.persons:
            return True
        text = normalise(content)
        subject = normalise(subject)
        return any(
            subject in group or any(name in text for name in group) for group in self.persons
        )

    def is_content(self, token: str) -> bool:
        return token not in self.names and not is_numeric(token)


def analyse(
    text: str,
    *,
    names: Iterable[str] = (),
    alias_names: Iterable[str] = (),
    groups: Iterable[frozenset[str]] = (),
) -> Query:
    """`names`: every known name of this chat (subjects, aliases, the bot's nicknames);
    `alias_names`: the names of alias groups the question mentions (all are added);
    `groups`: the chat's members, each as the set of their names."""
    name_tokens = {t for name in names for t in bigram_tokens(name)}
    extra = {t for name in alias_names for t in bigram_tokens(name)}
    name_tokens |= extra
    straddling = name_straddling(text, [*names, *alias_names])
    unnamed = _without(text, [*names, *alias_names])
    singles = one_char_words(unnamed)
    terms = {t for t in bigram_tokens(text) if not is_stop(t) and t not in straddling}
    terms |= extra | singles
    words = tuple(
        w for w in lexicon().words_in(unnamed) if not all(is_stop(t) for t in bigram_tokens(w))
    )
    return Query(
        text=normalise(text),
        terms=frozenset(terms),
        names=frozenset(name_tokens & terms),
        lexicon_words=words,
        retrospective=is_retrospective(text),
        persons=mentioned_groups(text, groups),
        wants=asked(text),
        slots=answer_slots(text),
        picks=picked_slots(text),
        singles=singles,
    )


_GRAMMAR = FUNCTION_CHARS | frozenset(
    "在有去来到给让把被跟和与对从向也都就还又很太不没别个只要会能想这那我你他她它着过"
)
"""Particles, prepositions, adverbs, pronouns, classifiers: the glue around words."""


def one_char_words(text: str) -> frozenset[str]:
    """Chinese characters standing alone between grammatical ones (or the text's
    edge): "住" in "刘哥现在住哪边", "抽" in "还抽不抽". The pairs around them are
    no words, so the character itself is what the question says."""
    norm = f" {normalise(text)} "
    out: set[str] = set()
    for i in range(1, len(norm) - 1):
        char = norm[i]
        if not is_cjk(char) or char in _GRAMMAR or char in NUMERAL_CHARS:
            continue
        if not all(not is_cjk(c) or c in _GRAMMAR for c in (norm[i - 1], norm[i + 1])):
            continue
        if not any(is_word(pair) for pair in (norm[i - 1 : i + 1], norm[i : i + 2])):
            out.add(char)
    return frozenset(out)


def _without(text: str, names: Iterable[str]) -> str:
    """The text with member names blanked out: the 猫 of "猫姐" is no synonym of 喵."""
    out = normalise(text)
    for name in sorted({normalise(n) for n in names if len(n) >= 2}, key=len, reverse=True):
        out = out.replace(name, " ")
    return out


_SLOT_BEFORE = re.compile(
    r"(?:什么样的?|什么|啥样的?|啥|哪一?|怎么|这个|那个|这种|那种|这家|那家|几)"
)


def answer_slots(text: str) -> frozenset[str]:
    """The character pair right after a question word or a demonstrative, or after
    it and one classifier: the word that names what is asked for ("什么牌子" ->
    牌子, "哪家公司" -> 公司, "哪道菜" -> 道菜)."""
    norm = normalise(text)
    out: set[str] = set()
    for found in _SLOT_BEFORE.finditer(norm):
        for start in (found.end(), found.end() + 1):
            pair = norm[start : start + 2]
            if len(pair) == 2 and all(is_cjk(c) for c in pair):
                out.add(pair)
    return frozenset(out)


_PICK = re.compile(r"(?:哪一?|什么|啥)(?!样)([家个种款位道所座条只件部本张台辆间类门])?")


def picked_slots(text: str) -> frozenset[str]:
    """The word after "哪 + classifier" or "什么/啥 (+ classifier)": "哪家公司" ->
    公司, "什么牌子" -> 牌子; not "在哪上班" (where, not which)."""
    norm = normalise(text)
    out: set[str] = set()
    for found in _PICK.finditer(norm):
        if found.group(0).startswith("哪") and found.group(1) is None:
            continue
        pair = norm[found.end() : found.end() + 2]
        if len(pair) == 2 and all(is_cjk(c) for c in pair):
            out.add(pair)
    return frozenset(out)


_IDENTITY = re.compile(
    r"(?:话说|请问|你知道)?(?:是)?(?:谁|干啥的|干嘛的|干吗的|干什么的|做什么的|做啥的"
    r"|什么人|啥人|哪位|什么来头|啥来头)(?:啊|呀|呢|来着|吗)*"
)
_NOISE = re.compile(r"[\s\W_]+")


def identity_question(text: str, names: Iterable[str]) -> bool:
    """ "X是谁", "X是干啥的": the question is only a name and who-is-that. It is
    answered by what the chat says X *is* ("喵姐是群主..."), not by words."""
    rest = normalise(text)
    named = False
    for name in sorted({normalise(n) for n in names if n}, key=len, reverse=True):
        named = named or name in rest
        rest = rest.replace(name, " ")
    rest = _NOISE.sub("", rest)
    return named and _IDENTITY.fullmatch(rest) is not None


def name_straddling(text: str, names: Iterable[str]) -> set[str]:
    """Character pairs that start inside a name and end outside it, or the reverse
    ("王家" in "老王家大黄"): they belong to no word of the question."""
    norm = normalise(text)
    inside = [False] * len(norm)
    starts: set[int] = set()
    ends: set[int] = set()
    for name in {normalise(n) for n in names if len(n) >= 2}:
        start = norm.find(name)
        while start >= 0:
            for i in range(start, start + len(name)):
                inside[i] = True
            starts.add(start)
            ends.add(start + len(name) - 1)
            start = norm.find(name, start + 1)
    out: set[str] = set()
    for i in range(len(norm) - 1):
        if (i in ends and not (inside[i + 1] and i + 1 in starts)) or (
            i + 1 in starts and not inside[i]
        ):
            pair = norm[i : i + 2]
            if pair not in {normalise(n) for n in names}:
                out.add(pair)
    return out


def mentioned_groups(text: str, groups: Iterable[frozenset[str]]) -> tuple[frozenset[str], ...]:
    """The member groups the text names: a CJK name as a substring, a latin one as a word."""
    norm = normalise(text)
    words = set(bigram_tokens(norm))
    found: list[frozenset[str]] = []
    for group in groups:
        for name in group:
            if len(name) < 2:
                continue
            latin = name.isascii()
            if (latin and set(bigram_tokens(name)) <= words) or (not latin and name in norm):
                found.append(group)
                break
    return tuple(found)
