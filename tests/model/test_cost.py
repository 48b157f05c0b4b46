"""The model's arithmetic (`sandbox.harness.model.cost` and `summary`), with round numbers by hand."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from sandbox.harness.model.cost import Grid, Program, Rates
from sandbox.harness.model.grid_time import grid_steps
from sandbox.harness.model.simulate import program_steps
from sandbox.harness.model.summary import summarize

# 1 GB/s, 1 TFLOP/s, 1 T vector ops/s, 1 us a step, 2 us a launch: every term reads off in microseconds.
RATES = Rates(
    bandwidth=1e9,
    mxu={"bf16": 1e12, "f32": 1e12 / 6},
    vector=1e12,
    step=1e-6,
    launch=2e-6,
    cores=1,
)
US = 1e-6


def grid(
    copy_in: list[float], copy_out: list[float], flops: list[float], core: list[int] | None = None
) -> Grid:
    n = len(copy_in)
    return Grid(
        kernel="k",
        core=np.array(core or [0] * n),
        points=np.arange(n)[:, None],
        copy_in=np.array(copy_in, dtype=float),
        copy_out=np.array(copy_out, dtype=float),
        mxu={"bf16": np.array(flops, dtype=float)},
        vector=np.zeros(n),
        min_bytes=float(sum(copy_in) + sum(copy_out)),
        cores=len(set(core or [0])),
    )


def test_grid_compute_bound_hides_copies():
    # 3 steps of 2 us of MXU work; 1 us copies of the next step's blocks hide under them.
    steps = grid_steps(grid([1000, 1000, 1000], [0, 0, 500], [2e6] * 3), RATES)
    assert steps.seconds == pytest.approx([3 * US] * 3)
    # launch 2 + fill 1 + 3 steps x 3 + drain 0.5
    assert steps.total == pytest.approx(12.5 * US)
    assert steps.start == pytest.approx([3 * US, 6 * US, 9 * US])


def test_grid_memory_bound_waits_for_copies():
    # 4 us of copies per step against 2 us of compute: a step lasts its copies plus its fixed cost.
    steps = grid_steps(grid([4000, 4000, 4000], [0, 0, 0], [2e6] * 3), RATES)
    assert steps.seconds == pytest.approx([5 * US, 5 * US, 3 * US])  # the last step has nothing to fetch
    assert steps.total == pytest.approx((2 + 4 + 13) * US)
    estimate = summarize("test", RATES, [steps])
    assert estimate.bound == "memory"
    # compute 6 + memory (fill 4 + stalls 2 + 2) + overhead (launch 2 + 3 steps) = 19 us
    assert estimate.compute_seconds + estimate.memory_seconds + estimate.overhead_seconds == pytest.approx(
        estimate.seconds
    )
    assert estimate.memory_seconds == pytest.approx(8 * US)


def test_grid_write_back_overlaps_the_next_step():
    steps = grid_steps(grid([0, 0], [3000, 3000], [1e6, 1e6]), RATES)
    # step 0: compute 1; step 1: compute 1 vs step 0's 3 us write-back; drain: step 1's write-back.
    assert steps.seconds == pytest.approx([2 * US, 4 * US])
    assert steps.total == pytest.approx((2 + 6 + 3) * US)


def test_grid_two_cores_run_side_by_side():
    steps = grid_steps(grid([0] * 4, [0] * 4, [1e6, 1e6, 5e6, 5e6], core=[0, 0, 1, 1]), RATES)
    assert steps.total == pytest.approx((2 + 2 * 6) * US)  # core 1 is the slow one
    assert steps.critical == 1
    assert steps.start[2] == pytest.approx(steps.start[0])


def test_step_overhead_bound_and_roofline_fraction():
    steps = grid_steps(grid([0] * 10, [0] * 10, [1e5] * 10), RATES)
    estimate = summarize("test", RATES, [steps])
    assert estimate.bound == "step_overhead"
    assert estimate.roofline_seconds == pytest.approx(1 * US)  # 1e6 flops at 1e12
    assert estimate.roofline_fraction == pytest.approx(1 / 13)  # 2 + 10 x (1 + 0.1) = 13 us
    (cls,) = estimate.classes
    assert (cls.count, cls.bound) == (10, "step_overhead")


def test_program_dma_engine_serialises_copies_and_waits_block():
    events = [
        ("dma", 2000, "a", "in"),  # 2 us on the engine
        ("dma", 1000, "b", "in"),  # queued behind it: lands at 3 us
        ("step", "s0"),
        ("wait", "b", 1000),
        ("work", {"bf16": 1e6}, 0.0),
    ]
    steps = program_steps(Program("p", [events]), RATES)
    # launch 2; step 0 starts at 2, pays 1 (t = 3), waits for b until 2 + 3 = 5, works 1: 6 us.
    assert steps.total == pytest.approx(6 * US)
    assert steps.seconds == pytest.approx([4 * US])
    assert steps.hbm_bytes == 3000


def test_program_dma_latency_delays_a_wait_not_the_engine():
    """A copy is ready `latency` after its start; the engine moves the copies ready meanwhile, so two
    copies in flight pay one latency between them (as "landed a latency after its last byte" would)."""
    rates = dataclasses.replace(RATES, latency=1.5 * US)
    events = [
        ("dma", 2000, "a", "in"),  # bytes moved by 4 us, landed at 5.5
        ("dma", 1000, "b", "in"),  # on the engine right after a: moved by 5 us, landed at 6.5
        ("step", "s0"),
        ("wait", "a", 2000),
        ("wait", "b", 1000),
        ("work", {"bf16": 1e6}, 0.0),
    ]
    steps = program_steps(Program("p", [events]), rates)
    # launch 2; the step starts at 2, pays 1, waits until 6.5, works 1: 7.5 us (6 without the latency).
    assert steps.total == pytest.approx(7.5 * US)
    assert steps.seconds == pytest.approx([5.5 * US])


def test_program_write_lands_after_its_own_latency_and_reads_in_flight_overlap_theirs():
    """The v5e's rule (`chips_v5e.V5E_DMA_WRITE_LATENCY_CYCLES`): a write (VMEM -> HBM) lands
    `write_latency` after its start before the engine moves it, a read `latency`; two reads in flight
    pay one latency between them, since the engine moves the first while the second's passes."""
    rates = dataclasses.replace(RATES, latency=1.5 * US, write_latency=0.5 * US)
    events = [
        ("dma", 1000, "r", "in"),  # moved by 3 us, landed at 4.5
        ("dma", 1000, "r", "in"),  # moved by 4 us, landed at 5.5
        ("step", "s0"),  # from 2 to 3 us
        ("wait", "r", 2000),  # until 5.5
        ("dma", 1000, "w", "out"),  # moved by 6.5 us, landed at 7 (8 at a read's latency)
        ("wait", "w", 1000),
    ]
    steps = program_steps(Program("p", [events]), rates)
    assert steps.total == pytest.approx(7 * US)


