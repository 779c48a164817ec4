"""What recall knows of the language itself, in one place (pure, loaded once).

Everything here is general knowledge of chat Chinese and English, kept as data files
beside this module, each stating its source in its header:

- data/question_frames.txt: words that shape a question but name nothing it is about
  (什么, 来着, 还记得, what, remember);
- data/function_chars.txt: characters that carry grammar, not content;
- data/asks.txt: question words by the kind of answer they ask for;
- data/yes_no.txt: how a question wanting a yes or a no is shaped (能去吗, 有没有,
  "is it");
- the cues below: words asking how things used to be, or whether they still are.

No rule here was written from an evaluation question; recall's relevance model learns
how much each signal matters from a training corpus of its own.
"""

from __future__ import annotations

import re
from functools import cache
from importlib import resources
from typing import Literal

AnswerKind = Literal["time", "number", "place", "name", "person", "which"]

RETROSPECTIVE_CUES = (
    "以前",
    "之前",
    "原来",
    "原先",
    "原本",
    "本来",
    "当时",
    "当初",
    "那时",
    "那会",
    "曾经",
    "过去",
    "从前",
    "先前",
    "早先",
    "起初",
    "最早",
    "最初",
    "一开始",
    "老早",
    "used to",
    "previously",
    "originally",
    "back then",
    "formerly",
    "in the past",
    "at first",
    "use to",
    "before",
    "back in",
    "former",
    "earlier",
)
"""Words that ask how things used to be, not how they are."""

STILL_CUES = (
    "还在",
    "还是",
    "仍然",
    "依然",
    "仍旧",
    "还住",
    "还用",
    "还有",
    "现在",
    "目前",
    "still",
    "now",
)
"""Words that ask whether an earlier state still holds: the version that replaced it
answers."""


def _cue_pattern(cues: tuple[str, ...]) -> re.Pattern[str]:
    """Chinese cues match anywhere; English ones only as whole words ("now" is not in
    "know")."""
    return re.compile(
        "|".join(rf"\b{re.escape(c)}\b" if c.isascii() else re.escape(c) for c in cues)
    )


_RETRO = _cue_pattern(RETROSPECTIVE_CUES)
_STILL = _cue_pattern(STILL_CUES)

