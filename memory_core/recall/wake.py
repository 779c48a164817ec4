"""The one analysis of a wake: the message with the turns before it (pure).

Every part of recall reads the wake through this module: its words, the members it
names, its time cue and the kind of answer it asks (question.py), whether it asks
about anything at all (chatter.py), its shape, and the conversation it came in.

- **Context.** The chat path hands over the last `CONTEXT_TURNS` messages of the same
  chat before the wake (the newest of the recent window the prompt shows); `yuji
  eval` hands over a query's `context` the same way. A turn of another chat is
  dropped here, whoever passed it. The wake counts 1; a member's turn counts
  `MEMBER_WEIGHT` and each older one `DECAY` times less; the bot's own turn half of a
  member's (it says what the persona thought of, not what the chat said).
- **What context moves.** How much the wake says of its own decides. A wake with
  content of its own is searched by itself; the turns count by their words (one
  search, its candidates ordered by the weightiest turn sharing a term), only when
  the wake's own orders hold fewer than the recall limit, after everything the wake's
  own orders hold (fusion.py). A reaction, a short follow-up or a lone pronoun
  ("是啊，真的好累", "后来呢", "那它呢") *leans* on the turns before (`leans_back`): its
  searches, words and vector, read the turns and the wake joined (one embedding more,
  only for such wakes), P's order is trusted least (`DEPTH_LEAN`), and when the
  turns it leans on are near nothing the chat remembers (chatter.below_the_chat) it
  is small talk and gets nothing. Each turn is not embedded on its own: on
  conversation-shaped recall the turns' vectors at any weight found what was just
  talked about rather than what to recall next, and three new embeddings cost about
  100 ms at p95 in a 10,000-memory chat.
- **Who a pronoun means.** A wake that names nobody but points back (他/她/它, he,
  she, it, they...) is searched as if it named whom the newest turn naming someone
  named (`lookup`): "那她后来呢" after a turn about 阿花 searches 阿花.
- **What context never moves.** The turns' words never enter the features the
  relevance model reads, which are the wake's own. One thing does: whom a pronoun
  points back to is who the wake is about ("她老家哪的" after a turn about 露露 asks
  about 露露), read by the features that say whether a memory is about the person
  asked about, as a name the wake said would be; and a memory about anyone else is
  then never `sure` (decision.py).
- **Shape and depth.** The relevance model was fitted on a corpus of questions.
  `shape` says whether the wake is one (a question word, a question mark, a yes/no
  shape, a cue to remember) or a statement, and `depth` how far P's order is trusted
  over the plain hybrid's (fusion.py): 0.6 for a question asked alone, 0.5 for a
  statement or a wake with turns before it (and a short question that leans on
  them), 0 for a reaction that leans on them. P alone (depth 1) was above the hybrid
  on questions like its corpus's and below it on conversation.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from typing import Literal

import numpy as np
import numpy.typing as npt

from memory_core.tokenize import is_cjk
from memory_core.types import Asker

from . import chatter, language, smalltalk
from .question import Names, Question, analyse, content_terms

CONTEXT_TURNS = 3
"""Turns before the wake that recall reads (the prompt shows more; older ones are
usually another topic)."""
MEMBER_WEIGHT = 0.05
DECAY = 0.7
BOT_SHARE = 0.5
DEPTH_QUESTION = 0.6
DEPTH_STATEMENT = 0.5
DEPTH_CONTEXT = 0.5
DEPTH_LEAN = 0.0
"""How far P's order is trusted (1: P alone; 0: the hybrid's order alone). A wake
that leans on the turns before it is searched by them, but P reads the wake alone:
it says little there, and the hybrid over the turns says more (at 0.2, P's reading of
"我酒量不行啊" put a memory about drinking above the wedding the turns were about). A
short question that leans ("多少钱来着", "导演是谁") keeps `DEPTH_CONTEXT`: P reads
the kind of answer it asks for, which the hybrid cannot; it is searched by the turns'
words and its own vector."""
LEAN_CHARS = 10
"""A wake this short (`length`), naming no one, is a reaction or a follow-up ("是啊，真
的好累", "后来呢", "多少钱来着", "my legs hate me"): its topic is what the turns before
it talked about. A short question with a topic of its own ("猫叫什么") keeps it in the
joined search, where its words are the newest."""
LATIN_WORD = re.compile(r"[A-Za-z]+(?:'[a-z]+)?")

Shape = Literal["question", "statement"]

REFERS_BACK = re.compile(rf"{language.THIRD_PERSON}|\b(?:it|its)\b")
"""A third-person pronoun: the wake is about someone or something said before it."""


@dataclass(frozen=True, slots=True)
class Turn:
    """One message before the wake, as the chat path or a dataset gives it."""

    text: str
    is_bot: bool = False
    sender: str = ""
    scope: str | None = None
    """The chat it was said in (None: the caller vouches it is the wake's)."""


@dataclass(frozen=True, slots=True)
class Said:
    """A context turn as recall reads it: its terms and its weight (the bot's share
    already in it)."""

    terms: frozenset[str]
    weight: float


@dataclass(frozen=True, slots=True)
class Wake:
    question: Question
    """The wake's own text analysed: the features the relevance model reads."""
    lookup: Question
    """What the searches look for: the question, or the question naming whom its
    pronoun points back to."""
    context: tuple[Said, ...]
    """The turns before it that have any content, newest first."""
    signals: npt.NDArray[np.float64]
    """The wake's chatter signals (chatter.SIGNALS)."""
    shape: Shape
    depth: float
    about: frozenset[str] = frozenset()
    """Whom a pronoun of the wake points back to (the newest turn naming someone):
    the wake is about them as if it named them."""
    leans: bool = False
    """The wake says too little of its own: `lookup` is the turns before it and the
    wake joined, in words and in vectors."""
    idle: bool = False
    """Small talk by its words (smalltalk.py): it asks nothing, or asks the persona
    about itself."""

    @property
    def context_terms(self) -> frozenset[str]:
        """Terms the turns say that the wake does not."""
        return frozenset(t for s in self.context for t in s.terms) - self.question.terms


def read(
    scope: str,
    text: str,
    names: Names,
    bot_names: Iterable[str] = (),
    context: Sequence[Turn] = (),
    asker: Asker | None = None,
    mentioned: Sequence[Asker] = (),
    question: Question | None = None,
) -> Wake:
    """The analysis of a wake `text` said in `scope` after `context` (oldest first),
    sent by `asker` (a first person is them; None: nobody known), @-mentioning the
    members `mentioned` (it names them). `question`: the text analysed already (the
    engine starts its embedding before the turns are read)."""
    bots = tuple(bot_names)
    q = question or analyse(text, names, bots, asker, mentioned)
    mine = [t for t in context if t.scope is None or t.scope == scope][-CONTEXT_TURNS:]
    said: list[Said] = []
    spoken: list[str] = []  # the turns with content, newest first
    referents: frozenset[str] = frozenset()
    for distance, turn in enumerate(reversed(mine), start=1):
        ctx = analyse(turn.text, names, bots)
        referents = referents or ctx.named
        terms = ctx.terms | frozenset(t for name in ctx.named for t in content_terms(name))
        if not terms and not ctx.named:
            continue
        weight = MEMBER_WEIGHT * DECAY ** (distance - 1) * (BOT_SHARE if turn.is_bot else 1.0)
        said.append(Said(ctx.terms, weight))
        spoken.append(turn.text)
    shape = shape_of(q)
    depth = DEPTH_QUESTION if shape == "question" else DEPTH_STATEMENT
    if said:
        depth = min(depth, DEPTH_CONTEXT)
    about = referents if referents and not q.named and REFERS_BACK.search(q.text) else frozenset()
    lookup = q
    if about:
        lookup = analyse(" ".join((text, *sorted(about))), names, bots, asker, mentioned)
    # A pronoun pointing back at someone is searched as them (above), not as the turns.
    # A greeting or goodbye opens or closes a talk, whatever was said before it; laughter
    # or a sigh after news reacts to the news (and after small talk stays small talk:
    # chatter.below_the_chat).
    # A reaction in the first person ("我也想去", "I'm shattered") names only its
    # sender: it reacts to the turns as any other reaction does.
    reacts = q.asks is None and shape == "statement"
    plain = replace(q, named=q.named - {names.of_asker(asker)}) if reacts else q
    leans = bool(spoken) and not about and leans_back(plain) and not chatter.greets(q.text, bots)
    signals = chatter.signals(text, bool(q.named), bots)
    if leans:
        # Searched by what was being talked about; a reaction to small talk is small
        # talk still (the joined turns say as little), a reaction to news is not.
        joined = " ".join((*reversed(spoken), text))
        lookup = analyse(joined, names, bots, asker, mentioned)
        signals = chatter.signals(joined, bool(lookup.named), bots)
        asking = asks_of_its_own(q, bots)
        depth = min(depth, DEPTH_CONTEXT if asking else DEPTH_LEAN)
        if asking:
            # Its words say what it asks: its own vector serves, and the turns count
            # by their words. Embedding the turns joined for every short question after
            # a conversation doubled recall's p95 at 10k (48 -> 85 ms).
            lookup = replace(lookup, embed_text=q.embed_text)
    return Wake(
        question=q,
        lookup=lookup,
        context=tuple(said),
        signals=signals,
        shape=shape,
        depth=depth,
        about=about,
        leans=leans,
        idle=smalltalk.idle(text, bool(q.named)),
    )


def asks_of_its_own(q: Question, bot_names: tuple[str, ...] = ()) -> bool:
    """A leaning wake that asks something its words say: a question word ("多少钱来
    着"), or a yes/no question with more than chat fillers in it ("有人去过日本吗";
    "真的吗" only reacts)."""
    if q.asks is not None:
        return True
    left = chatter.residue(q.text, bot_names).replace(" ", "").strip("吗么嘛呢啊呀")
    return len(left) > 1 and language.asks_yes_no(q.text)


def leans_back(q: Question) -> bool:
    """The wake says too little of its own to be searched alone: it names no one, and
    it is short with few content terms, or it only points back."""
    if q.named:
        return False
    if REFERS_BACK.search(q.text) is not None:
        return True
    return not q.terms or length(q.text) <= LEAN_CHARS


def length(text: str) -> int:
    """How much a text says: its CJK characters and digits, and two for each latin word
    (an English word carries about what two characters do)."""
    cjk = sum(1 for ch in text if is_cjk(ch) or ch.isdigit())
    return cjk + 2 * len(LATIN_WORD.findall(text))


def shape_of(q: Question) -> Shape:
    """A question (it asks with a word, a mark, a yes/no shape or a cue to remember)
    or a statement."""
    text = q.text
    asks = (
        q.asks is not None
        or "?" in text
        or language.asks_yes_no(text)
        or chatter.REMEMBER.search(text) is not None
    )
    return "question" if asks else "statement"
