"""The redactor: a secret never survives, however a URL encoded it."""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import quote, quote_plus

from hypothesis import given
from hypothesis import strategies as st

from memory_core.ops.redact import MASK, Redactor

ENCODINGS: dict[str, Callable[[str], str]] = {
    "quote": lambda s: quote(s, safe=""),
    "quote, / kept": quote,
    "quote_plus": quote_plus,
    "encodeURIComponent": lambda s: quote(s, safe="!~*'()"),
    "lower-case hex": lambda s: re.sub(r"%[0-9A-F]{2}", lambda m: m.group().lower(), quote(s, "")),
}

secrets = st.text(
    st.characters(codec="utf-8", exclude_categories=("Cs", "Cc", "Zs")), min_size=8, max_size=40
)


@given(secret=secrets, encoding=st.sampled_from(sorted(ENCODINGS)))
def test_a_url_encoded_secret_in_an_access_line_is_masked(secret: str, encoding: str) -> None:
    encoded = ENCODINGS[encoding](secret)
    line = f'127.0.0.1:5 - "GET /onebot/v11/ws?x=1&access_token={encoded}&y=%20z HTTP/1.1" 101'

    masked = Redactor([secret])(line)

    assert secret not in masked
    assert encoded not in masked
    assert f"access_token={MASK}&y=%20z HTTP/1.1" in masked
    assert masked.startswith('127.0.0.1:5 - "GET /onebot/v11/ws?x=1&')


def test_encoded_text_without_a_secret_is_left_alone() -> None:
    line = 'GET /search?q=%E9%B1%BC%E9%B1%BC&page=2 "ok"'
    assert Redactor(["some-secret-token"])(line) == line


def test_the_literal_secret_and_a_bot_tokens_secret_half_are_masked() -> None:
    redact = Redactor(["42:tg-secret-part"])
    assert (
        redact("url /bot42:tg-secret-part/send and tg-secret-part")
        == f"url /bot{MASK}/send and {MASK}"
    )
