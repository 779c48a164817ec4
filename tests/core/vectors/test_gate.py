"""The gate of SPEC.md §8.5 is a pure function: properties, then the named rules."""

from __future__ import annotations

import itertools
from dataclasses import replace

import numpy as np
from hypothesis import given
from hypothesis import strategies as st

from memory_core.vectors.embedder import Calibration
from memory_core.vectors.gate import (
    MIN_POOL,
    Pool,
    Scored,
    decide,
    noise_ceiling,
    one_per_restatement,
    rank,
    restatement_groups,
)
from memory_core.vectors.text import QuestionShape

ASKS = QuestionShape(has_intent=True, subjects=frozenset({"小明"}), first_person=False)

scored_lists = st.lists(
    st.builds(
        Scored,
        memory_id=st.integers(1, 10_000),
        score=st.floats(-1, 1, allow_nan=False),
        shares_terms=st.booleans(),
        answers=st.booleans(),
        stale=st.booleans(),
    ),
    max_size=30,
    unique_by=lambda s: s.memory_id,
)
calibrations = st.builds(
    Calibration, threshold=st.floats(-1, 1, allow_nan=False), margin=st.floats(0, 1)
)


@given(scored_lists, calibrations)
def test_a_guess_is_the_unshared_leader_clearing_both_bars(
    scored: list[Scored], calibration: Calibration
) -> None:
    decision = decide(ASKS, scored, calibration)
    if decision.guess is None:
        return
    best = rank(scored)[0]
    runner_up = rank(scored)[1].score if len(scored) > 1 else 0.0
    assert decision.guess.memory_id == best.memory_id
    assert not best.shares_terms
    assert best.answers
    assert not best.stale
    assert decision.guess.score >= calibration.threshold
    assert decision.guess.margin == best.score - runner_up
    assert decision.guess.margin >= calibration.margin


@given(scored_lists, calibrations, st.floats(0, 1))
def test_raising_a_bar_never_creates_a_guess(
    scored: list[Scored], calibration: Calibration, extra: float
) -> None:
    stricter = Calibration(calibration.threshold + extra, calibration.margin + extra)
    if decide(ASKS, scored, calibration).guess is None:
        assert decide(ASKS, scored, stricter).guess is None


@given(scored_lists, calibrations, st.booleans(), st.booleans())
def test_no_intent_or_no_subject_means_no_guess(
    scored: list[Scored], calibration: Calibration, intent: bool, subject: bool
) -> None:
    shape = QuestionShape(
        has_intent=intent,
        subjects=frozenset({"小明"}) if subject else frozenset(),
        first_person=False,
    )
    decision = decide(shape, scored, calibration)
    if not (intent and subject):
        assert decision.guess is None


@given(scored_lists)
def test_rank_is_a_total_order_best_first(scored: list[Scored]) -> None:
    ranked = rank(scored)
    assert sorted(s.memory_id for s in ranked) == sorted(s.memory_id for s in scored)
    assert all(a.score >= b.score for a, b in itertools.pairwise(ranked))
    assert rank(list(reversed(scored))) == ranked


CAL = Calibration(threshold=0.3, margin=0.05)


def test_clear_leader_is_guessed() -> None:
    decision = decide(ASKS, [Scored(1, 0.5, False), Scored(2, 0.3, False)], CAL)
    assert decision.guess is not None
    assert decision.guess.memory_id == 1
    assert abs(decision.guess.margin - 0.2) < 1e-9


def test_near_tie_is_refused() -> None:
    decision = decide(ASKS, [Scored(1, 0.50, False), Scored(2, 0.48, False)], CAL)
    assert decision.guess is None
    assert "margin" in decision.reason


def test_low_score_is_refused() -> None:
    assert decide(ASKS, [Scored(1, 0.29, False)], CAL).guess is None


def test_leader_sharing_words_belongs_to_the_lexical_stages() -> None:
    decision = decide(ASKS, [Scored(1, 0.9, True), Scored(2, 0.2, False)], CAL)
    assert decision.guess is None
    assert decision.best == Scored(1, 0.9, True)


def test_leader_that_cannot_give_the_answer_asked_is_refused() -> None:
    decision = decide(ASKS, [Scored(1, 0.9, False, answers=False), Scored(2, 0.1, False)], CAL)
    assert decision.guess is None
    assert "answer" in decision.reason


