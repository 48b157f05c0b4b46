"""Static checks of a traced kernel against a chip: what interpret mode never checks, with the numbers.

JAX's simulator runs a two-core `TensorCoreMesh` on a one-core v5e (the harness refuses it; the lowering
check, which runs without the simulator, still warns), a SparseCore mesh on a chip without
SparseCore, VMEM scratch larger than the chip has, and blocks of any shape; the TPU lowering catches
only some of these (it lowers `TensorCoreMesh(num_cores=2)` for v5e without complaint). Each check
here gives one warning that names the number that does not fit.

`facts()` reads what matters from a traced jaxpr (duck-typed, no JAX import); `warnings()` is the pure
rule set over those facts, so the rules are unit-tested without JAX.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sandbox.harness.checks.compiler_scratch import Operand, dot_operands, scratch_bytes, uncounted_bytes
from sandbox.harness.checks.memory import OnChip, one_kernel
from sandbox.protocol.chips import ChipInfo

LANES = 128
SUBLANES = 8


@dataclass(frozen=True)
class MeshUse:
    """A `pl.kernel` / `core_map` mesh: TensorCore or SparseCore, and how many cores it asks for."""

    kernel: str
    kind: str  # "tensor_core", "sparse_core"
    num_cores: int
    num_subcores: int | None = None


@dataclass(frozen=True)
class BlockUse:
    """One `pallas_call` BlockSpec: the block and the whole array it tiles."""

    kernel: str
    operand: str
    block_shape: tuple[int, ...]
    array_shape: tuple[int, ...]
    dtype: str
    itemsize_bits: int
    memory_space: str  # "vmem", "smem", "any", "hbm", "semaphore"


@dataclass(frozen=True)
class KernelFacts:
    meshes: tuple[MeshUse, ...] = ()
    blocks: tuple[BlockUse, ...] = ()
    memory: OnChip = field(default_factory=OnChip)
    # (kernel, CompilerParams.vmem_limit_bytes, its VMEM bytes) of the kernels that set a limit
    vmem_limits: tuple[tuple[str, int, int], ...] = ()
    # (kernel, its VMEM bytes) of the kernels that set no vmem_limit_bytes: the chip's default
    # scoped VMEM limit is theirs
    unlimited: tuple[tuple[str, int], ...] = ()
    # (kernel, ((kind, bytes, rows), ...)): what the compiler keeps scratch for, a dot's left operand or
    # a value widened to f32 (`checks.compiler_scratch.Operand`)
    dots: tuple[tuple[str, tuple[Operand, ...]], ...] = ()


@dataclass(frozen=True)
class OverLimit:
    """A kernel whose VMEM, with the compiler's own scratch, is more than its scoped limit."""

    kernel: str
    counted: int  # its blocks and scratch, as `checks.memory` counts them
    compiler: int  # the compiler's own scratch for its dots and widened values (`checks.compiler_scratch`)
    limit: int
    default: bool  # the chip's default scoped limit (no vmem_limit_bytes)

    @property
    def total(self) -> int:
        return self.counted + self.compiler

    def said(self, chip: ChipInfo, *, mib: bool = False) -> str:
        """What it needs (in bytes, or MiB for a sweep's one line), the compiler's share named."""
        size = (lambda n: f"{n / 2**20:.1f} MiB") if mib else (lambda n: f"{n:,} bytes")
        if not self.compiler:
            return f"{'needs' if mib else 'allocates'} {size(self.counted)} of VMEM"
        return (
            f"needs about {size(self.total)} of VMEM: {size(self.counted)} of blocks and scratch, and "
            f"about {size(self.compiler)} the {chip.device_kind} compiler keeps for itself (copies of a dot's "
            "left operand, a block widened to f32; measured on the chip)"
        )


def warnings(facts: KernelFacts, chip: ChipInfo) -> tuple[str, ...]:
    found: list[str] = []
    for mesh in facts.meshes:
        found += _mesh(mesh, chip)
    found += _memory(facts, chip)
    for block in facts.blocks:
        found += _tiling(block)
    return tuple(dict.fromkeys(found))