_TIME_WORDS = re.compile(
    r"[0-9零〇一二三四五六七八九十两]+\s*[年月日号点]|周[一二三四五六日天末]|星期[一二三四五六日天]"
    r"|今天|昨天|前天|明天|后天|今年|去年|明年|前年|上周|下周|月初|月底|年初|年底|早上|晚上|中午|下午|上午|凌晨"
    r"|\b(?:19|20)\d\d\b|\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b"
    r"|\b(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|yesterday|today|tomorrow)s?\b"
    r"|\b\d{1,2}(?::\d\d)?\s*(?:am|pm)\b|\b\d{1,2}:\d\d\b|\b\d{1,2}(?:st|nd|rd|th)\b"
    r"|\b(?:tonight|weekend|weekends|morning|mornings|afternoon|afternoons|evening|evenings"
    r"|night|nights|noon|midnight|spring|summer|autumn|fall|winter|christmas|easter|daily"
    r"|weekly|monthly|yearly|annually|ago|since|until|till)\b"
    r"|\b(?:last|next|this|every|each|that)\s+(?:week|month|year|day|time)\b"
    r"|\b(?:\d+|a|an|one|two|three|four|five|six|seven|eight|nine|ten|few|several)\s+"
    r"(?:minutes?|hours?|days?|weeks?|months?|years?|decades?)\b"
)
_NUMBER = re.compile(
    r"\d|[零〇一二三四五六七八九十百千万两半][个只次岁年天斤块元公里分钟小时号楼层]|几[十百千万]"
    r"|\b(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen"
    r"|fifteen|sixteen|seventeen|eighteen|nineteen|twenty|thirty|forty|fifty|sixty|seventy"
    r"|eighty|ninety|hundred|hundreds|thousand|thousands|million|millions|dozen|dozens|half"
    r"|twice|once|single|double|first|second|third|fourth|fifth|couple|pair|both|none)\b"
)
_PLACE = re.compile(
    r"[\u4e00-\u9fff](?:市|省|区|县|镇|村|路|街|站|店|馆|园|楼|栋|小区|公司|学校|大学|医院|公园|商场|机场)"
    r"|在[\u4e00-\u9fff]{2}|去[\u4e00-\u9fff]{2}|住[\u4e00-\u9fff]{2}"
    r"|搬(?:家)?(?:到|去|进|回)了?[\u4e00-\u9fff]{2}"
    r"|\b(?:street|st|road|rd|avenue|ave|lane|drive|boulevard|square|city|town|village|county"
    r"|state|country|island|park|hotel|station|airport|school|university|college|campus"
    r"|hospital|clinic|office|house|home|apartment|flat|bar|pub|restaurant|cafe|caf\u00e9|club"
    r"|gym|beach|lake|river|mountain|church|centre|center|market|mall|shop|store|studio"
    r"|library|museum|stadium|abroad|downtown|overseas|nearby|north|south|east|west)\b"
)
_NAME_STATED = re.compile(
    r"叫(?!做|作|来|去|醒|了|我|他|她|你)|名叫|名字|名为|名称|取名|起名|称为|[《「『“\"]|\b(?:named|called|name is|name's)\b"
)
"""A text that states what someone or something is called: 叫年糕, 名叫, a title in
《》 or quotes, "named", "called" (叫 as "to call out / wake / order" is not a name)."""
_NAME_AS_SUBJECT = re.compile(
    r"^(?P<name>[\u4e00-\u9fff]{2,4})是"
    r"(?:[^，。,.！!？?；;]{0,12}的[\u4e00-\u9fff]{1,5}|一[只个条位名头匹][^，。,.！!？?；;]{1,8})$"
    r"|^(?P<latin>[A-Z][a-z]+) (?:is|was) (?:a|an|the|our|my|his|her|their|[A-Z][a-z]+'s) "
)
"""A name standing as the subject of what it names: "煤球是小林养的猫", "小周是我们组新来
的实习生", "煤球是一只黑猫", "Biscuit is our dog" say what someone or something is called as much as
叫X does. Read on the text as written (the English name is capitalised); a pronoun, a
time or a place word in the name's seat is not a name (`_NOT_NAMES`)."""
_PLACE_NAMED = re.compile(r"\b(?:in|at|from|to|near|into|around|outside|inside)\s+(?:the\s+)?[A-Z]")
"""English names a place with a capitalised name after a preposition ("in Denver");
read on the text as written, before lower-casing."""


def _lines(name: str) -> list[str]:
    text = resources.files("memory_core.recall").joinpath("data", name).read_text(encoding="utf-8")
    return [line for line in text.splitlines() if line.strip() and not line.startswith("#")]


@cache
def function_chars() -> frozenset[str]:
    return frozenset("".join("".join(line.split()) for line in _lines("function_chars.txt")))


@cache
def frame_words() -> tuple[str, ...]:
    """Question-frame words, longest first (so 怎么样 is removed before 怎么)."""
    words = {w for line in _lines("question_frames.txt") for w in line.split()}
    return tuple(sorted(words, key=lambda w: (-len(w), w)))


@cache
def _asks() -> tuple[tuple[AnswerKind, tuple[str, ...]], ...]:
    out: list[tuple[AnswerKind, tuple[str, ...]]] = []
    for line in _lines("asks.txt"):
        kind, _, words = line.partition(":")
        spelled = tuple(w.replace("-", " ") for w in words.split())
        out.append((kind.strip(), spelled))  # type: ignore[arg-type]
    return tuple(out)


def asks(text: str) -> AnswerKind | None:
    """The kind of answer a (normalised) question asks for, if its words say."""
    for kind, words in _asks():
        if any(_has_word(text, w) for w in words):
            return kind
    return None


