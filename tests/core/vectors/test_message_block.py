"""A chat's message vectors in memory (`_Block`, vectors/messages.py) answer a window
exactly as masking the whole held matrix would, through acknowledgements and
appends, and `dot_rows` is the plain matrix-vector product."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from memory_core.vectors.messages import _Block  # pyright: ignore[reportPrivateUsage]
from memory_core.vectors.store import BLOCK_ELEMENTS, dot_rows

DIM = 4

# (ack up to, append this many, window lo, window hi) steps
STEP = st.tuples(st.integers(0, 40), st.integers(0, 30), st.integers(0, 120), st.integers(0, 120))


def rows(ids: np.ndarray) -> np.ndarray:
    return np.repeat(ids[:, None].astype(np.float32), DIM, axis=1) * np.arange(
        1, DIM + 1, dtype=np.float32
    )


@given(st.integers(0, 10), st.lists(STEP, max_size=12))
def test_a_block_answers_like_a_mask(first: int, steps: list[tuple[int, int, int, int]]) -> None:
    ids = np.arange(1, first + 1, dtype=np.int64)
    block = _Block(ids, rows(ids) if first else np.zeros((0, 0), np.float32), 0.0)
    held = ids
    acked = 0
    for ack, more, lo, hi in steps:
        acked = max(acked, ack)
        block.drop_through(acked)
        held = held[held > acked]
        start = max(int(held[-1]) if len(held) else 0, acked)
        new = np.arange(start + 1, start + 1 + more, dtype=np.int64)
        block.append(new, rows(new))
        held = np.concatenate([held, new])
        got_ids, got_rows = block.between(lo, hi)
        keep = (held > lo) & (held < hi)
        assert got_ids.tolist() == held[keep].tolist()
        assert got_rows.shape[0] == len(got_ids)
        if len(got_ids):
            assert np.array_equal(got_rows, rows(held[keep]))
        assert block.ids.tolist() == held.tolist()


def test_dot_rows_is_the_matrix_vector_product() -> None:
    rng = np.random.default_rng(3)
    query = rng.normal(size=384).astype(np.float32)
    for n in (0, 1, BLOCK_ELEMENTS // 384, BLOCK_ELEMENTS // 384 + 1, 5_003):
        matrix = rng.normal(size=(n, 384)).astype(np.float32)
        got = dot_rows(matrix, query)
        assert got.dtype == np.float32
        assert got.shape == (n,)
        np.testing.assert_allclose(got, matrix @ query, rtol=1e-5, atol=1e-5)