def _mesh(mesh: MeshUse, chip: ChipInfo) -> list[str]:
    where = f"kernel {mesh.kernel!r}"
    have = chip.device_tensor_cores
    if mesh.kind == "tensor_core" and mesh.num_cores > have:
        split = (
            f"; its chip's {chip.tensor_cores} are {chip.tensor_cores} devices"
            if have < chip.tensor_cores
            else ""
        )
        return [
            f"{where}: TensorCoreMesh has num_cores={mesh.num_cores}, but a {chip.device_kind} device has "
            f"{have} TensorCore{'s' if have > 1 else ''}{split} (the TPU lowering does not check this)"
        ]
    if mesh.kind != "sparse_core":
        return []
    sc = chip.sparse_core
    if sc is None:
        return [f"{where}: a SparseCore mesh, but a {chip.device_kind} has no SparseCore"]
    found = []
    if mesh.num_cores > sc.cores:
        found.append(
            f"{where}: SparseCore mesh has num_cores={mesh.num_cores}, but a {chip.device_kind} has "
            f"{sc.cores} SparseCores"
        )
    if mesh.num_subcores is not None and mesh.num_subcores > sc.subcores:
        found.append(
            f"{where}: SparseCore mesh has num_subcores={mesh.num_subcores}, but a {chip.device_kind} "
            f"SparseCore has {sc.subcores} subcores"
        )
    return found


def _memory(facts: KernelFacts, chip: ChipInfo) -> list[str]:
    demand, found = facts.memory, []
    if demand.vmem_bytes > chip.vmem_bytes:
        found.append(
            f"VMEM: the kernel allocates {demand.vmem_bytes:,} bytes, more than the "
            f"{chip.vmem_bytes:,} bytes of one {chip.device_kind} TensorCore"
        )
    if demand.smem_bytes > chip.smem_bytes:
        found.append(
            f"SMEM: the kernel allocates {demand.smem_bytes:,} bytes, more than the "
            f"{chip.smem_bytes:,} bytes of one {chip.device_kind} TensorCore"
        )
    found += scoped_warnings(facts, chip)
    for kernel, limit, _ in facts.vmem_limits:
        if limit > chip.vmem_bytes:
            found.append(
                f"kernel {kernel!r}: vmem_limit_bytes={limit:,} is more than the {chip.vmem_bytes:,} "
                f"bytes of VMEM of one {chip.device_kind} TensorCore"
            )
    return found


def scoped_warnings(facts: KernelFacts, chip: ChipInfo) -> list[str]:
    """One line per kernel over its scoped VMEM limit, counting the compiler's scratch for its dots
    (the lowering check's warnings, and the VMEM meter's)."""
    found: list[str] = []
    for over in over_limits(facts, chip):
        if over.default and over.total <= chip.vmem_bytes:  # above it, the capacity warning says more
            found.append(
                f"kernel {over.kernel!r}: {over.said(chip)}, more than the {over.limit:,} bytes a "
                f"{chip.device_kind} kernel gets by default (its scoped VMEM limit): the TPU compiler "
                'refuses it ("exceeded scoped vmem limit") unless it sets '
                f"pltpu.CompilerParams(vmem_limit_bytes=...) (at most {chip.vmem_bytes:,})"
            )
        elif not over.default:
            found.append(
                f"kernel {over.kernel!r}: {over.said(chip)}, more than its vmem_limit_bytes={over.limit:,}"
            )
    return found


def vmem_refusal(facts: KernelFacts, chip: ChipInfo) -> str | None:
    """Why the TPU compiler would refuse the kernels for their VMEM (a sweep's `over_vmem`): more than
    the chip has, or, with the compiler's own scratch for its dots, more than the kernel's scoped limit
    (its vmem_limit_bytes, or the compiler's default where that is published:
    `ChipInfo.scoped_vmem_bytes`)."""
    used = facts.memory.vmem_bytes
    if used > chip.vmem_bytes:
        return f"needs {used / 2**20:.1f} MiB of VMEM; a {chip.title} has {chip.vmem_bytes / 2**20:.0f} MiB"
    for over in over_limits(facts, chip):
        if over.default:
            return (
                f"{over.said(chip, mib=True)}; a {chip.title} kernel gets {over.limit / 2**20:.0f} MiB by default "
                f"(kernel {over.kernel!r} sets no pltpu.CompilerParams(vmem_limit_bytes=...))"
            )
        return f"{over.said(chip, mib=True)}; kernel {over.kernel!r} sets vmem_limit_bytes={over.limit:,}"
    return None


