"""Splitting a long reply into messages a group reads comfortably.

Cut at paragraph breaks first, then after sentence ends, then after commas, and
only as a last resort inside a run of text (at a space when one is near, so a latin
word stays whole). Small neighbours are packed back together while they fit. Very
long replies are capped at `max_parts`, the last one ending in "……".
"""

from __future__ import annotations

import re

_SENTENCE_END = re.compile(r"[。！？!?…~～;；]+[”」』)）]*\s*|\.(?:\s+|$)")
_CLAUSE_END = re.compile(r"[，,、：:]\s*")
ELLIPSIS = "……"


def split_reply(text: str, max_chars: int, *, max_parts: int = 5) -> list[str]:
    if max_chars < 2:
        raise ValueError("max_chars must be at least 2")
    parts: list[str] = []
    for paragraph in re.split(r"\n\s*\n", text.strip()):
        paragraph = paragraph.strip()
        if not paragraph:
            continue
        if parts and len(parts[-1]) + 2 + len(paragraph) <= max_chars:
            parts[-1] = f"{parts[-1]}\n\n{paragraph}"
        else:
            parts.extend(_pack(_split_block(paragraph, max_chars), max_chars))
    if len(parts) > max_parts:
        parts = parts[:max_parts]
        parts[-1] = parts[-1][: max_chars - len(ELLIPSIS)].rstrip() + ELLIPSIS
    return parts


def _split_block(block: str, max_chars: int) -> list[str]:
    if len(block) <= max_chars:
        return [block]
    out: list[str] = []
    for sentence in _cut_after(block, _SENTENCE_END):
        if len(sentence) <= max_chars:
            out.append(sentence)
            continue
        for clause in _cut_after(sentence, _CLAUSE_END):
            out.extend(_hard_wrap(clause, max_chars))
    return out


def _cut_after(text: str, pattern: re.Pattern[str]) -> list[str]:
    """Cut after each match, keeping the punctuation and whitespace with the left piece."""
    pieces: list[str] = []
    start = 0
    for match in pattern.finditer(text):
        if match.end() > start:
            pieces.append(text[start : match.end()])
            start = match.end()
    if start < len(text):
        pieces.append(text[start:])
    return pieces


def _hard_wrap(text: str, max_chars: int) -> list[str]:
    out: list[str] = []
    while len(text) > max_chars:
        cut = text.rfind(" ", max_chars // 2, max_chars + 1)
        if cut <= 0:
            cut = max_chars
        out.append(text[:cut])
        text = text[cut:]
    if text:
        out.append(text)
    return out


def _pack(pieces: list[str], max_chars: int) -> list[str]:
    """Join neighbouring pieces of one paragraph back together while they fit."""
    parts: list[str] = []
    for piece in pieces:
        if parts and len((parts[-1] + piece).strip()) <= max_chars:
            parts[-1] += piece
        else:
            parts.append(piece.lstrip())
    return [part.strip() for part in parts if part.strip()]