def test_program_write_ready_before_a_read_issued_just_before_it_is_moved_first():
    """`dma_engine`: a copy is ready its latency after its issue and the engine takes copies in the
    order they became ready, so a write (latency 0.5 us) started right after a read (1.5 us) is moved
    first; in issue order it would have waited behind the read's bytes."""
    rates = dataclasses.replace(RATES, latency=1.5 * US, write_latency=0.5 * US)
    issued = [
        ("step", "s0"),  # from 2 to 3 us
        ("dma", 1000, "r", "in"),  # ready at 4.5, moved by 5.5
        ("dma", 1000, "w", "out"),  # ready at 3.5, moved by 4.5
        ("wait", "w", 1000),
    ]
    assert program_steps(Program("p", [issued]), rates).total == pytest.approx(4.5 * US)
    both = [*issued, ("wait", "r", 1000)]
    assert program_steps(Program("p", [both]), rates).total == pytest.approx(5.5 * US)


def test_program_copies_never_waited_for_still_occupy_the_engine():
    """A copy a program starts and never waits for is still moved: one started after it lands later."""
    events = [
        ("dma", 3000, "lost", "in"),  # moved from 2 to 5 us, never waited for
        ("step", "s0"),  # from 2 to 3 us
        ("dma", 1000, "r", "in"),  # behind it: moved by 6
        ("wait", "r", 1000),
    ]
    assert program_steps(Program("p", [events]), RATES).total == pytest.approx(6 * US)


