"""LogThrottle: the first of a kind through, repeats counted, one line per interval."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from memory_core import LogThrottle, repeats
from memory_core.log_throttle import MAX_KEYS


class Ticks:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_repeats_within_the_interval_are_held_and_counted() -> None:
    clock = Ticks()
    throttle = LogThrottle(60.0, clock=clock)
    assert throttle.allow("bad frame") == 0
    for _ in range(5):
        clock.now += 1
        assert throttle.allow("bad frame") is None
    assert throttle.pending() == {"bad frame": 5}
    assert throttle.allow("other") == 0  # another key is not held back
    clock.now = 61
    assert throttle.allow("bad frame") == 5
    assert throttle.pending() == {}
    assert repeats(5) == " (and 5 more like it since the last report)"
    assert repeats(0) == ""


def test_memory_stays_flat_however_many_keys() -> None:
    throttle = LogThrottle(60.0, clock=Ticks())
    for i in range(MAX_KEYS * 3):
        throttle.allow(i)
    assert len(throttle._seen) == MAX_KEYS  # pyright: ignore[reportPrivateUsage]


@given(st.lists(st.floats(min_value=0, max_value=10), min_size=1, max_size=200))
def test_lines_let_through_plus_held_count_every_call(gaps: list[float]) -> None:
    clock = Ticks()
    throttle = LogThrottle(5.0, clock=clock)
    lines = held_reported = 0
    for gap in gaps:
        clock.now += gap
        held = throttle.allow("k")
        if held is not None:
            lines += 1
            held_reported += held
    # Nothing is lost: every call is either a line, reported later, or still pending.
    assert lines + held_reported + sum(throttle.pending().values()) == len(gaps)