@cache
def _yes_no() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    """(clause-final particle, A-not-A, auxiliary-first clause) patterns."""
    lists: dict[str, list[str]] = {}
    for line in _lines("yes_no.txt"):
        key, _, words = line.partition(":")
        lists[key.strip()] = words.split()
    particles = "|".join(map(re.escape, sorted(lists["particles"], key=len, reverse=True)))
    negators = "".join(map(re.escape, lists["negators"]))
    auxiliaries = "|".join(map(re.escape, lists["auxiliaries"]))
    return (
        # A particle closing a clause that says something (not a lone 吗).
        re.compile(rf"[\u4e00-\u9fff]{{2}}(?:{particles})(?=$|[\s,.!?，。！？~～])"),
        re.compile(rf"([\u4e00-\u9fff])[{negators}]\1"),
        re.compile(rf"(?:^|[,.!?;，。！？]\s*)(?:{auxiliaries})\s+\w+"),
    )


def asks_yes_no(text: str) -> bool:
    """A (normalised) text is shaped as a question wanting a yes or a no: a clause
    ending in a question particle (能劝酒吗), an A-not-A verb (有没有), or an English
    clause opening with an auxiliary ("can we bring pets")."""
    return any(p.search(text) is not None for p in _yes_no())


def _has_word(text: str, word: str) -> bool:
    if word.isascii():
        return re.search(rf"\b{re.escape(word)}\b", text) is not None
    return word in text


def states(text: str, kind: AnswerKind, written: str = "") -> bool:
    """Whether a (normalised) memory text states an answer of this kind; `written` is
    the same text before normalising (English capitalises the names of places)."""
    if kind == "time":
        return _TIME_WORDS.search(text) is not None
    if kind == "number":
        return _NUMBER.search(text) is not None
    if kind == "place":
        return _PLACE.search(text) is not None or _PLACE_NAMED.search(written) is not None
    if kind == "name":
        return _NAME_STATED.search(text) is not None or names_as_subject(written)
    return True  # a person or a particular thing: any statement may name one


def is_time(term: str) -> bool:
    """`term` is a time word and nothing else ("周五", "明天", "tonight")."""
    return _TIME_WORDS.fullmatch(term) is not None


def names_as_subject(written: str) -> bool:
    """A text opens with a name that its clause says what it is (`_NAME_AS_SUBJECT`)."""
    found = _NAME_AS_SUBJECT.match(written.strip())
    if found is None:
        return False
    if found["latin"]:
        return found["latin"].lower() not in _NOT_NAMES_LATIN
    name = found["name"]
    grammar = function_chars()
    return not (name[0] in grammar or _TIME_WORDS.search(name) is not None or _PLACE.search(name))


_NOT_NAMES_LATIN = frozenset({"this", "that", "it", "there", "here", "today", "tomorrow"})


THIRD_PERSON = r"(?<!其)[他她它](?!人|乡|妈)|\b(?:he|she|him|her|his|hers|they|them|their)\b"
"""A third-person pronoun pointing at someone said before (其他 "other", 他人 "others"
and the expletive 他妈 point nowhere); English "it" is left to the caller."""

_FIRST_PERSON = re.compile(
    r"我(?!们)|俺(?!们)|本人|(?:^|(?<=[\s,.!?，。！？~～]))人家(?!的)"
    r"|\b(?:i|me|my|mine|myself|i'm|i've|i'd)\b"
)
_SELF_FRAME = re.compile(
    r"(?:想问问?|想知道|问问?|问一下|记得|记不得|记不清|忘了|觉得|猜|听说|知道|说过|考考)"
)
"""A first person followed by these asks, remembers or says: "我想问", "我记得" frame
a question about anything; "我生日", "我的猫", "我下周" are about the speaker."""


def speaks_of_self(text: str) -> bool:
    """Whether a (normalised) wake speaks of its sender: a first person (我, 我的, 俺,
    本人, 人家 opening a clause, I/me/my) that is not only the frame of a question
    ("我想问", "我记得")."""
    for found in _FIRST_PERSON.finditer(text):
        if found.group().isascii():
            return True
        if _SELF_FRAME.match(text, found.end()) is None:
            return True
    return False


