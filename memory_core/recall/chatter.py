"""Does a wake ask about anything? (pure)

A wake that asks about nothing ("早上好", "哈哈哈", "在吗", "666", "thanks!") gets no
memories injected, however high some memory's P: nothing in it could be answered.
The decision reads the message alone, never the memories: how much of it is left
once the words of chat that carry no question are removed (data/chatter.txt), whether
it names a member of the chat, whether it is shaped as a question (question words,
a question mark, a yes/no question's particle or word order, a cue to remember), and
how long it is. A small logistic model over
these signals, fitted on the training corpus's wakes (its `chatter` tier against every
real question, answerable or not), gives P(it asks); below the gate's line it is
chatter. The line is chosen on held-out chats so that almost no real question is
silenced: a question wrongly gated loses its answer, a chatter wake wrongly passed
only gets the memories the relevance model would give it.

Chatter is phatic, not "not a question": the gate silences only a wake with at most
`PHATIC_TERMS` content terms left (greetings, laughter, thanks, agreement, stickers,
"在吗", "666", "晚安", a lone emoji, a member's name in banter). "我今天又去琴行了" is
no question and still says something a memory may be about.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

import numpy as np
import numpy.typing as npt

from memory_core.tokenize import bigram_tokens, is_cjk, normalise

from . import language
from .question import latin_share

SIGNALS: tuple[str, ...] = (
    "left",
    "left_share",
    "named",
    "question_word",
    "question_mark",
    "yes_no",
    "remember_cue",
    "length",
    "latin",
)
REMEMBER = re.compile(
    r"记得|记不记得|说过|提过|讲过|聊过|来着|之前|以前|上次|remember|recall|mention|told|said|last time"
)
PHATIC_TERMS = 2
"""Content terms (bigrams) a phatic wake may keep ("早点睡", a member's name)."""
_PARTICLES = "啦呀呢吧嘛哦喔哟咯噢啰"
_PLACEHOLDER = re.compile(r"\[[^\]]{0,12}\]")
_LATIN_WORD = re.compile(r"[a-z0-9'+]+")
Vector = npt.NDArray[np.float64]


@cache
def _fillers() -> tuple[frozenset[str], tuple[str, ...]]:
    """(latin filler words, CJK filler phrases longest first)."""
    text = (
        resources.files("memory_core.recall")
        .joinpath("data", "chatter.txt")
        .read_text(encoding="utf-8")
    )
    words = {
        normalise(w)
        for line in text.splitlines()
        if line.strip() and not line.startswith("#")
        for w in line.split()
    }
    latin = frozenset(w for w in words if w.isascii())
    cjk = tuple(sorted((w for w in words if not w.isascii()), key=lambda w: (-len(w), w)))
    return latin, cjk


@cache
def _greetings() -> frozenset[str]:
    text = (
        resources.files("memory_core.recall")
        .joinpath("data", "greetings.txt")
        .read_text(encoding="utf-8")
    )
    return frozenset(
        normalise(w)
        for line in text.splitlines()
        if line.strip() and not line.startswith("#")
        for w in line.split()
    )


def greets(text: str, bot_names: tuple[str, ...] = ()) -> bool:
    """Whether a wake only greets or says goodbye: nothing of it is left once chat
    fillers and sentence-final particles are gone ("晚安啦"), and one of them is a
    greeting or farewell (greetings.txt)."""
    if any(w.strip(_PARTICLES) for w in residue(text, bot_names).split()):
        return False
    norm = normalise(text)
    words = set(_LATIN_WORD.findall(norm))
    return any(g in words if g.isascii() else g in norm for g in _greetings())


def residue(text: str, bot_names: tuple[str, ...] = ()) -> str:
    """What is left of a (normalised) wake once bot names, placeholders ([表情]),
    chat fillers, emoji and punctuation are gone."""
    latin, cjk = _fillers()
    out = _PLACEHOLDER.sub(" ", text.replace("@", " "))
    for name in sorted({normalise(b) for b in bot_names if b}, key=len, reverse=True):
        out = out.replace(name, " ")
    out = _LATIN_WORD.sub(
        lambda m: " " if _filler_word(m.group(0), latin) else f" {m.group(0)} ", out
    )
    for phrase in cjk:
        if len(phrase) == 1:  # a lone 行 or 中 is filler; inside 旅行 or 中秋 it is not
            out = re.sub(rf"(?<![\u4e00-\u9fff]){re.escape(phrase)}(?![\u4e00-\u9fff])", " ", out)
        else:
            out = out.replace(phrase, " ")
    kept = "".join(ch if ch.isalnum() or is_cjk(ch) else " " for ch in out)
    return " ".join(kept.split())


def _filler_word(word: str, latin: frozenset[str]) -> bool:
    """A filler of the list, or a run of one or two repeated digits (666, 2333, 8888:
    numbers said as laughter and cheering, not as quantities)."""
    return word in latin or (word.isdigit() and len(word) >= 3 and len(set(word)) <= 2)


def signals(text: str, named: bool, bot_names: tuple[str, ...] = ()) -> Vector:
    """The SIGNALS of one wake (`named`: it names a member of the chat)."""
    norm = normalise(text)
    left = residue(norm, bot_names)
    content = [t for t in bigram_tokens(left) if not t.isdigit()]
    total = max(1, sum(1 for ch in norm if ch.isalnum() or is_cjk(ch)))
    values = {
        "left": math.log1p(len(content)),
        "left_share": min(1.0, len(left.replace(" ", "")) / total),
        "named": float(named),
        "question_word": float(language.asks(norm) is not None),
        "question_mark": float("?" in norm or "？" in text),
        # Only when more than a particle is left: "在吗", "真的吗" and "吃了吗" are
        # chat, "能带狗吗" is not. Read on the whole text (a filler inside a question,
        # 真的 in "他要搬家是真的吗", stays part of it).
        "yes_no": float(len(left.replace(" ", "")) > 1 and language.asks_yes_no(norm)),
        "remember_cue": float(bool(REMEMBER.search(norm))),
        "length": math.log1p(total),
        "latin": latin_share(norm),
    }
    return np.array([values[name] for name in SIGNALS], dtype=np.float64)


@dataclass(frozen=True)
class ChatterGate:
    """P(a wake asks about something) from its SIGNALS; below `line` it is chatter."""

    mean: Vector
    scale: Vector
    weights: Vector
    bias: float
    line: float

    def p_asks(self, row: Vector) -> float:
        z = float(((row - self.mean) / self.scale) @ self.weights + self.bias)
        return 1.0 / (1.0 + math.exp(-max(-30.0, min(30.0, z))))

    def is_chatter(self, row: Vector) -> bool:
        """Phatic, not merely "not a question": below the line and with at most
        `PHATIC_TERMS` content terms left once the chat's fillers are gone. A statement
        naming a person, a thing, a plan, a place, a feeling or an event says more than
        that, question or not."""
        left = float(row[SIGNALS.index("left")])
        return left <= math.log1p(PHATIC_TERMS) + 1e-9 and self.p_asks(row) < self.line

    def says_nothing_remembered(self, row: Vector, shares_a_word: bool) -> bool:
        """Small talk that is no greeting ("the bus was late again"): below the line,
        whatever its length, and no memory of the chat shares a word with it. A statement naming something remembered shares its word; one that asks
        (above the line) is left to the memories, words or none (issue 47)."""
        return not shares_a_word and self.p_asks(row) < self.line

    def to_dict(self) -> dict[str, Any]:
        return {
            "signals": list(SIGNALS),
            "mean": [round(float(v), 10) for v in self.mean],
            "scale": [round(float(v), 10) for v in self.scale],
            "weights": [round(float(v), 10) for v in self.weights],
            "bias": round(self.bias, 10),
            "line": round(self.line, 6),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ChatterGate:
        if tuple(data["signals"]) != SIGNALS:
            raise ValueError(f"chatter gate signals {data['signals']} are not {list(SIGNALS)}")
        return cls(
            mean=np.asarray(data["mean"], dtype=np.float64),
            scale=np.asarray(data["scale"], dtype=np.float64),
            weights=np.asarray(data["weights"], dtype=np.float64),
            bias=float(data["bias"]),
            line=float(data["line"]),
        )


LEAN_LEVEL = 0.112
"""How far above the chat's own level the turns a wake leans on must come to some
memory (summed over the two levels below) to be about something remembered."""


def below_the_chat(cosines: npt.NDArray[np.float32], background: float) -> bool:
    """The conversation a reaction leans on ("哈哈哈", "是啊") is small talk: its
    nearest memory stands no further above the level unrelated memories reach than
    small talk does, measured twice: against the fixed background of ordinary
    memories, and against this chat's own (the median cosine over its memories, which
    a few thousand unrelated memories leave where it was)."""
    if not len(cosines):
        return True
    top = float(np.max(cosines))
    return (top - background) + (top - float(np.median(cosines))) < LEAN_LEVEL
