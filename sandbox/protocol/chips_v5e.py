"""What the lent TPU v5e measured that no published figure gives: the time model's v5e-only rates and
the chip's transcendental error bands (`sandbox.protocol.chips` puts them in its table; every other
chip keeps the published or assumed figures there).

Every figure was taken on the lent v5e with JAX 0.12.0.1 and libtpu 0.0.50.1 (bench/tpu/README.md).
"""

from __future__ import annotations

from typing import Any

# Writes to HBM on the lent v5e (JAX 0.12.0.1, libtpu 0.0.50.1, 2026-12-06) ran at about two thirds of the
# peak while reads ran at it: a DMA-driven copy (read n bytes, write n) took 0.40 ms for 2 x 134 MB where
# the peak gives 0.33, an element-wise kernel (2 reads, 1 write) 1.15 ms for 805 MB (0.98), and the
# BlockSpec matmuls the model called memory-bound (reads mostly) were at or above the peak's time. One
# factor on writes fits all three; uniform slower HBM fits the first two and misses the third by 20 %.
# Fitted on the fit half of bench/tpu/v5e/tune.jsonl (`bench/tpu/calibration.py`'s hash split): the
# smallest median |log(estimate / measured)| on a grid of 0.50-1.00 by 0.05 (0.70: 0.069; 0.65: 0.067;
# 0.60: 0.071; 1.00: 0.094). Other chips: not measured, writes at the peak.
V5E_HBM_WRITE_EFFICIENCY = 0.65

