"""The TPU time model: how long a kernel would take on a real chip, from its trace, never by running it.

    cost.py               the arithmetic (pure numpy): a grid pipeline in closed form, a program simulated
    summary.py            steps → the protocol's `Estimate` (bound, roofline fraction, step classes, timeline)
    evaluate.py           scalar values of a jaxpr without data (grid indices, loop counters, SMEM tables)
    walker.py             a kernel body walked as a core would run it: work per step, or program events
    syncs.py              its DMA and semaphore operations as program events
    memory.py             its loads and stores of VMEM and SMEM refs
    barriers.py           which work of a step waits for a dot to finish (a reduction across its columns)
    hoisting.py           loop-invariant work, costed once before the loop
    common.py             work a body repeats with the same operands, costed once
    iteration_classes.py  a long pipelined loop walked once per iteration class, not once per step
    steady.py             the simulator's shortcut: a run of identical steps in steady state added up in one go
    ops.py                one equation: a dot's kind and flops, a scan's layout; the work collected (Acc)
    grid.py               a `pallas_call`: block copies per step from its index maps, the body's work
    program.py            a `pl.kernel` over a TensorCoreMesh: one program per core
    families/             what kind of kernel it is (one module per family, one registry) and how far to trust it
    estimate.py           trace a function for a chip and estimate every kernel in it

Every assumption is listed in `summary.ASSUMPTIONS` (shown with each estimate) and in docs/tpu-time-model.md;
the chip constants, with their sources, are in `sandbox.protocol.chips`.
"""