def test_program_reads_and_writes_move_side_by_side_sharing_the_hbm_on_a_shared_engine():
    """`dma_engine.SharedEngine` (the v5e's): a read and a write each move at their own rate alone and at
    their lane's share of it while both move (the writes keep most of theirs, as one write beside reads
    did on the v5e, part 19); a copy that starts beside the other lane's pays the switch; what one has
    left after the other lands moves at its full rate. One queue would move them in turn (1 + 2 us); two
    lanes ignoring each other would land the write by 2 us."""
    rates = dataclasses.replace(
        RATES, dma_read=1e9, dma_write=0.5e9, dma_read_share=0.25, dma_write_share=0.75, dma_switch=0.2 * US
    )
    read, write = [("dma", 1000, "r", "in")], [("dma", 1000, "w", "out")]
    step = [("step", "s0")]  # from 2 to 3 us
    alone = [*step, *read, ("wait", "r", 1000)], [*step, *write, ("wait", "w", 1000)]
    assert [program_steps(Program("p", [events]), rates).total for events in alone] == pytest.approx(
        [4 * US, 5 * US]
    )
    # both from 3 us: the write starts beside the read, so 2 + 0.2 us of its own moving at 0.75 lands it
    # after 2.933 us; the read has moved 0.733 us of its 1 by then, and the rest alone
    both = [*step, *read, *write, ("wait", "w", 1000)]
    assert program_steps(Program("p", [both]), rates).total == pytest.approx((3 + 2.2 / 0.75) * US)
    assert program_steps(Program("p", [[*both, ("wait", "r", 1000)]]), rates).total == pytest.approx(
        (3 + 2.2 / 0.75 + 1 - 2.2 / 0.75 * 0.25) * US
    )


def test_program_read_latency_after_its_bytes_lets_a_later_write_slow_it():
    """`simulate._tail` (the v5e's `V5E_DMA_READ_TAIL_CYCLES`): a read's bytes move before the end of its
    latency, the rest after its last byte. Alone it lands when it did (3 us + its latency + its bytes); a
    write issued with it, ready a latency later, moves beside the read's last bytes and slows them."""
    rates = dataclasses.replace(
        RATES,
        dma_read=1e9,
        dma_write=0.5e9,
        dma_read_share=0.25,
        dma_write_share=0.75,
        latency=1 * US,
        dma_read_tail=0.5 * US,
    )
    read, write = [("dma", 1000, "r", "in")], [("dma", 1000, "w", "out")]
    step = [("step", "s0")]  # from 2 to 3 us
    assert program_steps(Program("p", [[*step, *read, ("wait", "r", 1000)]]), rates).total == pytest.approx(
        5 * US
    )
    # the read moves alone from 3.5 to 4 us (half its bytes), then at 0.25 beside the write: the other half
    # by 6 us, landing 0.5 us later; the write, at 0.75 until 6 us, has 0.5 us left then, alone
    both = [*step, *read, *write]
    assert program_steps(Program("p", [[*both, ("wait", "r", 1000)]]), rates).total == pytest.approx(6.5 * US)
    assert program_steps(Program("p", [[*both, ("wait", "w", 1000)]]), rates).total == pytest.approx(6.5 * US)
    without_tail = dataclasses.replace(rates, dma_read_tail=0.0)  # both from 4 us: the read is slower
    assert program_steps(Program("p", [[*both, ("wait", "r", 1000)]]), without_tail).total > 6.5 * US


def test_program_roofline_bytes_are_what_its_copies_move_where_fewer_than_its_operands():
    """A program that reads 1,000 bytes of an operand of 4,000 (a slice, a page of a pool; or writes from an
    input it never reads, bench/tpu/sweeps/dma_write.py) can run in those bytes' time: its least bytes, the
    roofline's, are the moved ones; one that re-reads keeps its operands once (the chip's v5e wrote 64 MiB
    at 653 GB/s past a roofline that counted the 64 MiB input too)."""
    reads_a_slice = Program("p", [[("dma", 1000, "r", "in"), ("wait", "r", 1000)]], min_bytes=4000)
    assert program_steps(reads_a_slice, RATES).min_bytes == 1000
    rereads = Program("p", [[("dma", 3000, "r", "in"), ("wait", "r", 3000)] * 2], min_bytes=4000)
    assert program_steps(rereads, RATES).min_bytes == 4000
    moves_nothing = Program("p", [[("work", {}, 1e6)]], min_bytes=4000)
    assert program_steps(moves_nothing, RATES).min_bytes == 4000


