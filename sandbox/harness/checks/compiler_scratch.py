"""The VMEM the TPU compiler keeps for itself inside a kernel: a copy of each dot's left operand.

The playground counts what a kernel asks for (`checks.memory`: its blocks, twice while pipelining, and
its scratch). The compiler's E1001 message on the lent v5e reports more than that for every kernel
with a dot whose count fit the 16 MiB scoped limit: the extra was, to within 0.1-0.9 MiB, one copy of
the dot's left-operand block for bf16 operands (2.08, 2.36 and 4.33 MiB over 2, 2 and 4 MiB blocks) and
four copies for f32 operands at `Precision.HIGHEST` (2.07, 4.46 and 16.93 MiB over 0.5, 1 and 4 MiB)
(bench/tpu/v5e/vmem.jsonl; tests/unit/test_vmem_verdicts.py replays every record). A kernel's dots
run one after another, so the largest copy counts. Operand kinds never measured (f32 at the default or
`HIGH` precision, int8, fp8) add nothing, and `ChipInfo.dot_operand_copies` is empty on chips where
nothing was measured: the estimate says so rather than guess.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

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