def over_limits(facts: KernelFacts, chip: ChipInfo) -> list[OverLimit]:
    """Each kernel whose counted VMEM plus the compiler's scratch for its dots is more than its scoped
    limit: its vmem_limit_bytes, or, without one, the chip's default where that is published."""
    dots = dict(facts.dots)
    found = []
    for kernel, used in facts.unlimited:
        if chip.scoped_vmem_bytes is None:
            break
        over = OverLimit(
            kernel, used, scratch_bytes(dots.get(kernel, ()), chip), chip.scoped_vmem_bytes, True
        )
        if over.total > over.limit:
            found.append(over)
    for kernel, limit, used in facts.vmem_limits:
        if limit > chip.vmem_bytes:
            continue  # the capacity warning says it
        over = OverLimit(kernel, used, scratch_bytes(dots.get(kernel, ()), chip), limit, False)
        if over.total > over.limit:
            found.append(over)
    return found


def _tiling(block: BlockUse) -> list[str]:
    if block.memory_space != "vmem" or not block.block_shape:
        return []
    where = (
        f"kernel {block.kernel!r}, {block.operand}: block {block.block_shape} of array "
        f"{block.array_shape} {block.dtype}"
    )
    if len(block.block_shape) == 1:
        return _tiling_1d(block, where)
    rows, lanes = block.block_shape[-2:]
    array_rows, array_lanes = block.array_shape[-2:]
    found = []
    if lanes != array_lanes and lanes % LANES:
        found.append(
            f"{where}: the last dimension {lanes} is neither a multiple of {LANES} nor the array's "
            f"{array_lanes}; the TPU lowering rejects this"
        )
    if rows != array_rows and rows % SUBLANES:
        found.append(
            f"{where}: the second-to-last dimension {rows} is neither a multiple of {SUBLANES} nor the "
            f"array's {array_rows}; the TPU lowering rejects this"
        )
    native = _native_rows(block.itemsize_bits)
    if rows != array_rows and native > SUBLANES and rows % SUBLANES == 0 and rows % native:
        found.append(
            f"{where}: {rows} rows is not a multiple of {native}, the native ({native}, {LANES}) tile "
            f"of {block.itemsize_bits}-bit data; the lowering accepts multiples of {SUBLANES}, but "
            "partial tiles waste VMEM and may need relayouts"
        )
    return found