# The v5e's vector units issue side by side (the VLIW bundle's slots), measured on the lent v5e (JAX
# 0.12.0.1, libtpu 0.0.50.1, 2026-12-06: bench/tpu/v5e/tune.jsonl): JAX's flash attention at 128-wide
# blocks ran its kv step in about a quarter of the cycles the units' work added up at one rate gives,
# while its 1024-wide steps took about 1.45x their MXU time. The rates per unit are the nominal ones,
# not fitted: 2 VALU vregs per cycle (scaling-book, Appendix C), the EUP at half that (1), one
# cross-lane vreg, one vector load and one vector store per cycle (ASSUMED: one slot each).
# Three constants are fitted:
# - V5E_REDUCTION_CHAIN_CYCLES: a step with a dot and a lane reduction lasts at least this, its fixed
#   cost V5E_STEP_CYCLES counted inside it: the dependent chain dot -> row max -> exp -> row sum ->
#   rescale, whose latencies no throughput count has. (Until 2026-12-07 it held for steps without a dot
#   too, V5E_DOTLESS_STEP_CYCLES inside it: V5E_DOTLESS_XLU_CYCLES below replaced that.)
#   FITTED on the fit half of every v5e sweep (`bench/tpu/calibration.py`'s hash split): the smallest
#   mean |log(estimate / measured)| of its 113 configs then on a grid of 550-841 (0.0706 at 550, 0.0674
#   at 600, 0.0650 at 650, 0.0644 at 675, 0.0640 at 700, 0.0643 at 725, 0.0650 at 750, 0.0670 at 800,
#   0.0685 at 841).
#   Today's stack ran flash's own 128-wide step in about 715 cycles. Until 2026-12-06 it was solved
#   on JAX's flash attention at (32, 8, 512, 64) on a v5e (2.36 ms, jax-ml/jax#24633: 446 beside the
#   fixed cost, 841 with it), whose 2024 stack ran that step in 864 cycles: those published points
#   validate it now, 9-15 % fast (with XLA's relayout copies at head dim 64 counted, `model.layouts`;
#   13-17 % before). It holds in a `pl.kernel` program's steps too (JAX's paged attention: a flash
#   step per loop iteration).
# - V5E_REDUCTION_SERIAL_SHARE: in such a step the share of the shorter of MXU and vector time that
#   does not overlap the longer (the second dot waits for exp, the statistics for the first dot);
# - V5E_DOTLESS_STEP_CYCLES: the fixed cost of a step without MXU work (element-wise kernels, a
#   softmax, a masked-out block): V5E_STEP_CYCLES, fitted to a matmul, holds the MXU's fill and drain
#   between dependent steps.
#   The serial share FITTED on the fit half of the sweeps (`bench/tpu/calibration.py`'s hash split):
#   the smallest mean |log(estimate / measured)| over flash, splash, softmax and element-wise on a grid
#   of 0.20-0.50 by 0.05 (fit-half mean 0.077, 0.325 with the one-rate rule and STEP_CYCLES for every
#   step). The dotless step re-FITTED with V5E_DMA_ISSUE_CYCLES below (it was 135 at 32 cycles a DMA),
#   and again with the two constants after it (it was 210 with nothing hidden).
# - V5E_DOTLESS_STEP_HIDDEN, V5E_DOTLESS_STEP_FLOOR_CYCLES: a grid step without MXU work hides part of
#   its fixed cost under the copies the DMA engine runs meanwhile (the next block in, the last one out):
#   this share of their cycles, leaving at least the floor. The element-wise sweep moves the same bytes
#   in every config and took about 265 cycles a step beyond its copies at 16-64 KiB blocks but about
#   85-145 at 256 KiB and more; the softmax and RMS norm sweeps at 256 KiB blocks about 90 (where the
#   fixed cost added in full made them +10 ... +12 % slow). Hiding it all was tried and is worse (the
#   small blocks -36 ... -49 %: docs/tpu-time-model.md). FITTED with V5E_DOTLESS_STEP_CYCLES on the
#   fit half of every v5e sweep (`bench/tpu/calibration.py`'s hash split): the smallest mean
#   |log(estimate / measured)| on a grid of 240-330 cycles by 30, share 0.25/0.35/0.50, floor
#   100/140/180 (0.0578 at (270, 0.25, 100), 0.0579 at (270, 0.25, 140); 0.0595 with nothing hidden
#   at 210; 0.0600 or less everywhere on the grid). Of the two, the floor of 140 keeps the relayout
#   probe's 64 steps of 512 KiB copies (v5e/relayout-probe-2026-12-06.json, no sweep's) at -14 %
#   where 100 makes it -15 % (tests/model/test_layouts.py).
#   RE-FITTED 2026-12-08 with the grid's copies at the DMA lanes' rates (V5E_DMA_PAIR_SHARE below) and
#   V5E_DOTLESS_STEP_UNHIDDEN_CYCLES: part 22 (grid_mix.py) showed the fixed cost whole beside copies of
#   up to about 400 cycles a step (about 270 beyond them) and mostly hidden from about 800 on. On the fit
#   half (now with part 22) by mean |log(estimate / measured)|: step 240-290 x share 0.3-0.5 x unhidden
#   200-450 x floor 30-140 x pair 0-0.2: (260, 0.3, 300, 60) 0.0453 at pair 0.1 (0.0471 at 0, 0.0484 at
#   0.2; (270, 0.25, 0, 140) of before 0.0486 with the lanes' rates, 0.0542 without), and with
#   V5E_DOTLESS_XLU_CYCLES at 120 0.0448 (140, chosen below: 0.0450; 170: 0.0453).
# - V5E_DOTLESS_STEP_UNHIDDEN_CYCLES: of a dotless step's copies, the cycles its fixed cost does not
#   hide under (the share counts only beyond them).
# - V5E_REDUCTION_SERIAL_GROWTH, V5E_REDUCTION_SERIAL_PIVOT: the serial share is V5E_REDUCTION_SERIAL_SHARE
#   where the step's largest value reduced over lanes has 2^19 padded elements (flash's (256, 2048)
#   logits) and grows by this per doubling of it, clipped to 0 ... 1 (none at 128 Ki elements and less).
#   Per step, from the sweeps' device times less the model's other steps, flash and splash left about
#   0-0.2 of the shorter side unhidden at (256, 512) logits, 0.2-0.4 at 512 Ki elements, 0.3-0.6 at
#   1 Mi and 0.5-0.65 at 2 Mi: the wider the statistics' source, the less of it stays in vregs beside
#   the dots. FITTED with the share on the fit half (grid share 0.15-0.35 x growth 0.05-0.30: 0.0533 at
#   (0.25, 0.15), 0.0579 with the constant 0.30 before), chosen before sweeps-j was timed. Checked on
#   what no fit saw: ragged paged attention still 4 of 9 outside +-10 % (a step's VALU count as the
#   proxy had made it 6), though every config 5-8 points faster (-19.8 ... +20.1 % -> -25.1 ... +14.1 %:
#   its small values now leave no share), the published v5p splash points +9.3 ... +17.1 % -> -1.4 ...
#   +9.7 %.
# Other chips: not measured, the one-rate rule.
V5E_VECTOR_UNITS = (("alu", 2.0), ("eup", 1.0), ("xlu", 1.0), ("load", 1.0), ("store", 1.0))
V5E_REDUCTION_CHAIN_CYCLES = 700.0
V5E_REDUCTION_SERIAL_SHARE = 0.25
V5E_REDUCTION_SERIAL_GROWTH = 0.15
V5E_REDUCTION_SERIAL_PIVOT = float(1 << 19)
V5E_DOTLESS_STEP_CYCLES = 260.0
V5E_DOTLESS_STEP_HIDDEN = 0.3
V5E_DOTLESS_STEP_UNHIDDEN_CYCLES = 300.0
V5E_DOTLESS_STEP_FLOOR_CYCLES = 60.0

