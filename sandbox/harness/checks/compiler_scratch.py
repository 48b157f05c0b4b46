"""How the TPU compiler's scoped-VMEM count differs from the playground's: the VMEM it keeps for
itself (a copy of each dot's left operand), and what the playground counts that it leaves out.

The playground counts what a kernel asks for (`checks.memory`: its blocks, twice while pipelining, and
its scratch). The compiler's E1001 message on the lent v5e reports more than that for every kernel
with a dot whose count fit the 16 MiB scoped limit: the extra was, to within 0.1-0.9 MiB, one copy of
the dot's left-operand block for bf16 operands (2.08, 2.36 and 4.33 MiB over 2, 2 and 4 MiB blocks) and
four copies for f32 operands at `Precision.HIGHEST` (2.07, 4.46 and 16.93 MiB over 0.5, 1 and 4 MiB)
(bench/tpu/v5e/vmem.jsonl; tests/unit/test_vmem_verdicts.py replays every record). A kernel's dots
run one after another, so the largest copy counts. Operand kinds never measured (f32 at the default or
`HIGH` precision, int8, fp8) add nothing, and `ChipInfo.dot_operand_copies` is empty on chips where
nothing was measured: the estimate says so rather than guess.

What the compiler leaves out (bench/tpu/v5e/vmem-followup.jsonl, 2026-12-06), in `uncounted_bytes`:
- the scratch of a `pallas_call` with dots whose last grid axis (the reduction, by convention) has one
  step: the same 1024³ bf16 and 512×256×2048 f32 blocks compiled at K = bk and were refused at 2 and 4
  K steps with the size the count gives (18.36 and 17.0 MiB), and 512×1024×2048 bf16 (18 MiB counted)
  compiled at K = bk. With one step the accumulator is written and read in the same step. The rule is
  what was measured, on accumulator scratch only;
- blocks whose last dimension is 1 (a row sum's (rows, 1) output): row sums whose input blocks alone
  were exactly 16 MiB compiled (rows 256, 512 and 1024), and every refused one reported its input
  blocks' size alone (17.0, 18.0, 20.0 MiB).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from sandbox.harness.checks.memory import buffers, in_vmem, ref_bytes
from sandbox.harness.model.ops import dot_kind, jaxpr_of, sub_jaxprs
from sandbox.protocol.chips import ChipInfo


def operand_kind(eqn: Any) -> str:
    """The measured kind a `dot_general` falls in: "bf16" (16-bit operands), "f32_highest", or another
    name (`dot_kind`'s) that no chip measured."""
    kind = dot_kind(eqn)
    if kind == "f32":
        return "f32_highest"
    if kind == "bf16" and _itemsize(eqn.invars[0].aval) == 2:
        return "bf16"
    return f"unmeasured:{kind}"


def dot_operands(kernel_jaxpr: Any) -> tuple[tuple[str, int], ...]:
    """(kind, bytes of the left operand) of every dot in one kernel body, at any depth."""
    found = []
    for eqn in _dots(jaxpr_of(kernel_jaxpr)):
        aval = eqn.invars[0].aval
        found.append((operand_kind(eqn), math.prod(aval.shape) * _itemsize(aval)))
    return tuple(found)


def scratch_bytes(operands: tuple[tuple[str, int], ...], chip: ChipInfo) -> int:
    """The compiler's own VMEM for a kernel with these dot operands: its largest copy, where measured."""
    copies = dict(chip.dot_operand_copies)
    return max((int(copies.get(kind, 0.0) * size) for kind, size in operands), default=0)


def uncounted_bytes(eqn: Any) -> int:
    """VMEM bytes of one kernel equation that `checks.memory` counts and the compiler's scoped count
    leaves out (the module's docstring says what was measured)."""
    if eqn.primitive.name != "pallas_call":
        return 0
    mapping = eqn.params["grid_mapping"]
    kernel = jaxpr_of(eqn.params["jaxpr"])
    grid = tuple(mapping.grid or ())
    left_out = 0
    if grid and grid[-1] == 1 and mapping.num_scratch_operands and _dots(kernel):
        scratch = kernel.invars[len(kernel.invars) - mapping.num_scratch_operands :]
        left_out += sum(ref_bytes(v.aval) for v in scratch if in_vmem(v.aval))
    for block in mapping.block_mappings:
        shape = tuple(getattr(block.block_aval, "shape", ()))
        if shape and shape[-1] == 1 and in_vmem(block.block_aval):
            left_out += buffers(mapping.grid) * ref_bytes(block.block_aval)
    return left_out


def _dots(jaxpr: Any) -> list[Any]:
    found = []
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "dot_general":
            found.append(eqn)
        for sub in sub_jaxprs(eqn):
            found += _dots(sub)
    return found


def _itemsize(aval: Any) -> int:
    try:
        return int(np.dtype(aval.dtype).itemsize)
    except TypeError:  # an extended dtype (a PRNG key, a semaphore): not a dot operand
        return 4