def test_program_with_many_copies_in_flight_simulates_in_about_linear_time():
    """20,000 copies started before any wait, waited last first: the engine keeps the copies not yet
    placed in a heap, so placing them all costs n log n, not n^2 (44 s here when each placement searched
    the whole queue; 0.4 s with the heap)."""
    import time

    events = [("step", "s"), *[("dma", 100, i, "in") for i in range(20_000)]]
    events += [("wait", i, 100) for i in reversed(range(20_000))]
    began = time.process_time()
    steps = program_steps(Program("p", [events]), RATES)
    assert steps.total == pytest.approx((2 + 1 + 2000) * US)  # launch, the step, 2 MB at 1 GB/s
    assert time.process_time() - began < 10


def test_program_loop_step_without_mxu_work_costs_the_chips_loop_step():
    """The v5e's rule (`chips_v5e.V5E_LOOP_STEP_CYCLES`): a program's own loop iteration without MXU work
    costs the loop step, not a grid's dotless step; one with a dot the whole step (the MXU's fill and
    drain)."""
    rates = dataclasses.replace(RATES, dotless_step=0.25 * US, loop_step=0.05 * US)
    copying = [("step", "copy"), ("work", {}, 1e6)]  # 1 us of vector work, no dot
    dotting = [("step", "dot"), ("work", {"bf16": 1e6}, 0.0)]
    steps = program_steps(Program("p", [copying + dotting]), rates)
    assert steps.overhead == pytest.approx([0.05 * US, 1 * US])


def test_program_step_without_mxu_work_costs_the_dotless_step():
    rates = dataclasses.replace(RATES, dotless_step=0.25 * US)
    copying = [("step", "copy"), ("work", {}, 1e6)]  # 1 us of vector work, no dot
    dotting = [("step", "dot"), ("work", {"bf16": 1e6}, 0.0)]
    steps = program_steps(Program("p", [copying + dotting]), rates)
    assert steps.seconds == pytest.approx([1.25 * US, 2 * US])
    assert steps.overhead == pytest.approx([0.25 * US, 1 * US])


def test_program_barrier_waits_for_the_slower_core():
    fast = [("step", "a"), ("work", {"bf16": 1e6}, 0.0), ("signal", 1, "sem", 1), ("sem_wait", "sem", 1)]
    slow = [("step", "a"), ("work", {"bf16": 5e6}, 0.0), ("signal", 0, "sem", 1), ("sem_wait", "sem", 1)]
    tail = [("step", "b"), ("work", {"bf16": 1e6}, 0.0)]
    steps = program_steps(Program("p", [fast + tail, slow + tail]), RATES)
    # core 1 signals at 2 + 1 + 5 = 8 us; core 0 waits for it, then both run step b: 8 + 2 = 10 us.
    assert steps.total == pytest.approx(10 * US)
    assert steps.start[steps.core == 0][1] == pytest.approx(8 * US)


def test_grid_step_with_nothing_to_do_pays_no_fixed_cost():
    """A causal mask's skipped block: no work, no copy for it, no DMA started: only its scalar work."""
    rates = dataclasses.replace(RATES, dotless_step=0.25 * US, scalar=0.01 * US)
    g = grid([1000, 0, 0, 0], [0, 0, 0, 1000], [1e6, 0, 0, 0])
    g.vector = np.array([0.0, 0.0, 1e6, 0.0])  # step 2 works without a dot: the dotless step
    g.scalar = np.full(4, 3.0)
    g.dmas = np.zeros(4)
    steps = grid_steps(g, rates)
    # step 0 a dot (1 us + the 1 us step), 1 idle, 2 dotless work (1 us + 0.25), 3 idle but writes back.
    assert steps.overhead == pytest.approx([1.03 * US, 0.03 * US, 0.28 * US, 0.28 * US])
    assert steps.seconds == pytest.approx([2.03 * US, 0.03 * US, 1.28 * US, 0.28 * US])


