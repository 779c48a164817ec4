"""tokenize, storage.fulltext.fts: pure tokenising and index layout."""

from __future__ import annotations

import re
import sqlite3

from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core.storage.fulltext import fts
from memory_core.storage.fulltext import ranked as fulltext
from memory_core.tokenize import (
    _runs,  # pyright: ignore[reportPrivateUsage]
    bigram_tokens,
    is_cjk,
    is_numeric,
    normalise,
    numbers,
)


def test_cjk_is_cut_into_bigrams_and_latin_words_kept_whole() -> None:
    assert bigram_tokens("小明学吉他 Switch和NBA2K") == [
        "小明",
        "明学",
        "学吉",
        "吉他",
        "switch",
        "和",
        "nba2k",
    ]


def test_a_day_of_the_week_is_a_content_term() -> None:
    """A question about this Saturday is answered by what happens every Saturday."""
    assert not any(is_numeric(t) for t in ("周一", "周六", "周日", "周天", "周末"))
    assert "周六" in bigram_tokens("这周六桌游在哪")
    assert "周六" in bigram_tokens("每周六下午")


def test_full_width_text_is_normalised() -> None:
    assert bigram_tokens("ＡＢＣ１２") == ["abc12"]


def test_numbers_and_dates_are_numeric_tokens() -> None:
    assert all(is_numeric(t) for t in ("20", "十月", "三号", "期六"))
    assert not any(is_numeric(t) for t in ("吉他", "周末", "一起"[0:1] + "起"))
    assert numbers("撤离率 20%") != numbers("撤离率 30%")
    assert numbers("一起去吃饭") == frozenset()


@settings(max_examples=200)
@given(st.text(max_size=40))
def test_every_indexed_token_is_one_fts5_token(text: str) -> None:
    """Scope-keyed tokens must survive FTS5's unicode61 tokenizer unsplit, else a
    term could lose its chat key (and with it the per-chat IDF and isolation)."""
    bi = fts.document("group:1", "", text)
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE f USING fts5(x, tokenize = 'ascii')")
    conn.execute("CREATE VIRTUAL TABLE v USING fts5vocab(f, 'row')")
    conn.execute("INSERT INTO f(x) VALUES (?)", (bi,))
    stored = {row[0] for row in conn.execute("SELECT term FROM v")}
    expected = set(bi.split())
    assert stored == expected
    assert all(t.startswith(fts.scope_key("group:1")) for t in stored)


def _runs_char_by_char(text: str) -> list[tuple[bool, str]]:
    """What `_runs` computes, one character at a time (its first version)."""
    runs: list[tuple[bool, str]] = []
    for word in re.findall(r"[^\W_]+", normalise(text)):
        start = 0
        for i in range(1, len(word) + 1):
            if i == len(word) or is_cjk(word[i]) != is_cjk(word[start]):
                runs.append((is_cjk(word[start]), word[start:i]))
                start = i
    return runs


@settings(max_examples=300)
@given(
    st.text(
        st.one_of(
            st.characters(),
            st.characters(min_codepoint=0x3000, max_codepoint=0x9FFF),
            st.characters(min_codepoint=0xAC00, max_codepoint=0xFAFF),
            st.characters(min_codepoint=0x20000, max_codepoint=0x2FA1F),
        ),
        max_size=40,
    )
)
def test_script_runs_split_where_cjk_starts_or_stops(text: str) -> None:
    assert list(_runs(text)) == _runs_char_by_char(text)


def test_scope_keys_differ_per_chat() -> None:
    assert fts.scope_key("group:1") != fts.scope_key("group:2")
    for dialect in ("sqlite", "postgresql"):
        assert fulltext.match_params(dialect, "group:1", []) is None
        one = fulltext.match_params(dialect, "group:1", ["吉他"])
        other = fulltext.match_params(dialect, "group:2", ["吉他"])
        assert one is not None
        assert other is not None
        assert one != other
        assert fts.scope_key("group:1") in str(one)