def _tiling_1d(block: BlockUse, where: str) -> list[str]:
    # The lowering's rule for rank-1 blocks: the whole array, a multiple of 8 x 128, or a power of two
    # of at least 128 x (32 / bits) elements.
    size, whole = block.block_shape[0], block.array_shape[0]
    packed = LANES * max(1, 32 // max(block.itemsize_bits, 1))
    if size == whole or size % (SUBLANES * LANES) == 0 or (size >= packed and size & (size - 1) == 0):
        return []
    return [
        f"{where}: a rank-1 block of {size} elements must be the whole array ({whole}), a multiple of "
        f"{SUBLANES * LANES}, or a power of two of at least {packed}; the TPU lowering rejects this"
    ]


def _native_rows(bits: int) -> int:
    return SUBLANES * max(1, 32 // bits) if 0 < bits < 32 else SUBLANES


# ---------------------------------------------------------------------------------------------
# Reading the facts from a traced (closed) jaxpr.


def facts(closed_jaxpr: Any) -> KernelFacts:
    meshes: list[MeshUse] = []
    blocks: list[BlockUse] = []
    limits: list[tuple[str, int, int]] = []
    unlimited: list[tuple[str, int]] = []
    dots: dict[str, tuple[Operand, ...]] = {}  # two kernels of one name: both's dots
    memory = OnChip()  # kernels run one after another: the largest of each (`checks.memory`)
    for eqn in kernel_eqns(_jaxpr_of(closed_jaxpr)):
        name = _kernel_name(eqn)
        demand = one_kernel(eqn)
        memory = memory.union(demand)
        if eqn.primitive.name == "mpmd_map":
            meshes += [_mesh_use(name, mesh) for mesh in eqn.params.get("meshes", ())]
        else:
            mesh = eqn.params.get("mesh")
            if mesh is not None:
                meshes.append(_mesh_use(name, mesh))
            blocks += [_block_use(name, bm) for bm in eqn.params["grid_mapping"].block_mappings]
        bodies = eqn.params.get("jaxprs") or (eqn.params["jaxpr"],)
        dots[name] = dots.get(name, ()) + tuple(op for body in bodies for op in dot_operands(body))
        limit = getattr(eqn.params.get("compiler_params"), "vmem_limit_bytes", None)
        scoped = demand.vmem_bytes - uncounted_bytes(eqn)  # as the compiler counts it against its limit
        if isinstance(limit, int):
            limits.append((name, limit, scoped))
        else:
            unlimited.append((name, scoped))
    return KernelFacts(
        tuple(meshes), tuple(blocks), memory, tuple(limits), tuple(unlimited), tuple(dots.items())
    )


def kernel_eqns(jaxpr: Any) -> list[Any]:
    """Every `pallas_call` / `mpmd_map` equation, at any depth outside kernels."""
    found = []
    for eqn in jaxpr.eqns:
        if eqn.primitive.name in ("pallas_call", "mpmd_map"):
            found.append(eqn)
            continue
        for value in eqn.params.values():
            for item in value if isinstance(value, (tuple, list)) else (value,):
                inner = _jaxpr_of(item)
                if hasattr(inner, "eqns"):
                    found += kernel_eqns(inner)
    return found


def over_devices(closed_jaxpr: Any) -> bool:
    """Whether a traced function spans several devices (a `shard_map` anywhere outside its kernels)."""
    pending = [_jaxpr_of(closed_jaxpr)]
    while pending:
        for eqn in pending.pop().eqns:
            if eqn.primitive.name == "shard_map":
                return True
            for value in eqn.params.values():
                for item in value if isinstance(value, (tuple, list)) else (value,):
                    inner = _jaxpr_of(item)
                    if hasattr(inner, "eqns") and eqn.primitive.name != "pallas_call":
                        pending.append(inner)
    return False


def _mesh_use(kernel: str, mesh: Any) -> MeshUse:
    core_type = str(getattr(mesh, "core_type", "")).lower()
    kind = "sparse_core" if "sc_" in core_type or "sparse" in core_type else "tensor_core"
    cores = getattr(mesh, "num_cores", None)
    if cores is None:
        cores = math.prod(getattr(mesh, "shape", {}).values()) if hasattr(mesh, "shape") else 1
    return MeshUse(kernel, kind, int(cores), getattr(mesh, "num_subcores", None))


def _block_use(kernel: str, bm: Any) -> BlockUse:
    dtype = bm.array_aval.dtype
    try:
        bits = np.dtype(dtype).itemsize * 8
    except TypeError:
        bits = 32
    space = getattr(bm.block_aval, "memory_space", None)
    text = str(getattr(space, "value", space)).lower()
    known = next((k for k in ("vmem", "smem", "semaphore", "hbm", "any") if k in text), "vmem")
    return BlockUse(
        kernel=kernel,
        operand=str(bm.origin),
        block_shape=tuple(_dim_size(d) for d in bm.block_shape),
        array_shape=tuple(int(n) for n in bm.array_aval.shape),
        dtype=str(dtype),
        itemsize_bits=bits,
        memory_space=known,
    )


def _dim_size(dim: Any) -> int:
    # Blocked / Element / BoundedSlice carry `block_size`; Squeezed (and `None`) is one row.
    size = getattr(dim, "block_size", None)
    return int(size) if size is not None else (int(dim) if isinstance(dim, int) else 1)


def _kernel_name(eqn: Any) -> str:
    name = eqn.params.get("name")
    if name:
        return str(name)
    jaxpr = eqn.params.get("jaxpr")
    jaxprs = eqn.params.get("jaxprs") or ([jaxpr] if jaxpr is not None else [])
    info = getattr(_jaxpr_of(jaxprs[0]), "debug_info", None) if jaxprs else None
    return str(getattr(info, "func_name", "kernel"))


def _jaxpr_of(value: Any) -> Any:
    return value if hasattr(value, "eqns") else getattr(value, "jaxpr", value)