def test_a_dotless_step_hides_part_of_its_fixed_cost_under_its_copies():
    """The v5e's rule (`chips_v5e.V5E_DOTLESS_STEP_HIDDEN`): a step without MXU work pays its fixed cost
    less a share of the seconds its copies keep the engine busy, never less than the floor; a step with
    a dot pays its whole fixed cost whatever it copies."""
    rates = dataclasses.replace(RATES, dotless_step=0.5 * US, dotless_hidden=0.25, dotless_floor=0.2 * US)
    # Copies in at 1 GB/s, each step's beside the next step's block: 0.4 us, 2 us, 0.4 us, none.
    g = grid([400, 400, 2000, 400], [0, 0, 0, 0], [0, 0, 0, 1e6])
    g.vector = np.array([1e3, 1e3, 1e3, 0.0])  # steps 0-2 work without a dot, step 3 with one
    steps = grid_steps(g, rates)
    # 0.5 - 0.25 x 0.4 = 0.4 us; 0.5 - 0.25 x 2 = 0 -> the 0.2 us floor; 0.4 us again; a dot: the 1 us step.
    assert steps.overhead == pytest.approx([0.4 * US, 0.2 * US, 0.4 * US, 1.0 * US])
    assert steps.seconds[:2] == pytest.approx([0.8 * US, 2.2 * US])


def test_a_dotless_step_that_crosses_lanes_pays_the_units_latency_in_its_fixed_cost():
    """The v5e's rule (`chips_v5e.V5E_DOTLESS_XLU_CYCLES`): a step without MXU work that uses the
    cross-lane unit (a norm's lane reduction, a transpose) adds `dotless_xlu` to its fixed cost, hidden
    under its copies with the rest; one without cross-lane work (element-wise) and one with a dot do not."""
    rates = dataclasses.replace(
        RATES, units={"alu": 1e12, "xlu": 1e12}, dotless_step=0.5 * US, dotless_xlu=0.3 * US,
        dotless_hidden=0.25, dotless_floor=0.2 * US,
    )  # fmt: skip
    # Copies in at 1 GB/s, each during the step before its own: 0.4 us, 0.4 us, 4 us, none.
    g = grid([400, 400, 400, 4000], [0, 0, 0, 0], [0, 0, 0, 1e6])
    g.units = {"alu": np.full(4, 1e3), "xlu": np.array([1e3, 0.0, 1e3, 1e3])}
    g.vector = g.units["alu"] + g.units["xlu"]
    steps = grid_steps(g, rates)
    # 0: 0.5 + 0.3 - 0.1 = 0.7 us; 1: element-wise 0.5 - 0.1 = 0.4 us; 2: 0.8 - 1 -> the floor 0.2 us;
    # 3: a dot and a lane reduction: the whole 1 us step, nothing added.
    assert steps.overhead == pytest.approx([0.7 * US, 0.4 * US, 0.2 * US, 1.0 * US])
    # The same in a program's steps: a dotless step that reduces across lanes pays 0.5 + 0.3.
    reducing = [("step", "norm"), ("work", {}, 2e3, 0.0, (), {"alu": 1e3, "xlu": 1e3})]
    plain = [("step", "scale"), ("work", {}, 1e3, 0.0, (), {"alu": 1e3})]
    found = program_steps(Program("p", [reducing + plain]), rates)
    assert found.overhead == pytest.approx([0.8 * US, 0.5 * US])


def test_a_reducing_steps_serial_share_grows_with_the_value_it_reduces():
    """The v5e's rule (`chips_v5e.V5E_REDUCTION_SERIAL_GROWTH`): in a step with a lane reduction, the
    share of the shorter of MXU and vector time not overlapped is `serial` at the pivot's elements and
    grows by `serial_growth` per doubling of the largest value reduced, between 0 and 1."""
    rates = dataclasses.replace(
        RATES, units={"alu": 1e12, "xlu": 1e12}, serial=0.25, serial_growth=0.15, serial_pivot=1024.0
    )
    mxu, units = {"bf16": np.full(4, 4e6)}, {"alu": np.full(4, 2e6), "xlu": np.full(4, 1.0)}
    reduced = np.array([1024.0, 4096.0, 256.0, 1 << 30])  # at the pivot, 4x, a quarter, far past it
    found = rates.compute(mxu, np.full(4, 2e6), (), units, reduced)
    # 4 us of MXU work, 2 us on the busiest unit: 4 + share x 2 with shares 0.25, 0.55, 0 (0.25 - 0.3), 1.
    assert found == pytest.approx([4.5 * US, 5.1 * US, 4.0 * US, 6.0 * US])
    # Without the size (a value the walk could not see): the share at the pivot.
    assert rates.compute(mxu, np.full(4, 2e6), (), units) == pytest.approx([4.5 * US] * 4)