def mark_self(text: str, by: str) -> str:
    """`text` with each first person replaced by `by` (what the embedding model reads)."""
    return _FIRST_PERSON.sub(lambda _: by, text)


@cache
def _kin() -> tuple[tuple[str, ...], ...]:
    """The families of kin.txt, each word of a family spelled as text writes it."""
    return tuple(
        tuple(w.replace("-", " ") for w in words.split())
        for _, _, words in (line.partition(":") for line in _lines("kin.txt"))
    )


@cache
def _kin_asked() -> re.Pattern[str]:
    words = sorted({w for family in _kin() for w in family}, key=len, reverse=True)
    cjk = "|".join(re.escape(w) for w in words if not w.isascii())
    latin = "|".join(re.escape(w) for w in words if w.isascii())
    return re.compile(
        rf"(?:我|俺)(?!们)(?:的|家)?[\u4e00-\u9fff]{{0,2}}?(?:{cjk})|\b(?:my|our)\s+(?:\w+\s+)?(?:{latin})s?\b"
    )


@cache
def _kin_after() -> re.Pattern[str]:
    words = sorted(
        {w for family in _kin() for w in family if not w.isascii()}, key=len, reverse=True
    )
    return re.compile(rf"的?(?:{'|'.join(map(re.escape, words))})")


def mentions_in_person(text: str, name: str) -> bool:
    """Whether a (normalised) text names `name` as a person of its own, not only as
    whose relative it speaks of ("秦露妈妈的生日" speaks of her mother)."""
    if not name.isascii():
        start = text.find(name)
        while start >= 0:
            if _kin_after().match(text, start + len(name)) is None:
                return True
            start = text.find(name, start + 1)
        return False
    return mentions(text, name)


def kin_asked(text: str) -> tuple[str, ...]:
    """The words of the kin family a (normalised) wake asks about in the first person
    ("我表姐生日" -> every word for a cousin), or () when it asks about none."""
    found = _kin_asked().search(text)
    if found is None:
        return ()
    said = found.group()
    for family in _kin():
        if any(w in said for w in family):
            return family
    return ()


def is_retrospective(text: str) -> bool:
    """Whether the question asks how things used to be."""
    return _RETRO.search(text.lower()) is not None


def asks_still(text: str) -> bool:
    return _STILL.search(text.lower()) is not None


# --- quantities and the thing asked about ------------------------------------------------
# A question that counts with a measure word (几只, 多少瓦, 第几届) is answered only by a
# text that counts in it; one that asks a price by a text naming an amount of money; one
# that asks "which X" (什么牌子, 哪家店) is about X.
_NUMERAL = "0-9零〇一二三四五六七八九十百千万亿两半几"
_UNIT_ASKED = re.compile(r"(?:几|多少|第几)([\u4e00-\u9fff])")
_GENERIC_UNITS = frozenset("个件种样些回下点号")
"""Measure words too general to say what is counted (点/号 are times: kind "time")."""
_MONEY_ASKED = re.compile(
    r"多少钱|多少块|几块|几千|几万|价格|价钱|多贵|费|花了多少|工资|月薪|年薪|房租|租金"
)
_MONEY_STATED = re.compile(
    rf"[{_NUMERAL}]+\s*(?:元|块|万|千|k|w|毛)|[¥￥$]\s*\d|\d+\s*(?:rmb|yuan)|免费"
)
_WHICH = re.compile(
    r"(?:什么|啥|哪个|哪家|哪种|哪款|哪所|哪部|哪只|哪条|哪座|哪位)([\u4e00-\u9fff]{2})"
)


def unit_asked(text: str) -> str | None:
    """The measure word a question counts in (几只 -> 只), if it names one."""
    for match in _UNIT_ASKED.finditer(text):
        unit = match.group(1)
        if unit not in _GENERIC_UNITS and unit not in function_chars():
            return unit
    return None


def counts_in(text: str, unit: str) -> bool:
    return re.search(rf"[{_NUMERAL}]\s*{re.escape(unit)}", text) is not None


