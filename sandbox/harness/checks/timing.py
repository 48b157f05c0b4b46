"""Adaptive repeat timing: warm-up, then repeat until the relative standard error is small.

The clock and the callable are parameters so the loop is testable without JAX.
"""

from __future__ import annotations

import math
import statistics
import time
from collections.abc import Callable

from sandbox.protocol import Stats

TARGET_RSE = 0.01
MIN_REPEATS = 3
MAX_REPEATS = 200


def measure(
    run: Callable[[], object],
    budget_seconds: float,
    *,
    clock: Callable[[], float] = time.perf_counter,
    min_repeats: int = MIN_REPEATS,
    max_repeats: int = MAX_REPEATS,
    target_rse: float = TARGET_RSE,
) -> Stats:
    """Time `run()` (already warmed up) until RSE < target, the budget is spent, or max_repeats.

    At least `min_repeats` samples are taken even when one call exceeds the budget, so every
    reported figure has a spread.
    """
    samples: list[float] = []
    started = clock()
    while len(samples) < max_repeats:
        t0 = clock()
        run()
        samples.append(clock() - t0)
        if len(samples) >= min_repeats and (
            relative_standard_error(samples) < target_rse or clock() - started >= budget_seconds
        ):
            break
    return summarize(samples)


def relative_standard_error(samples: list[float]) -> float:
    mean = statistics.fmean(samples)
    if len(samples) < 2 or mean <= 0:
        return math.inf
    return statistics.stdev(samples) / math.sqrt(len(samples)) / mean


def summarize(samples: list[float]) -> Stats:
    return Stats(
        n=len(samples),
        mean=statistics.fmean(samples),
        median=statistics.median(samples),
        min=min(samples),
        max=max(samples),
        std=statistics.stdev(samples) if len(samples) > 1 else 0.0,
        rse=relative_standard_error(samples) if len(samples) > 1 else 0.0,
    )
