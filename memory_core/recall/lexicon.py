"""Word lists recall needs, kept as data beside this module and loaded once: the
synonym table (data/synonyms.txt, hand-written; its header states source and
licence) and the question-frame words that carry no content ("什么", "来着",
"还记得", "what", "remember"...: data/question_frames.txt)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, lru_cache
from importlib import resources

from .tokenize import bigram_tokens, is_cjk, normalise
from .visibility import RETROSPECTIVE_CUES

FUNCTION_CHARS = frozenset("的了吗呢吧啊呀哦嘛么啥咋哪谁喔哈嗯哇呗啦咯是")
"""Particles and question characters: a query bigram containing one says nothing."""


@dataclass(frozen=True, slots=True)
class Lexicon:
    expansions: dict[str, frozenset[str]]
    """word -> the words it may stand for (synonyms, broader or narrower words)."""
    max_len: int

    def words_in(self, text: str) -> list[str]:
        """Lexicon words of `text` by forward maximum matching (longest first), in order.

        '酒店' is found as 酒店, not as 酒: a one-character word only counts where no
        longer lexicon word covers it."""
        norm = normalise(text)
        found: list[str] = []
        i = 0
        while i < len(norm):
            for size in range(min(self.max_len, len(norm) - i), 0, -1):
                piece = norm[i : i + size]
                if piece in self.expansions and _whole(norm, i, size):
                    found.append(piece)
                    i += size
                    break
            else:
                i += 1
        return found


def _whole(text: str, start: int, size: int) -> bool:
    """A latin lexicon word must not be part of a longer latin word."""
    piece = text[start : start + size]
    if any(is_cjk(c) for c in piece):
        return True
    before = text[start - 1] if start > 0 else " "
    after = text[start + size] if start + size < len(text) else " "
    return not (before.isalnum() and not is_cjk(before)) and not (
        after.isalnum() and not is_cjk(after)
    )


def parse_synonyms(source: str) -> dict[str, frozenset[str]]:
    """word -> words it may stand for: its synonyms, and the narrower and broader words
    of its synonym class (but never siblings under a broader word)."""
    parent: dict[str, str] = {}

    def find(w: str) -> str:
        parent.setdefault(w, w)
        while parent[w] != w:
            parent[w] = parent[parent[w]]
            w = parent[w]
        return w

    def union(words: list[str]) -> None:
        for w in words[1:]:
            parent[find(w)] = find(words[0])
        for w in words:
            find(w)

    edges: list[tuple[list[str], list[str]]] = []
    for raw in source.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if ">" in line:
            head, _, rest = line.partition(">")
            broad = [normalise(w) for w in head.split()]
            narrow = [normalise(w) for w in rest.split()]
            union(broad)
            for w in narrow:
                find(w)
            edges.append((broad, narrow))
        else:
            union([normalise(w) for w in line.split()])
    classes: dict[str, set[str]] = {}
    for w in parent:
        classes.setdefault(find(w), set()).add(w)
    below: dict[str, set[str]] = {}
    above: dict[str, set[str]] = {}
    for broad, narrow in edges:
        top = find(broad[0])
        for w in narrow:
            below.setdefault(top, set()).update(classes[find(w)])
            above.setdefault(find(w), set()).update(classes[top])
    table: dict[str, frozenset[str]] = {}
    for w in parent:
        root = find(w)
        linked = classes[root] | below.get(root, set()) | above.get(root, set())
        table[w] = frozenset(linked - {w})
    return table


@cache
def lexicon() -> Lexicon:
    """Every synonym table of data/ (synonyms.txt, synonyms_*.txt) read as one: a word
    listed in several files links all of its classes."""
    expansions = parse_synonyms("\n".join(_data(name) for name in synonym_files()))
    return Lexicon(expansions=expansions, max_len=max(map(len, expansions), default=1))


def synonym_files() -> list[str]:
    """Names of the synonym tables in data/, in a stable order."""
    folder = resources.files("memory_core.recall").joinpath("data")
    names = [
        entry.name
        for entry in folder.iterdir()
        if entry.name.startswith("synonyms") and entry.name.endswith(".txt")
    ]
    return sorted(names)


def _data(name: str) -> str:
    return resources.files("memory_core.recall").joinpath("data", name).read_text("utf-8")


@cache
def stop_tokens() -> frozenset[str]:
    """Query tokens that belong to the question frame (data/question_frames.txt)."""
    tokens: set[str] = set()
    for raw in _data("question_frames.txt").splitlines():
        for word in raw.split("#", 1)[0].split():
            tokens.update(bigram_tokens(word))
    for cue in RETROSPECTIVE_CUES:  # "以前" asks when, not what
        tokens.update(bigram_tokens(cue))
    return frozenset(tokens)


@cache
def _two_char_words() -> frozenset[str]:
    words: set[str] = set()
    for raw in _data("words2.txt").splitlines():
        if raw.startswith("#") or not raw.strip():
            continue
        first, _, rest = raw.partition(" ")
        words.update(first + second for second in rest.strip())
    return frozenset(words)


@lru_cache(maxsize=1 << 16)
def is_word(token: str) -> bool:
    """A token that is a word by itself: a latin word, a two-character Chinese word of
    the word list (data/words2.txt) or of the synonym table. A pair of characters that
    straddles two words ("子最" in "胖子最近") is not."""
    if not any(is_cjk(c) for c in token):
        return not token.isdigit()
    return token in _two_char_words() or token in lexicon().expansions


@lru_cache(maxsize=1 << 16)
def is_stop(token: str) -> bool:
    if token in stop_tokens():
        return True
    return len(token) == 2 and is_cjk(token[0]) and any(c in FUNCTION_CHARS for c in token)