def money_asked(text: str) -> bool:
    return _MONEY_ASKED.search(text) is not None


def money_stated(text: str) -> bool:
    return _MONEY_STATED.search(text) is not None


_NAME_NOUNS = frozenset({"名字", "名称"})
"""What 什么名字 asks for is a name (`asks`, `states`), not the word 名字: an answer
gives the name without writing it ("煤球是小林养的猫")."""


def focus(text: str) -> str | None:
    """The thing a "which / what X" question is about (什么牌子 -> 牌子)."""
    grammar = function_chars()
    for match in _WHICH.finditer(text):
        word = match.group(1)
        if not all(ch in grammar for ch in word) and word not in _NAME_NOUNS:
            return word
    return None


# --- names and English words --------------------------------------------------------------


def mentions(text: str, name: str) -> bool:
    """Whether a (normalised) text names `name`: a latin name only as a whole word ("tom"
    is not in "tomorrow", "al" not in "also"); a Chinese one anywhere."""
    if not name:
        return False
    if name.isascii():
        return _whole(name).search(text) is not None
    return name in text


def replace_name(text: str, name: str, by: str) -> str:
    """`text` with every mention of `name` (as `mentions` finds them) replaced."""
    if name.isascii():
        return _whole(name).sub(lambda _: by, text)
    return text.replace(name, by)


@cache
def _whole(name: str) -> re.Pattern[str]:
    # Only latin letters and digits glue to a latin name: "Emma和Tom在上海" names Tom.
    return re.compile(rf"(?<![a-z0-9\u00c0-\u024f]){re.escape(name)}(?![a-z0-9\u00c0-\u024f])")


_VOWELS = frozenset("aeiou")
_UNDOUBLE = frozenset("bdfgmnprt")
"""Consonants English doubles before -ed/-ing (stopped, running); l, s and z are left
alone (called, missed)."""


@cache
def stem(word: str) -> str:
    """A light English stem, so inflected forms meet (moved/moves/moving -> mov,
    parties/party -> parti); anything but a lower-case latin word is itself. Only
    regular inflection: irregular forms (ran, went) stay apart."""
    if not word.isascii() or not word.isalpha() or len(word) <= 3:
        return word
    w = word
    if w.endswith(("ies", "ied")) and len(w) > 4:
        w = w[:-3] + "y"
    elif w.endswith("ing") and len(w) > 5:
        w = _undouble(w[:-3])
    elif w.endswith("ed") and len(w) > 4:
        w = _undouble(w[:-2])
    elif w.endswith("s") and not w.endswith(("ss", "us", "is")) and len(w) > 3:
        w = w[:-1]
    if w.endswith("e") and len(w) > 3:
        w = w[:-1]
    if w.endswith("y") and len(w) > 3 and w[-2] not in _VOWELS:
        w = w[:-1] + "i"
    return w


def _undouble(w: str) -> str:
    if len(w) > 3 and w[-1] == w[-2] and w[-1] in _UNDOUBLE:
        return w[:-1]
    return w


@cache
def word_forms(word: str) -> frozenset[str]:
    """The regular inflections of an English word that share its stem (the word itself
    included): what a full-text index of whole words must be asked for. A word of
    another script is only itself."""
    if not word.isascii() or not word.isalpha() or len(word) < 3:
        return frozenset({word})
    root = stem(word)
    bases = {root, root + "e", word}
    if root.endswith("i"):
        bases.add(root[:-1] + "y")
    forms: set[str] = set()
    for base in bases:
        forms.update({base, base + "s", base + "es", base + "ed", base + "ing", base + "d"})
        if base.endswith("y"):
            forms.update({base[:-1] + "ies", base[:-1] + "ied"})
        if base[-1:] in _UNDOUBLE and base[-2:-1] in _VOWELS:
            forms.update({base + base[-1] + "ed", base + base[-1] + "ing"})
        if base.endswith("e"):
            forms.add(base[:-1] + "ing")
    return frozenset(f for f in forms if stem(f) == root) | {word}