def test_f32_dots_run_at_a_sixth_of_bf16():
    g = grid([0], [0], [0])
    g.mxu = {"f32": np.array([1e6])}
    assert grid_steps(g, RATES).seconds[0] == pytest.approx(7 * US)  # 6 us of f32 work + 1 us step


def test_work_that_waits_for_a_dot_follows_its_end():
    # 5 us of dots, 3 us of vector work of which 2 us waits for a dot ending at 4 us of MXU work:
    # max(5, 3, 4 + 2) = 6 us.
    late = ({"bf16": np.array([4e6])}, np.array([2e6]))
    assert RATES.compute({"bf16": np.array([5e6])}, np.array([3e6]), (late,)) == pytest.approx([6 * US])
    # Waiting work that fits after its dot's end within the step's MXU time costs nothing more.
    early = ({"bf16": np.array([1e6])}, np.array([2e6]))
    assert RATES.compute({"bf16": np.array([5e6])}, np.array([3e6]), (early,)) == pytest.approx([5 * US])
    # Two dots, each with its own: the later bound counts (1 + 2.5 against 4 + 2).
    both = (({"bf16": np.array([1e6])}, np.array([2.5e6])), late)
    assert RATES.compute({"bf16": np.array([5e6])}, np.array([4.5e6]), both) == pytest.approx([6 * US])


def test_a_program_step_waits_for_its_dot_before_its_softmax():
    work = ("work", {"bf16": 4e6}, 3e6, 0.0, (({"bf16": 4e6}, 2e6),))
    steps = program_steps(Program("p", [[("step", "s0"), work]]), RATES)
    # launch 2 + step 1 + (the dot 4, then the 2 us that wait for it) = 9 us; 7 us without the wait
    assert steps.total == pytest.approx(9 * US)
    assert steps.compute == pytest.approx([6 * US])


def test_vector_units_issue_side_by_side_with_a_chain_floor_in_a_reducing_step():
    """Per-unit rates (the v5e's): the busiest unit sets the vector time; a step with a dot and a lane
    reduction lasts at least the chain and adds the serial share of its shorter side; a reducing step
    without a dot has no chain floor (its cross-lane latency is in its fixed cost: `step_overhead`)."""
    rates = Rates(
        bandwidth=1e9, mxu={"bf16": 1e9}, vector=1.0, step=0.0, launch=0.0, cores=1,
        units={"alu": 2.0, "eup": 1.0, "xlu": 1.0, "load": 1.0, "store": 1.0}, chain=7.0, serial=0.5,
    )  # fmt: skip
    mxu = {"bf16": np.array([4e9, 4e9, 0.0])}  # 4 s of MXU work in the first two steps
    units = {
        "alu": np.array([12.0, 12.0, 2.0]),  # 6 s at 2 per second: the busiest unit
        "eup": np.array([5.0, 5.0, 1.0]),
        "xlu": np.array([0.0, 1.0, 1.0]),  # steps 2 and 3 reduce across lanes
    }
    vector = sum(units.values())
    seconds = rates.compute(mxu, vector, (), units)
    # 1: max(4, 6); 2: max(4, 6) + 0.5 x min(4, 6), above the chain of 7; 3: no dot, its busiest unit.
    assert seconds == pytest.approx([6.0, 8.0, 1.0])
    assert rates.compute(mxu, vector) == pytest.approx([17.0, 18.0, 4.0])  # one rate: all units added
    # The chain counts the step's fixed cost: with a 2 s step, step 2's floor is 7 - 2 (under its 8 s).
    fixed = dataclasses.replace(rates, step=2.0, dotless_step=1.0, chain=11.0)
    assert fixed.compute(mxu, vector, (), units) == pytest.approx([6.0, 9.0, 1.0])
