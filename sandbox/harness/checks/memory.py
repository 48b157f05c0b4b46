"""On-chip memory a kernel allocates, computed from its traced jaxpr (runs in the child, needs JAX).

Interpret mode never checks VMEM/SMEM capacity (its buffers are host arrays), so the playground counts
what the kernel asks for, the way Mosaic would allocate it:
- `pallas_call`: each blocked operand gets 2 VMEM buffers (the automatic pipeline double-buffers;
  1 buffer if the grid has a single point; a dynamic grid, sized at run time, counts as more), operands in ANY/HBM get none, scalar-prefetch operands
  live in SMEM, and `scratch_shapes` are added by memory space;
- `pl.kernel` (`mpmd_map`): the kernel's scratch arguments;
- inside either, `run_scoped` allocations (which is what `emit_pipeline` buffers are) nest: a scope
  adds to its parent, sibling scopes reuse the same space, so siblings count as their maximum.
Sequential kernels in one function do not coexist, so a function's demand is the largest kernel's.
Not counted: Mosaic's (8, 128) tile padding and its internal scratch.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from sandbox.harness.model.ops import jaxpr_of, sub_jaxprs


@dataclass(frozen=True)
class OnChip:
    vmem_bytes: int = 0
    smem_bytes: int = 0
    semaphores: int = 0
    kernels: int = 0

    def __add__(self, other: OnChip) -> OnChip:
        return OnChip(
            self.vmem_bytes + other.vmem_bytes,
            self.smem_bytes + other.smem_bytes,
            self.semaphores + other.semaphores,
            self.kernels + other.kernels,
        )

    def union(self, other: OnChip) -> OnChip:
        """Two allocations that never coexist: the larger of each."""
        return OnChip(
            max(self.vmem_bytes, other.vmem_bytes),
            max(self.smem_bytes, other.smem_bytes),
            max(self.semaphores, other.semaphores),
            self.kernels + other.kernels,
        )


def kernel_memory(closed_jaxpr: Any) -> OnChip:
    """On-chip demand of every Pallas kernel reachable from a (closed) jaxpr."""
    return _outside_kernels(jaxpr_of(closed_jaxpr))


def one_kernel(eqn: Any) -> OnChip:
    """On-chip demand of one `pallas_call` or `mpmd_map` equation (its programs' largest)."""
    if eqn.primitive.name == "pallas_call":
        return _pallas_call(eqn)
    total = OnChip()
    for kernel in eqn.params["jaxprs"]:
        inner = jaxpr_of(kernel)
        total = total.union(_refs(v.aval for v in inner.invars) + _scopes(inner) + OnChip(kernels=1))
    return total


def _outside_kernels(jaxpr: Any) -> OnChip:
    total = OnChip()
    for eqn in jaxpr.eqns:
        name = eqn.primitive.name
        if name in ("pallas_call", "mpmd_map"):
            total = total.union(one_kernel(eqn))
        else:
            for sub in sub_jaxprs(eqn):
                total = total.union(_outside_kernels(sub))
    return total


def _pallas_call(eqn: Any) -> OnChip:
    mapping = eqn.params["grid_mapping"]
    kernel = jaxpr_of(eqn.params["jaxpr"])
    copies = buffers(mapping.grid)
    demand = OnChip(kernels=1)
    for block in mapping.block_mappings:
        space = _space(block.block_aval)
        size = ref_bytes(block.block_aval)
        if space in ("vmem", "default"):
            demand += OnChip(vmem_bytes=copies * size)
        elif space == "smem":
            demand += OnChip(smem_bytes=copies * size)
    invars = kernel.invars
    prefetch = invars[: mapping.num_index_operands]
    scratch = invars[len(invars) - mapping.num_scratch_operands :] if mapping.num_scratch_operands else []
    demand += OnChip(smem_bytes=sum(ref_bytes(v.aval) for v in prefetch))
    return demand + _refs(v.aval for v in scratch) + _scopes(kernel)


def _grid_points(grid: Any) -> int:
    """Points of a grid; a dynamic dimension (`DynamicGridDim`, sized at run time) counts as many."""
    dims = tuple(grid or ())
    if not all(isinstance(d, int) for d in dims):
        return 2
    return math.prod(dims)


def _scopes(jaxpr: Any) -> OnChip:
    """run_scoped allocations inside a kernel body: nested scopes add, sibling scopes overlap."""
    largest = OnChip()
    for eqn in jaxpr.eqns:
        if eqn.primitive.name == "run_scoped":
            body = jaxpr_of(eqn.params["jaxpr"])
            largest = largest.union(_refs(v.aval for v in body.invars) + _scopes(body))
        else:
            for sub in sub_jaxprs(eqn):
                largest = largest.union(_scopes(sub))
    return OnChip(largest.vmem_bytes, largest.smem_bytes, largest.semaphores)


def _refs(avals: Any) -> OnChip:
    demand = OnChip()
    for aval in avals:
        space = _space(aval)
        if "semaphore" in space:
            demand += OnChip(semaphores=max(1, math.prod(_inner(aval).shape)))
        elif space == "vmem":
            demand += OnChip(vmem_bytes=ref_bytes(aval))
        elif space == "smem":
            demand += OnChip(smem_bytes=ref_bytes(aval))
    return demand


def _space(aval: Any) -> str:
    space = getattr(aval, "memory_space", None)
    text = str(getattr(space, "value", space)).lower()
    for known in ("vmem_shared", "vmem", "smem", "semaphore", "hbm", "any"):
        if known in text:
            return known
    return "default" if space is None or "default" in text else text


def in_vmem(aval: Any) -> bool:
    """Whether a block or scratch of this aval is counted as VMEM (its own space, or the default)."""
    return _space(aval) in ("vmem", "default")


def buffers(grid: Any) -> int:
    """How many buffers of each block a pipelined `pallas_call` over this grid keeps: two, unless one step."""
    return 1 if _grid_points(grid) <= 1 else 2


def _inner(aval: Any) -> Any:
    return getattr(aval, "inner_aval", aval)


def ref_bytes(aval: Any) -> int:
    inner = _inner(aval)
    try:
        itemsize = np.dtype(inner.dtype).itemsize
    except TypeError:
        return 0
    return int(math.prod(inner.shape)) * itemsize