# A step without MXU work that uses the cross-lane unit (a lane reduction: a softmax's, a norm's; a
# transpose) on the lent v5e (JAX 0.12.0.1, libtpu 0.0.50.1): at small blocks such steps took 380-440
# cycles beyond their copies (softmax at 8 x 1024 f32 blocks 535 a step, a layer norm at 8 x 2048 bf16
# 571, a transpose of 128 x 128 f32 722, 128 x 256 989), where the element-wise sweep, no cross-lane
# work, took about 265; and they grew with the copy as an element-wise step does, where the reduction
# chain's floor (700 cycles in all, which such steps had until then) made them flat: +18 ... +26 % at
# 8-row blocks, -13 ... -27 % at 32 rows of 1024-2048 or 8 of 8192, and transposes -12 ... -23 % at 128
# x 128-256. The unit's latency before the results the step's stores and write-back wait for:
# - V5E_DOTLESS_XLU_CYCLES: added to V5E_DOTLESS_STEP_CYCLES in such a step, hidden under its copies with
#   it (V5E_DOTLESS_STEP_HIDDEN, the same floor). The fit half alone barely tells it apart (mean
#   |log(estimate / measured)| 0.0530-0.0538 on a grid of 130-210 by 20, 0.0533 without it); sweeps-k
#   (a layer norm, a transpose: kinds the fit half has not) showed it: 40 -> 45 of its 51 configs within
#   +-10 % at 170, 42 at 130, 45-46 at 190-210. Chosen at 170, where the fit half is within 0.0001 of its
#   least, so sweeps-k is no longer held out from this constant (its records keep the estimates of before).
#   RE-FITTED 2026-12-08 with the dotless step's constants above: fit half 0.0448 at 120, 0.0450 at 140,
#   0.0451 at 150, 0.0453 at 170; part 11 (sweeps-k, as before the deciding part) 44 of 51 within +-10 %
#   at 120, 46 at 130-150, 47 at 170. Chosen at 140, within 0.0002 of the fit half's least.
# Other chips: not measured, 0 (v5p: the v5e's, with its per-unit rules).
V5E_DOTLESS_XLU_CYCLES = 140.0

# What starting a DMA costs the v5e, measured (JAX 0.12.0.1, libtpu 0.0.50.1, 2026-12-06): JAX's paged
# attention (bench/tpu/sweeps/paged.py) starts 2 x ppcb page DMAs per loop step, 4 to 64, on one
# semaphore per buffer and waits once per buffer. Its loop steps took about 650-700 cycles plus about
# 11 a DMA (least squares over its 9 configs, the DMAs' 2 scalar operations each included), where
# the chips' assumed 32 cycles per DMA (`chips.DMA_ISSUE_CYCLES`) made the model +7 ... +272 % slow.
# - V5E_DMA_ISSUE_CYCLES: FITTED on the fit half of every v5e sweep (`bench/tpu/calibration.py`'s hash
#   split), jointly with V5E_DOTLESS_STEP_CYCLES, V5E_STEP_CYCLES and the chain re-solved at each
#   candidate: the smallest mean |log(estimate / measured)| on a grid of 0-16 cycles (0, 2, 4, 6, 8, 12,
#   16) by 90-255 cycles by 15 (fit-half mean 0.0742 at (6, 210); 0.0746 or less anywhere in 4-6 x
#   195-225; 0.0848 at (32, 135)).
# - V5E_STEP_CYCLES: the v5e's own fixed step cost, SOLVED like STEP_CYCLES on the matmul guide's
#   4096^3 128-block matmul (11.77 ms less host dispatch) with the v5e's DMA cost and vector units: a
#   cheaper DMA start leaves more of that step to the fixed cost (`python -m tests.model.fit` prints
#   it).
# Other chips: not measured, STEP_CYCLES and DMA_ISSUE_CYCLES.
V5E_DMA_ISSUE_CYCLES = 6.0
V5E_STEP_CYCLES = 394.9

