"""How the TPU compiler's scoped-VMEM count differs from the playground's: the VMEM it keeps for
itself (copies of each dot's left operand, a block's f32 copy where the body widens it), and what the
playground counts that it leaves out.

The playground counts what a kernel asks for (`checks.memory`: its blocks, twice while pipelining, and
its scratch). The compiler's E1001 message on the lent v5e reports more than that (bench/tpu/v5e/vmem*.jsonl;
tests/unit/test_vmem_verdicts.py replays every record):
- for a dot, per its left-operand block of L bytes and R rows, to within 0.1-0.5 MiB: L for bf16
  operands (2.08, 2.36 and 4.33 MiB over 2, 2 and 4 MiB blocks); 4 L plus 512 bytes a row (one
  128-lane f32 column) for f32 operands at `Precision.HIGHEST` (2.07 to 16.93 MiB over 0.5 to 4 MiB,
  ten sizes); 0.17 L for int8 operands (0 to 0.33 MiB over 1 and 2 MiB, four sizes; the 0.33 refused a
  count of exactly 16 MiB). A kernel's dots run one after another, so the largest counts. Operand kinds
  never measured (f32 at the default or `HIGH` precision, fp8) add nothing, and chips where nothing was
  measured have no copies: the estimate says so rather than guess;
- for a body that widens a 16-bit block to f32 (`x_ref[...].astype(jnp.float32)`, an RMS norm), the
  f32 copy of the largest such value, sometimes: 6.0 and 7.5 MiB over bf16 blocks of 384 and 480 rows
  (the f32 copy: 6 and 7.5 MiB), 1.32 and 1.84 MiB over 192 and 256 rows of 2048 (1.5 and 2 MiB), and
  nothing at 320 rows and more, where the count alone was over the limit. The compiler did not keep one
  for a body that stays in its dtype (a copy, an f32 scale-and-add: their sizes were the count exactly).
  The playground counts the copy whenever a body widens: no compiled config has one that would not fit.

What the compiler leaves out (bench/tpu/v5e/vmem-followup.jsonl and vmem-temporaries.jsonl), in
`uncounted_bytes`:
- the scratch of a `pallas_call` with dots whose last grid axis (the reduction, by convention) has one
  step: the same 1024³ bf16 and 512×256×2048 f32 blocks compiled at K = bk and were refused at 2 and 4
  K steps with the size the count gives (18.36 and 17.0 MiB), and 512×1024×2048 bf16 (18 MiB counted)
  compiled at K = bk. With one step the accumulator is written and read in the same step. The rule is
  what was measured, on accumulator scratch only;
- blocks whose last dimension is 1 (a row sum's (rows, 1) output): row sums whose input blocks alone
  were exactly 16 MiB compiled (rows 256, 512 and 1024), and every refused one reported its input
  blocks' size alone (17.0, 18.0, 20.0 MiB);
- VMEM scratch the body never reads: a 12 MiB scratch left untouched, or only written, beside 2 to
  20 MiB of blocks compiled every time (to 32 MiB counted); carried from step to step, it counted in full.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from sandbox.harness.checks.memory import buffers, in_vmem, ref_bytes
from sandbox.harness.model.ops import dot_kind, jaxpr_of, sub_jaxprs
from sandbox.protocol.chips import ChipInfo

# What the compiler keeps VMEM for in one kernel body: a dot's left operand, by its measured kind, or
# a value widened to f32 ("widened"): (kind, bytes, rows of the value).
Operand = tuple[str, int, int]
WIDENED = "widened"


def operand_kind(eqn: Any) -> str:
    """The measured kind a `dot_general` falls in: "bf16" (16-bit operands), "f32_highest", "int8", or
    another name (`dot_kind`'s) that no chip measured."""
    kind = dot_kind(eqn)
    if kind == "f32":
        return "f32_highest"
    if kind in ("bf16", "int8") and _itemsize(eqn.invars[0].aval) == {"bf16": 2, "int8": 1}[kind]:
        return kind
    return f"unmeasured:{kind}"


def dot_operands(kernel_jaxpr: Any) -> tuple[Operand, ...]:
    """What the compiler may keep VMEM for in one kernel body, at any depth: each dot's left operand
    (its kind, bytes, rows), and each value widened from 16 bits or fewer to f32 (`WIDENED`)."""
    found = []
    for eqn in _eqns(jaxpr_of(kernel_jaxpr)):
        if eqn.primitive.name == "dot_general":
            found.append((operand_kind(eqn), *_size(eqn.invars[0].aval)))
        elif eqn.primitive.name == "convert_element_type" and _widens_to_f32(eqn):
            found.append((WIDENED, *_size(eqn.outvars[0].aval)))
    return tuple(found)


def scratch_bytes(operands: tuple[Operand, ...], chip: ChipInfo) -> int:
    """The compiler's own VMEM for a kernel with these operands, where measured: its largest dot copy
    (copies of the left operand, plus bytes per row) and its largest widened value."""
    copies, per_row = dict(chip.dot_operand_copies), dict(chip.dot_operand_row_bytes)
    dots = [
        int(copies.get(kind, 0.0) * size + per_row.get(kind, 0.0) * rows)
        for kind, size, rows in operands
        if kind != WIDENED
    ]
    widened = [int(copies.get(kind, 0.0) * size) for kind, size, _ in operands if kind == WIDENED]
    return max(dots, default=0) + max(widened, default=0)


def uncounted_bytes(eqn: Any) -> int:
    """VMEM bytes of one kernel equation that `checks.memory` counts and the compiler's scoped count
    leaves out (the module's docstring says what was measured)."""
    if eqn.primitive.name != "pallas_call":
        return 0
    mapping = eqn.params["grid_mapping"]
    kernel = jaxpr_of(eqn.params["jaxpr"])
    grid = tuple(mapping.grid or ())
    left_out = 0
    scratch = (
        kernel.invars[len(kernel.invars) - mapping.num_scratch_operands :]
        if mapping.num_scratch_operands
        else []
    )
    unread = [v for v in scratch if in_vmem(v.aval) and not _read(v, kernel)]
    left_out += sum(ref_bytes(v.aval) for v in unread)
    if grid and grid[-1] == 1 and _dots(kernel):
        left_out += sum(ref_bytes(v.aval) for v in scratch if in_vmem(v.aval) and v not in unread)
    for block in mapping.block_mappings:
        shape = tuple(getattr(block.block_aval, "shape", ()))
        if shape and shape[-1] == 1 and in_vmem(block.block_aval):
            left_out += buffers(mapping.grid) * ref_bytes(block.block_aval)
    return left_out


def _eqns(jaxpr: Any) -> list[Any]:
    """Every equation of a body, at any depth."""
    found = []
    for eqn in jaxpr.eqns:
        found.append(eqn)
        for sub in sub_jaxprs(eqn):
            found += _eqns(sub)
    return found


def _dots(jaxpr: Any) -> list[Any]:
    return [eqn for eqn in _eqns(jaxpr) if eqn.primitive.name == "dot_general"]


def _read(ref: Any, kernel: Any) -> bool:
    """Whether the body may read a scratch ref: it is used anywhere but as the target of a store whose
    old value nothing uses (`ref[...] = v` is a `swap` whose result is dropped). A ref passed on (to a
    nested body, a DMA, a loop) counts as read."""
    used = {id(v) for eqn in _eqns(kernel) for v in eqn.invars} | {id(v) for v in kernel.outvars}
    for eqn in kernel.eqns:
        if not any(v is ref for v in eqn.invars):
            continue
        target_only = eqn.primitive.name == "swap" and eqn.invars[0] is ref
        target_only = target_only and not any(v is ref for v in eqn.invars[1:])
        if not target_only or any(id(v) in used for v in eqn.outvars):
            return True
    return False


def _widens_to_f32(eqn: Any) -> bool:
    source, result = eqn.invars[0].aval, eqn.outvars[0].aval
    shape = getattr(result, "shape", ())
    return str(getattr(result, "dtype", "")) == "float32" and len(shape) >= 2 and _itemsize(source) <= 2


def _size(aval: Any) -> tuple[int, int]:
    """Bytes and rows (second-to-last dimension; 1 for a vector) of a value."""
    shape = tuple(getattr(aval, "shape", ()))
    return math.prod(shape) * _itemsize(aval), (shape[-2] if len(shape) >= 2 else 1)


def _itemsize(aval: Any) -> int:
    try:
        return int(np.dtype(aval.dtype).itemsize)
    except TypeError:  # an extended dtype (a PRNG key, a semaphore): not a dot operand
        return 4
