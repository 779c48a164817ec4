"""Small hand-made relevance models, so recall tests do not depend on the shipped
weights (those are retrained from the corpus; these stay put).

Each model is a plain logistic regression over a few features with mean 0 and scale 1,
so its P can be worked out by hand: P = sigmoid(bias + sum(weight * value)).
"""

from __future__ import annotations

import numpy as np

from memory_core.recall.chatter import ChatterGate
from memory_core.recall.relevance import LEXICAL, RelevanceModel

WORDS: dict[str, float] = {
    "cover": 8.0,  # the share of the question's content terms it states
    "names_other": -3.0,  # the question names someone, the memory is about another
    "no_terms": -3.0,  # a question with nothing but names
    "kind_missing": -1.0,  # asks for a time / number / place the memory does not state
    "ended_asked": 3.0,  # a past state asked about the past
    "via_successor": 5.0,  # the current version of a state the question names
    "via_link": 2.0,  # one hop from a leading candidate
}
DENSE: dict[str, float] = {**WORDS, "dense": 3.0}


def hand_model(
    embedder: str = LEXICAL,
    weights: dict[str, float] | None = None,
    *,
    bias: float = -3.5,
    floor: float = 0.3,
    sure: float = 0.8,
    chatter: ChatterGate | None = None,
) -> RelevanceModel:
    chosen = weights if weights is not None else (WORDS if embedder == LEXICAL else DENSE)
    names = tuple(chosen)
    n = len(names)
    return RelevanceModel(
        embedder=embedder,
        features=names,
        mean=np.zeros(n),
        scale=np.ones(n),
        weights=np.array([chosen[name] for name in names], dtype=np.float64),
        bias=bias,
        floor=floor,
        sure=sure,
        chatter=chatter,
    )


LEXICAL_MODEL = hand_model()
FAKE_MODEL = hand_model("fake")
"""For FakeEmbedder (model_id "fake"): words as above, plus cosine."""