# When a DMA's semaphore says it landed, on the lent v5e (JAX 0.12.0.1, libtpu 0.0.50.1, 2026-12-06):
# `tiled_matmul`'s emit_pipeline at 256-wide blocks took 919 cycles a step where its copies keep the
# engine busy 480 and its fixed cost, DMA starts and MXU work add up to about 700: the copies did not
# land under the step that started them, as the model's engine (bytes at the HBM rate, nothing else)
# had them do (it was -10 ... -20 % fast there, and the copy program at 128 KiB blocks -14 ... -22 %).
# - V5E_DMA_LATENCY_CYCLES: from a DMA's start until the engine moves its bytes (until 2026-12-07: from its
#   last byte to its semaphore, the same for copies of one latency); the engine moves other copies
#   meanwhile, so a stream of copies keeps its bandwidth and only a wait that comes soon after its copy
#   started pays it (`dma_engine`). FITTED on the fit
#   half of every v5e sweep (`bench/tpu/calibration.py`'s hash split; only programs' copies are
#   simulated with it): the smallest mean |log(estimate / measured)| over the programs' fit half on a
#   grid of 200-700 by 100 (0.0897 at 500; 0.0906 at 600, 0.0924 at 400; 0.1094 without), the dotless
#   step applied to a program's steps without MXU work as to a grid's (0.0987 at 500 without it).
#   The copy program's 16 KiB blocks disagree (the chip ran their step in 345 cycles, 2 copies each):
#   the latency may grow with the copy, which the sweeps do not separate. Other chips: not measured, 0.
V5E_DMA_LATENCY_CYCLES = 550.0

# A program's own loop (a `pl.kernel` body, a pallas_call that starts its DMAs) on the lent v5e (JAX 0.12.0.1,
# libtpu 0.0.50.1, 2026-12-07, `on-chip.sh sweeps-n`, bench/tpu/sweeps/dma_read.py and dma_stream.py): a stream
# of 4 KiB-1 MiB reads through 1-4 VMEM slots, and the same stream copied back out. Reads alone took
# 5.74 ms at 4 KiB with one in flight (525 cycles a block: a read's trip and the loop's work), then 2.89,
# 1.92, 1.45 ms with 2, 3, 4 in flight: 528 / depth cycles a block, so the reads' latencies overlap one
# another (not a cost per copy the engine pays in turn) and a loop iteration without MXU work costs less
# than 133 cycles in all; a grid step's fixed cost (V5E_DOTLESS_STEP_CYCLES, 270), which the model had
# charged each such iteration, made it 2.2x slow at depth 4. The copy, which waits for each block's write
# in the loop, took 359-366 cycles a 4 KiB block at depth 3-4: a write lands sooner than a read.
# - V5E_DMA_WRITE_LATENCY_CYCLES: V5E_DMA_LATENCY_CYCLES for a write (VMEM -> HBM);
# - V5E_LOOP_STEP_CYCLES: a program's loop iteration without MXU work, beside its scalar work and DMA starts
#   (a step with a dot keeps V5E_STEP_CYCLES: the MXU's fill and drain).
# FITTED together on the fit half of every v5e sweep, this part's included (`bench/tpu/calibration.py`'s hash
# split), reads' latency kept at 500 (the one-in-flight reads pin it: 6 of this part's 20 reads within
# +-10 % at 450): write latency 250/300/350 by loop step 0/30/60, best at (300, 30) (the part 14 of 49
# -> 40 within +-10 %, the other parts 402 -> 401 of 452: the copy program at 64 KiB blocks -24 ... -29 %
# where the grid's step cost had fitted it, its 4-16 KiB blocks +39 ... +52 % -> +2 ... +12 %).
# Other chips: not measured (the read latency, and the grid's dotless step).
# The engine moves copies in the order they became ready (`dma_engine`, 2026-12-07: in the order they started
# until then), so a write started right after a read goes first: the copy waiting each write with reads of
# 64-256 KiB in flight went +21 ... +29 % -> 0 ... +14 %; the 168 timed program configs 132 -> 139 within
# +-10 %. Both latencies re-FITTED under it on the programs' fit half (reads 450/500/550 x writes 150-300 and
# reads 500/550/600 x writes 350-450, by 50):
# (550, 300) 0.0606, (500, 300) 0.0633, (500, 250) 0.0655, (550, 350) 0.0705: kept (500, 300), which the
# one-in-flight reads pin (550 moves their 4 KiB blocks from -1 to about +9 %) and which held the most
# configs (139 of 168 against 138).
# Under the engine whose reads and writes share the HBM (below) both re-FITTED with its share on the programs' fit
# half, 192 configs (reads 450/500/550/600 x writes 250/300/350): (550, 300) 0.0500, (500, 300) 0.0547,
# (550, 250) 0.0569, (600, 300) 0.0535, (550, 350) 0.0684, every read latency of 450 0.0767 or more. Taken at
# (550, 300): the one-in-flight 4 KiB reads go from -1 to about +9 %, still inside; at 500 the copy's 64 KiB
# blocks with reads and writes in flight became the model's fastest config of their sweep (-15 %), 17 % slower
# on the chip than its best, where 550 keeps every pick within 5.8 % of the chip's best.
V5E_DMA_WRITE_LATENCY_CYCLES = 300.0
V5E_LOOP_STEP_CYCLES = 30.0