def test_single_candidate_competes_with_zero() -> None:
    decision = decide(ASKS, [Scored(7, 0.4, False)], CAL)
    assert decision.guess is not None
    assert decision.guess.margin == 0.4


def test_a_question_about_a_thing_the_chat_never_named_is_refused() -> None:
    # "老王家大黄还挠沙发吗" where the chat knows 老王 but never heard of 大黄: the
    # best memory about 老王 is about another of his things, however well it scores.
    about_unheard = replace(ASKS, unheard=frozenset({"大黄"}))
    decision = decide(about_unheard, [Scored(1, 0.9, False), Scored(2, 0.1, False)], CAL)
    assert decision.guess is None
    assert "大黄" in decision.reason
    assert decide(ASKS, [Scored(1, 0.9, False), Scored(2, 0.1, False)], CAL).guess is not None


def test_first_person_counts_as_subject() -> None:
    me = QuestionShape(has_intent=True, subjects=frozenset(), first_person=True)
    assert decide(me, [Scored(1, 0.9, False)], CAL).guess is not None


LEADER = [Scored(1, 0.40, False), Scored(2, 0.20, False)]


def test_a_leader_within_the_noise_of_a_large_pool_is_refused() -> None:
    """After months a person has hundreds of memories: the best of them clearing the
    threshold by luck is no guess (distractor floods showed exactly this)."""
    rng = np.random.default_rng(7)
    noise = rng.normal(0.05, 0.08, 200)
    best = float(noise.max())
    scored = [Scored(1, best, False), Scored(2, best - 0.1, False)]
    low = Calibration(threshold=0.0, margin=0.02)
    decision = decide(ASKS, scored, low, Pool.of(noise))
    assert decision.guess is None
    assert "noise" in decision.reason
    # The same leader picked from a handful of memories is judged by the threshold alone.
    assert decide(ASKS, scored, low, Pool.of(noise[: MIN_POOL - 1])).guess is not None


def test_a_clear_outlier_of_a_large_pool_is_guessed() -> None:
    pool = Pool.of(np.array([0.40, 0.20] + [0.05, 0.07] * 100))
    assert decide(ASKS, LEADER, CAL, pool).guess is not None


@given(
    st.integers(0, 5000),
    st.floats(-1, 1, allow_nan=False),
    st.floats(0, 1, allow_nan=False),
    st.floats(0, 1, allow_nan=False),
)
def test_the_noise_ceiling_rises_with_pool_size_and_spread(
    n: int, mean: float, std: float, more: float
) -> None:
    ceiling = noise_ceiling(Pool(n, mean, std))
    if n < MIN_POOL:
        assert ceiling == float("-inf")
        return
    assert ceiling >= mean
    assert noise_ceiling(Pool(n * 2, mean, std)) >= ceiling
    assert noise_ceiling(Pool(n, mean, std + more)) >= ceiling


SAYINGS = ("小明在学吉他", "小明在学吉他了", "小明芒果过敏", "小明养了3只猫", "小明养了4只猫")


@given(
    st.lists(
        st.tuples(st.integers(1, 500), st.floats(-1, 1, allow_nan=False), st.sampled_from(SAYINGS)),
        max_size=12,
        unique_by=lambda t: t[0],
    )
)
def test_restatements_count_once(items: list[tuple[int, float, str]]) -> None:
    ranked = rank([Scored(i, score, False) for i, score, _ in items])
    texts = {i: text for i, _, text in items}
    groups = restatement_groups(ranked, texts)
    # Every candidate lands in exactly one group, and no number is merged away.
    assert sorted(s.memory_id for g in groups for s in g) == sorted(texts)
    for g in groups:
        assert len({tuple(sorted(c for c in texts[s.memory_id] if c.isdigit())) for s in g}) == 1
    once = one_per_restatement(groups)
    assert [s.score for s in once] == sorted((s.score for s in once), reverse=True)
    assert [s.memory_id for s in once] == [min(s.memory_id for s in g) for g in groups]
    # 3 cats and 4 cats are different facts, however alike the wording.
    cats = {texts[s.memory_id] for s in once if "猫" in texts[s.memory_id]}
    assert cats == {t for t in texts.values() if "猫" in t}
