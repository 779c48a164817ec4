"""How memories are laid out in the FTS5 index `memory_fts` (pure functions).

The index is derived and rebuildable (`yuji reindex`). Each row (rowid = memory
id) has one column, `bi`, of space-separated tokens that FTS5's `ascii` tokenizer
keeps whole: the CJK bigrams and latin words of subject + content. Every token
carries its chat's key as a prefix, so

- a term of one chat can never match a memory of another (fail-closed twice:
  recall also filters on `memories.scope`), and
- `memory_fts_vocab` (an fts5vocab table) gives document frequencies *per chat*,
  which is what IDF in recall needs.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from functools import lru_cache

from memory_core.tokenize import bigram_tokens

KEY_LENGTH = 11


def scope_key(scope: str) -> str:
    """A token-safe prefix for a chat: 's' + 10 hex digits of its SHA-1."""
    return "s" + hashlib.sha1(scope.encode("utf-8")).hexdigest()[: KEY_LENGTH - 1]


def document(scope: str, subject: str, content: str) -> str:
    """The `bi` column value of one memory."""
    key = scope_key(scope)
    return " ".join(key + token for token in bigram_tokens(f"{subject} {content}"))


def keyed(scope: str, tokens: Iterable[str]) -> list[str]:
    key = scope_key(scope)
    return [key + token for token in tokens]


def unkey(token: str) -> str:
    return token[KEY_LENGTH:]


def unkeyed_tokens(column: str) -> list[str]:
    """The plain tokens of one stored column value."""
    return [token[KEY_LENGTH:] for token in column.split()]


@lru_cache(maxsize=1 << 14)
def column_tokens(column: str) -> frozenset[str]:
    """The plain tokens of one stored column value, as a set (memoised: recall reads
    the same memories' columns question after question)."""
    return frozenset(unkeyed_tokens(column))
