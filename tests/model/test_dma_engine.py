"""A simulated program's DMA engine (`dma_engine`) under the steady-state tracker (`steady`): on loop
bodies of reads, writes, waits and work, drawn at random, adding up a steady run gives what simulating
every iteration gives.

Reads and writes have different latencies here, so a write started after a read can be ready before it,
at the same moment, or after it; round step costs make exact ties common. A tie that rounding broke one
way in one iteration and the other way in the next made identical iterations differ, and the tracker
extrapolate the first (one body in 3,000 before `dma_engine.TIE`). The same holds for the engine whose
reads and writes move side by side (`dma_engine.SharedEngine`, the v5e's), whose copies in motion are
part of the state the tracker compares.
"""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import sandbox.harness.model.simulate as simulate
from sandbox.harness.model.cost import Program, Rates
from sandbox.harness.model.simulate import program_steps

# 1 GB/s reads, 0.7 GB/s writes, 1.5 us a read's latency, 0.5 us a write's: round numbers, ties likely.
RATES = Rates(
    bandwidth=1e9,
    mxu={"bf16": 1e12},
    vector=1e12,
    step=1e-6,
    launch=2e-6,
    cores=1,
    latency=1.5e-6,
    write_latency=0.5e-6,
    write=0.7e9,
)
# The same with reads and writes in two lanes, reads at 0.3 and writes at 0.6 of their own rates while
# both move, a copy starting beside the other lane's paying 0.05 us, and 0.5 us of a read's latency after
# its bytes move.
SHARED = dataclasses.replace(
    RATES,
    dma_read=1e9,
    dma_write=0.8e9,
    dma_read_share=0.3,
    dma_write_share=0.6,
    dma_switch=0.05e-6,
    dma_read_tail=0.5e-6,
)
SEMAPHORES = ("a", "b", "c")
SIZES = (100, 400, 1600)

EVENT = st.one_of(
    st.tuples(
        st.just("dma"), st.sampled_from(SIZES), st.sampled_from(SEMAPHORES), st.sampled_from(("in", "out"))
    ),
    st.tuples(st.just("wait"), st.sampled_from(SEMAPHORES), st.sampled_from(SIZES)),
    st.tuples(st.just("work"), st.just({}), st.sampled_from((1e5, 1e6))),
)


class _EveryStep(simulate.Tracker):
    def forward(self, state, at, done):  # type: ignore[no-untyped-def]
        return at  # never skip: the step-by-step simulation


@settings(max_examples=300, deadline=None)
@given(st.lists(EVENT, min_size=1, max_size=6), st.integers(5, 60), st.sampled_from((RATES, SHARED)))
@example(  # the write is ready as the read started at the step's start: the tie rounding broke in iteration 11
    [
        ("dma", 100, "b", "in"),
        ("wait", "c", 400),
        ("work", {}, 1e6),
        ("wait", "c", 1600),
        ("dma", 100, "c", "out"),
        ("wait", "b", 1600),
    ],
    26,
    RATES,
)
def test_a_steady_run_of_copies_adds_up_to_what_every_iteration_gives(body, iterations, rates):
    body = [("step", "loop"), *body]
    program = Program("p", [[event for _ in range(iterations) for event in body]])  # the same objects
    steady = program_steps(program, rates)
    tracker, simulate.Tracker = simulate.Tracker, _EveryStep
    try:
        every = program_steps(program, rates)
    finally:
        simulate.Tracker = tracker
    assert steady.total == pytest.approx(every.total, rel=1e-12, abs=1e-15)
    assert steady.seconds == pytest.approx(every.seconds, rel=1e-9, abs=1e-15)