# Reads and writes moving side by side in a program's DMA engine, on the lent v5e (JAX 0.12.0.1, libtpu
# 0.0.50.1, 2026-12-07; bench/tpu/v5e/ parts 14 and 16): reads alone of 256 KiB-1 MiB blocks, 2-4 in
# flight, moved 747-750 GB/s (the model's one queue at the 820 GB/s peak: -7 %); writes alone 634-655
# GB/s from 256 KiB on (the queue's writes at `V5E_HBM_WRITE_EFFICIENCY`, fitted to copies that read
# beside their writes: +22 ... +33 %); and a copy of the same blocks, reads and writes in flight together,
# 642-657 GB/s between the two (XLA's own copy 656). So neither one queue that takes reads and writes in
# turn (the writes alone then had to be as slow as beside reads) nor two lanes that ignore each other
# (up to 1,400 GB/s together): two lanes that share the HBM while both move (`dma_engine.SharedEngine`).
# And not evenly (part 19, `dma_mixed.py` with a depth for each stream): one write in flight beside a
# stream of reads took what it takes alone (64 KiB: 477 cycles, alone 474; 16 KiB beside 64 KiB reads 381,
# alone 377), one read beside a stream of writes far longer (64 KiB: 928 cycles beside 64 KiB writes, 804
# beside 16 KiB ones, 1,215 beside 256 KiB ones, alone 659), whatever the writes' depth; and small blocks
# with both streams deep moved less than large ones (64 KiB each, four in flight: 327 cycles an iteration
# where their bytes take 282).
# - V5E_DMA_READ_EFFICIENCY, V5E_DMA_WRITE_EFFICIENCY: the peak's share reads and writes reach alone,
#   MEASURED (750 and 650 GB/s, above), not fitted.
# - V5E_DMA_READ_SHARE, V5E_DMA_WRITE_SHARE: the share of its own rate each lane keeps while both move (the
#   writes most of theirs); V5E_DMA_SWITCH_CYCLES: what a copy that starts moving beside the other lane's
#   pays of its own moving; V5E_DMA_READ_TAIL_CYCLES: of a read's 550-cycle latency, the part after its last
#   byte moves (its bytes on their way to VMEM: the HBM is free for a write by then, and a write that starts
#   during a read's first 250 cycles slows it). FITTED together on the programs' fit half
#   (`bench/tpu/calibration.py`'s hash split; parts 14-19, the held-out part 20 not looked at) by mean
#   |log(estimate / measured)|: tail 150-450 x read share 0.02-0.3 x write share 0.75-1.0 x switch 0-70 x
#   latencies 500-600 / 300 (`docs/tpu-time-model.md` has the grid): these 0.0512 on the fit half's 118
#   program configs (switch 30: 0.0529, 50: 0.0523; shares 0.2 / 0.8: 0.0548; 0.1 / 0.82 without a switch:
#   0.0554), the even shares of the last stop (0.47 each, no switch, no tail) 0.0890.
# A grid step without MXU work moves its copies at these rates too (part 22, bench/tpu/sweeps/grid_mix.py:
# a KiB read beyond the writes 2.03 cycles, 757 GB/s; written beyond the reads 2.36, 651 GB/s; least
# squares of 36 whole-row configs): the next block in, then the last one out, and
# - V5E_DMA_PAIR_SHARE: side by side they add this share of the shorter (part 22: a KiB each took 4.63
#   cycles, about 5 % more than the two apart; FITTED with the dotless step above, 0.1).
# Steps with a dot keep the peak and `V5E_HBM_WRITE_EFFICIENCY`: at the lanes' rates the BlockSpec
# matmuls' copy-bound configs, already 5-13 % slow, became 10-20 % slow (16 outside +-10 % where 3 are).
# Other chips: not measured, one queue.
V5E_DMA_READ_EFFICIENCY = 750e9 / 820e9
V5E_DMA_WRITE_EFFICIENCY = 650e9 / 820e9
V5E_DMA_READ_SHARE = 0.15
V5E_DMA_PAIR_SHARE = 0.1
V5E_DMA_WRITE_SHARE = 0.85
V5E_DMA_SWITCH_CYCLES = 40.0
V5E_DMA_READ_TAIL_CYCLES = 300.0

