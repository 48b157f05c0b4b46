import itertools

import pytest

from sandbox.harness.checks.timing import measure, relative_standard_error, summarize


class FakeClock:
    """Each run() advances time by the next duration; the clock only moves when run() is called."""

    def __init__(self, durations):
        self.now = 0.0
        self.durations = itertools.cycle(durations)

    def __call__(self):
        return self.now

    def run(self):
        self.now += next(self.durations)


def test_measure_stops_once_stable():
    clock = FakeClock([0.010])
    stats = measure(clock.run, budget_seconds=100, clock=clock)
    assert stats.n == 3  # identical samples: RSE 0 after the minimum count
    assert stats.median == pytest.approx(0.010) and stats.std == pytest.approx(0.0, abs=1e-12)


def test_measure_respects_budget_with_noisy_samples():
    clock = FakeClock([0.1, 0.3, 0.05, 0.4])
    stats = measure(clock.run, budget_seconds=1.0, clock=clock, target_rse=1e-9)
    assert 3 <= stats.n <= 6 and stats.min == pytest.approx(0.05)


def test_measure_takes_minimum_repeats_even_if_slow():
    clock = FakeClock([5.0])
    assert measure(clock.run, budget_seconds=0.1, clock=clock).n == 3


def test_summarize_and_rse():
    stats = summarize([1.0, 2.0, 3.0])
    assert (stats.mean, stats.median, stats.min, stats.max) == (2.0, 2.0, 1.0, 3.0)
    assert abs(relative_standard_error([1.0, 2.0, 3.0]) - (1.0 / 3**0.5) / 2.0) < 1e-12
