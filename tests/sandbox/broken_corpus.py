"""The broken-kernel corpus: one row per common Pallas mistake, and exactly what a learner must see.

Each row names a scratch file in `broken/` (its docstring says what is wrong), the chip it runs on,
the status, and the headline (`RunResult.summary`, verbatim). The line the editor must mark is the
line of the file that carries a `# MARK` comment (none: nothing is marked, as for a plain mismatch);
for a `rejected` run it is the line of the TPU compiler's error. `SOURCES` holds the rows that cannot
be a `.py` file of the repository (a syntax error would fail the lint).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from sandbox.protocol import Chip, RunStatus

HERE = Path(__file__).parent / "broken"
MARK = "# MARK"

SOURCES = {
    "syntax_error": '''"""A missing colon."""

import jax


def make_inputs(seed)  # MARK
    return (jax.numpy.ones((8, 128)),)
''',
}


@dataclass(frozen=True)
class Broken:
    name: str
    status: RunStatus
    headline: str
    chip: Chip = "v5p"

    @property
    def source(self) -> str:
        return SOURCES.get(self.name) or (HERE / f"{self.name}.py").read_text()

    @property
    def marked_line(self) -> int | None:
        lines = [i for i, text in enumerate(self.source.splitlines(), start=1) if MARK in text]
        assert len(lines) <= 1, f"{self.name}: more than one {MARK}"
        return lines[0] if lines else None


ERROR, MISMATCH, REJECTED = RunStatus.ERROR, RunStatus.MISMATCH, RunStatus.REJECTED

CORPUS: tuple[Broken, ...] = (
    Broken(
        "block_rank_mismatch",
        ERROR,
        (
            "error in kernel: ValueError: the BlockSpec for `x_ref` (input 1, f32[256, 128]) has a "
            "1-dimensional block (128,) for an array of shape (256, 128): give one block size per array "
            "dimension (None or pl.Squeezed() drops a dimension from the kernel's ref) (line 24)"
        ),
    ),
    Broken(
        "block_rows_not_dividing",
        MISMATCH,
        (
            "mismatch: 1/1 cases differ from the reference; case 'scratch': out differs in 8,192 of "
            "32,768 elements: all NaN in rows 192–255 (all 128 columns). NaN marks memory the kernel "
            "never wrote (the simulator fills it with NaN), or values computed from it, such as an "
            "accumulator that was never zeroed"
        ),
    ),
    Broken(
        "copy_slice_out_of_bounds",
        ERROR,
        (
            "error in kernel: IndexError: a DMA reads `x_hbm` (input 1, f32[32, 128]) at rows 32:40, past "
            "the array's 32 rows. Check the slices given to the copy (line 21)"
        ),
    ),
    Broken(
        "dma_waited_twice",
        ERROR,
        (
            "error in kernel: Deadlock: the kernel would wait forever: it waits for a DMA on semaphore "
            "`sem` to deliver 4,096 bytes, but no copy that signals that semaphore is in flight. Every "
            ".wait() needs its own .start() of a copy with the same semaphore and size (line 21)"
        ),
    ),
    Broken(
        "index_map_off_by_one",
        ERROR,
        (
            "error in kernel: IndexError: the index map of `y_ref` (input 2, f32[256, 256]) gives block "
            "(2, 0) at grid step (i=0, j=0, k=1): rows 256:384, past the array's 256 rows. Index maps "
            "return block indices, not element offsets; the last block of `y_ref` is (1, 1) (line 37)"
        ),
    ),
    Broken(
        "index_map_too_few_indices",
        ERROR,
        (
            "error in kernel: ValueError: the index map for `x_ref` (input 1, f32[256, 128]) returns 1 "
            "block index, but its block has 2 dimensions: return one block index per block dimension, "
            "e.g. `lambda i: (i, 0)` (line 24)"
        ),
    ),
    Broken(
        "index_map_wrong_arity",
        ERROR,
        (
            "error in kernel: TypeError: the index map for `o_ref` (output 1, f32[256, 256]) takes 2 "
            "arguments but is called with 3: it gets one index per grid axis (this grid has 3), followed "
            "by any scalar-prefetch refs (line 39)"
        ),
    ),
    Broken(
        "kernel_missing_scratch_param",
        ERROR,
        (
            "error in kernel: TypeError: the kernel body `double_kernel` takes 2 refs, but pallas_call "
            "passes 3: one per scalar-prefetch operand, input, output and scratch buffer, in that order "
            "(each scratch_shapes entry adds a ref at the end) (line 17)"
        ),
    ),
    Broken(
        "lane_block_not_multiple_of_128",
        REJECTED,
        (
            "rejected by the TPU compiler for v5p: ValueError: the TPU compiler needs the last two block "
            "dimensions to be multiples of 8 and 128, or the whole array dimension: the BlockSpec for "
            "`x_ref` (input 1, f32[256, 200]) has block (128, 100) on an array of (256, 200). Choose "
            "block sizes like (8k, 128m), or take the whole dimension (line 24); in the simulator the "
            "outputs match the reference (1/1 cases), but this kernel would not compile for a TPU; 2 "
            "chip-check warnings for v5p"
        ),
    ),
    Broken(
        "missing_accumulator_reset",
        MISMATCH,
        (
            "mismatch: 1/1 cases differ from the reference; case 'scratch': out differs in 65,536 of "
            "65,536 elements: all NaN in all 256 rows (all 256 columns). NaN marks memory the kernel "
            "never wrote (the simulator fills it with NaN), or values computed from it, such as an "
            "accumulator that was never zeroed"
        ),
    ),
    Broken(
        "missing_dma_wait",
        ERROR,
        (
            "error in kernel: UnfinishedDMA: the kernel ended with a DMA in flight: the copy from `buf` "
            "(scratch, f32[8, 128]) to `o_hbm` (output 1, f32[8, 128]) was started but never waited on, "
            "so it never completed (on a TPU the kernel could end before the data lands). Call .wait() on "
            "that copy before the kernel ends (line 20)"
        ),
    ),
    Broken(
        "name_error_in_body",
        ERROR,
        ("error in kernel: NameError: name 'x_rf' is not defined; did you mean `x_ref`? (line 16)"),
    ),
    Broken(
        "output_dtype_differs",
        MISMATCH,
        (
            "mismatch: 1/1 cases differ from the reference; case 'scratch': out differs in 918 of 1,024 "
            "elements, max abs error 0.0156 (dtype differs: got bfloat16, expected float32)"
        ),
    ),
    Broken(
        "parallel_after_arbitrary",
        ERROR,
        (
            "error in kernel: ValueError: dimension_semantics ('arbitrary', 'parallel') puts a \"parallel\" "
            'axis after an "arbitrary" one: parallel axes must lead the grid. Reorder the grid (and the '
            'index maps), or mark the later axes "arbitrary" (line 27)'
        ),
    ),
    Broken(
        "pipeline_index_map_off_by_one",
        ERROR,
        (
            "error in kernel: IndexError: the emit_pipeline index map (in_specs[1]) of `y_hbm` (input 2, "
            "f32[256, 256]) gives block (2, 0) at grid step (i=0, j=0, k=1): rows 256:384, past the "
            "array's 256 rows. Index maps return block indices, not element offsets; the last block of "
            "`y_hbm` is (1, 1) (line 35)"
        ),
    ),
    Broken(
        "program_id_axis_out_of_range",
        ERROR,
        (
            "error in kernel: ValueError: pl.program_id(1) asks for grid axis 1, but the grid (2,) has 1 "
            "axis: axes are numbered from 0 (line 16)"
        ),
    ),
    Broken(
        "read_hbm_ref_directly",
        ERROR,
        (
            "error in kernel: ValueError: this line reads `x_hbm`, a ref that lives in HBM (pl.kernel's "
            "operands and pl.ANY / pltpu.HBM refs do), which a kernel cannot index directly: copy the "
            "part you need into VMEM with `pltpu.sync_copy(hbm_ref, vmem_ref)` (or `pltpu.async_copy` and "
            "`.wait()`), or let emit_pipeline or a BlockSpec bring blocks in (line 17); rejected by the "
            "TPU compiler for v5p"
        ),
    ),
    Broken(
        "cumsum_in_kernel",
        REJECTED,
        (
            "rejected by the TPU compiler for v5p: NotImplementedError: Unimplemented primitive in Pallas "
            "TPU lowering for tc: cumsum. Please file an issue at "
            "https://github.com/jax-ml/jax/issues/new/choose. (line 17); in the simulator the outputs match "
            "the reference (1/1 cases), but this kernel would not compile for a TPU"
        ),
    ),
    Broken(
        "reduction_axis_outermost",
        ERROR,
        (
            "error in kernel: RuntimeError: `o_ref` (output 1, f32[256, 256]): the same output block is "
            "written again at grid step (k=1, i=0, j=0), after the grid moved on from it (first written "
            "at step (k=0, i=0, j=0)). pallas_call copies an output block back to HBM when its index "
            "changes, so all steps that write one block must be consecutive: put the reduction axis last "
            'in the grid and mark it "arbitrary" (or give the output\'s BlockSpec '
            "pipeline_mode=pl.Buffered(1, revisit=pl.RevisitMode.ANY), which reloads the block on each "
            "revisit) (line 36)"
        ),
    ),
    Broken(
        "ring_neighbour_not_wrapped",
        ERROR,
        (
            "error in kernel: IndexError: this copy goes to device 4, but this run simulates 4 devices (0 "
            "to 3): wrap the neighbour's index around the ring, e.g. `(me + 1) % n` (line 24)"
        ),
    ),
    Broken(
        "scalar_prefetch_index_out_of_range",
        ERROR,
        (
            "error in kernel: IndexError: the index map of `t_ref` (input 1, f32[32, 128]) gives block "
            "(4, 0) at grid step (i=3): rows 32:40, past the array's 32 rows. Index maps return block "
            "indices, not element offsets; the last block of `t_ref` is (3, 0) (line 31)"
        ),
    ),
    Broken(
        "scratch_index_out_of_bounds",
        ERROR,
        (
            "error in kernel: IndexError: this line writes `sums_ref` (scratch, f32[4, 128]) at rows 4:5, "
            "past the array's 4 rows. Check the index, or pl.ds(start, size) (line 19)"
        ),
    ),
    Broken(
        "semaphore_count_too_high",
        ERROR,
        (
            "error in kernel: Deadlock: core 1 would wait forever: it waits for semaphore `sem` to reach "
            "2, but the semaphore holds 1 and nothing still running can signal it (1 core has finished). "
            "Every wait needs a matching signal (same semaphore, same core, same count) (line 27)"
        ),
    ),
    Broken(
        "semaphore_left_signalled",
        ERROR,
        (
            "error in kernel: UnbalancedSemaphore: semaphore `sem` still holds 1 when the kernel ends: it "
            "was signalled more than it was waited on (the last signal is marked). A kernel must leave "
            "every semaphore at zero: wait once for every signal, with the same count (line 19)"
        ),
    ),
    Broken(
        "semaphore_never_signalled",
        ERROR,
        (
            "error in kernel: Deadlock: the kernel would wait forever: it waits for semaphore `sem` to "
            "reach 1, but the semaphore holds 0 and nothing still running can signal it. Every wait needs "
            "a matching signal (same semaphore, same core, same count) (line 19)"
        ),
    ),
    Broken(
        "signal_core_out_of_range",
        ERROR,
        (
            "error in kernel: IndexError: this line signals semaphore `sem` on core 2, but the kernel "
            "runs on 2 cores (0 to 1): core_index must be below the mesh's num_cores (line 21)"
        ),
    ),
    Broken(
        "store_wrong_dtype",
        ERROR,
        (
            "error in kernel: TypeError: this line stores float32 values into `o_ref`, a bfloat16 ref: "
            "cast the value first, e.g. `o_ref[...] = value.astype(o_ref.dtype)` (line 17)"
        ),
    ),
    Broken(
        "store_wrong_shape",
        ERROR,
        (
            "error in kernel: ValueError: this line stores a value of shape (128, 64) into a region of "
            "`o_ref` of shape (128, 128): a store needs a value of exactly that shape (stores do not "
            "broadcast) (line 16)"
        ),
    ),
    Broken(
        "swapped_out_shape",
        ERROR,
        (
            "error in kernel: IndexError: the index map of `o_ref` (output 1, f32[256, 128]) gives block "
            "(0, 1) at grid step (i=0, j=1): columns 128:256, past the array's 128 columns. Index maps "
            "return block indices, not element offsets; the last block of `o_ref` is (1, 0) (line 31)"
        ),
    ),
    Broken(
        "syntax_error",
        ERROR,
        (
            "error in import: SyntaxError: this line is not valid Python (expected ':'), so the file "
            "could not be run (line 6)"
        ),
    ),
    Broken(
        "too_many_devices_for_mesh",
        ERROR,
        (
            "error in kernel: ValueError: the mesh needs 8 devices, but this run simulates 4: put "
            "`DEVICES = 8` at the top of the file to simulate that many (line 19)"
        ),
    ),
    Broken(
        "too_many_tensorcores",
        ERROR,
        (
            "error in kernel: ValueError: pltpu.TensorCoreMesh(num_cores=2) asks for 2 TensorCores, but a "
            "TPU v5e device has 1: leave num_cores out (the mesh then takes the chip's count, "
            "pltpu.get_tpu_info().num_cores) or split the work over 1 core (line 27); 1 chip-check "
            "warning for v5e"
        ),
        chip="v5e",
    ),
    Broken(
        "wrong_module_for_semaphore_wait",
        ERROR,
        (
            "error in kernel: AttributeError: `pltpu` (jax.experimental.pallas.tpu) has no "
            "`semaphore_wait`; `pl.semaphore_wait` (jax.experimental.pallas) does (line 19)"
        ),
    ),
)
