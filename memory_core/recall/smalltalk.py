"""Small talk by its words: a wake that asks nothing a memory could answer (pure).

Greetings, laughter and thanks are phatic (chatter.py). Small talk that says more
still asks nothing of what the chat remembers: how the sender is now or what the day
is like ("腰好酸，不想动", "楼下又在装修了"), a question to the persona about
itself ("你会下棋吗", "do you ever get tired?"), or a request for its company ("陪我
聊会儿", "tell me a story"). Such a wake is `idle`.

Whether it mentions something remembered is for the memories to say: the engine
injects nothing for an idle wake only when neither it nor the turns before it share a
word with any memory of the chat (a time word is no such word: "终于周五了" names
the day). A cosine cannot make that call: small talk and
questions that share no word with their answer reach the same cosines in a chat.

An idle wake names no member, points back at no one and has no cue to remember; and
it either asks nothing at all (no question word used as one, no question mark, no
yes/no shape), or asks the persona about itself. A question word used as something
else does not ask: "什么都不想干" (whatever), "怎么这么热" (an exclamation),
"不知道吃什么" (the sender wonders aloud).
"""

from __future__ import annotations

import re

from memory_core.tokenize import normalise

from . import chatter, language

_NOT_ASKING = re.compile(
    # whatever, whoever, wherever: a question word followed by 都/也
    r"(?:什么|啥|谁|哪儿|哪里|哪|怎么|咋)(?:都|也)"
    # exclamations: how hot it is, why again
    r"|(?:怎么|咋)(?:这么|那么|又|就)"
    # the sender wonders aloud, to the end of the clause
    r"|(?<!知道)(?<!晓得)(?:不知道|不晓得|没想好|想不出)[^，。！？,.!?~]*"
)
_ASKS_ZH = re.compile(r"哪|谁|几|多少|怎|咋|啥|什么|为何|如何")
_ASKS_EN = re.compile(r"\b(?:what|who|whom|whose|where|when|why|how|which)\b")

_ADVERBS = (
    "平时|平常|一般|也|都|还|又|最|真|到底|每天|自己|是不是|会不会|能不能|可不可以|"
    "有没有|喜不喜欢|想不想|爱不爱|怕不怕"
)
_ABOUT_ITSELF = re.compile(
    rf"(?<!们)你(?!们)(?:{_ADVERBS})*"
    r"(?:会|能|可以|是|喜欢|爱|讨厌|怕|想|觉得|在|有|几岁|多大|叫什么|吃|喝|睡|累|困|饿|"
    r"无聊|开心|难过|说|干嘛|干什么|干啥|做什么|忙什么|忙啥|知道自己)"
)
"""The persona as the subject of what is asked (你会, 你平时都, 你有没有)."""
_KNOWS = re.compile(r"你(?:还|也|都)?(?:记得|记不记得|知道(?!自己)|晓得|认识|听说|见过|了解)")
"""What the persona knows of someone or something is a question for the memories."""
_COMPANY = re.compile(
    r"陪(?:陪)?我|有没有人(?:聊|陪|在|理)|聊聊天|聊会|聊天吧|说说话|说点(?:什么|啥)|随便说|讲个(?:笑话|故事)|"
    r"唱(?:首|个)歌|逗我|哄我|夸夸我|安慰(?:一下)?我"
)
_ABOUT_ITSELF_EN = re.compile(
    r"\b(?:(?:can|could|do|did|are|were|will|would|have|don't|won't)\s+you"
    r"|what(?:'s|\s+is|\s+are|\s+do)\s+(?:you|your)"
    r"|how\s+are\s+you|you\s+ever|say\s+something|your\s+favou?rite)\b"
)
_COMPANY_EN = re.compile(
    r"\b(?:talk\s+to\s+me|tell\s+me\s+a\s+(?:joke|story)|keep\s+me\s+company)\b"
)
_KNOWS_EN = re.compile(r"\byou\s+(?:still\s+)?(?:remember|recall|know|heard)\b")
_POINTS_AT_SOMEONE = re.compile(language.THIRD_PERSON)
"""A third person said before the wake (not "it": "it's so hot" points at nothing)."""


def idle(text: str, named: bool) -> bool:
    """Whether a wake (`named`: it names a member of the chat) is small talk by its
    words: it asks nothing, or only asks the persona about itself or for company."""
    norm = normalise(text)
    if named or _POINTS_AT_SOMEONE.search(norm) or chatter.REMEMBER.search(norm):
        return False
    return to_persona(norm) or not asks(norm)


def asks(norm: str) -> bool:
    """Any sign of a question in a normalised text: a question mark, a question word
    used as one, a yes/no shape."""
    if "?" in norm or "？" in norm:
        return True
    rest = _NOT_ASKING.sub(" ", norm)
    return bool(_ASKS_ZH.search(rest) or _ASKS_EN.search(rest) or language.asks_yes_no(rest))


def to_persona(norm: str) -> bool:
    """A normalised wake asks the persona about itself or for its company, not about
    what it knows of someone."""
    if _KNOWS.search(norm) or _KNOWS_EN.search(norm):
        return False
    if _COMPANY.search(norm) or _COMPANY_EN.search(norm):
        return True
    # "你觉得我该换工作吗" asks about the sender, which the memories may answer.
    if language.speaks_of_self(norm):
        return False
    return bool(_ABOUT_ITSELF.search(norm) or _ABOUT_ITSELF_EN.search(norm))