# Measured on the lent v5e (JAX 0.12.0.1, libtpu 0.0.50.1, 2026-12-05): max |chip - exact| / |exact| over
# the corpus kernels' inputs (N(0,1)-scaled f32; bench/tpu/v5e/corpus), rounded up.
V5E_TRANSCENDENTALS = (
    ("exp", 5.0e-6),
    ("tanh", 8.2e-5),
    ("log", 2.6e-4),
    ("logistic", 3.6e-6),
    ("rsqrt", 1.4e-7),
    ("reciprocal(approx=True)", 1.7e-5),
)

# VMEM the v5e's compiler keeps for itself beyond what a kernel asks for, from its E1001 sizes
# (bench/tpu/v5e/vmem.jsonl, vmem-dtypes.jsonl, vmem-temporaries.jsonl; `checks.compiler_scratch` says
# what each record showed): per dot, copies of the left operand by kind, plus bytes per row of it; and
# one f32 copy of the largest value a body widens from 16 bits to f32 ("widened").
V5E_DOT_OPERAND_COPIES = (("bf16", 1.0), ("f32_highest", 4.0), ("int8", 0.17), ("widened", 1.0))
V5E_DOT_OPERAND_ROW_BYTES = (("f32_highest", 512.0),)

# The chip table's entries for the rules above, by ChipInfo field: the per-unit vector rules and the dotless
# step's, which the v5p shares (its TensorCore schedules the same kernels in about the same bundles), and
# what a simulated program's copies and loop steps cost, the v5e's alone.
V5E_PER_UNIT_RULES: dict[str, Any] = {
    "vector_units": V5E_VECTOR_UNITS,
    "reduction_chain_cycles": V5E_REDUCTION_CHAIN_CYCLES,
    "reduction_serial_share": V5E_REDUCTION_SERIAL_SHARE,
    "reduction_serial_growth": V5E_REDUCTION_SERIAL_GROWTH,
    "reduction_serial_pivot": V5E_REDUCTION_SERIAL_PIVOT,
    "dotless_step_cycles": V5E_DOTLESS_STEP_CYCLES,
    "dotless_step_hidden": V5E_DOTLESS_STEP_HIDDEN,
    "dotless_step_unhidden_cycles": V5E_DOTLESS_STEP_UNHIDDEN_CYCLES,
    "dotless_step_floor_cycles": V5E_DOTLESS_STEP_FLOOR_CYCLES,
    "dma_pair_share": V5E_DMA_PAIR_SHARE,
    "dotless_xlu_cycles": V5E_DOTLESS_XLU_CYCLES,
}
V5E_PROGRAM_RATES: dict[str, Any] = {
    "dma_latency_cycles": V5E_DMA_LATENCY_CYCLES,
    "dma_write_latency_cycles": V5E_DMA_WRITE_LATENCY_CYCLES,
    "loop_step_cycles": V5E_LOOP_STEP_CYCLES,
    "dma_read_efficiency": V5E_DMA_READ_EFFICIENCY,
    "dma_write_efficiency": V5E_DMA_WRITE_EFFICIENCY,
    "dma_read_share": V5E_DMA_READ_SHARE,
    "dma_write_share": V5E_DMA_WRITE_SHARE,
    "dma_switch_cycles": V5E_DMA_SWITCH_CYCLES,
    "dma_read_tail_cycles": V5E_DMA_READ_TAIL_CYCLES,
}
