"""The console's pure formatting: a recall reason without its band and P (they have
columns of their own), and every place the vectors can live said in Chinese."""

from __future__ import annotations

import re
from pathlib import Path
from typing import cast

from memory_core.clock import SystemClock
from memory_core.ops.backend import VECTORS_OFF
from memory_core.recall.dense_port import RELATED_LABEL
from memory_core.storage.engine import Database
from memory_core.vectors.pgvector_place import PgvectorPlace
from memory_core.vectors.place import FolderPlace, TablePlace
from nonebot_plugin_yuji.console.format import reason_words, vectors_label


def test_a_reason_loses_its_band_and_its_p() -> None:
    assert reason_words("相关度 0.91：问到的词它都说到了") == "问到的词它都说到了"
    related = f"{RELATED_LABEL}（相关度 0.41：说的是同一个人）（以前的情况，2026-01-02 起不再成立）"
    assert reason_words(related) == "说的是同一个人（以前的情况，2026-01-02 起不再成立）"
    assert reason_words("相关度 0.50") == ""


ENGLISH = {"file", "index", "under", "in", "the", "database", "scored", "process", "for", "a"}
ENGLISH |= {"chat", "over", "exact", "below", "model"}
"""The words of the English descriptions (`yuji status` keeps those)."""


def test_every_vector_place_is_said_in_chinese() -> None:
    db = cast(Database, None)  # the descriptions never touch the database
    places = [
        FolderPlace(Path("/srv/yuji/data/vectors")).description,
        TablePlace(db, SystemClock()).description,
        PgvectorPlace(db, SystemClock()).description,
        VECTORS_OFF,
    ]
    for where in places:
        said = vectors_label(where)
        english = set(re.findall(r"\b[a-z]+\b", said)) & ENGLISH
        assert english == set(), said
        assert re.search(r"[\u4e00-\u9fff]", said), said
