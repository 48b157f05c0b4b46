"""The chip's own compiler, off the chip: libtpu compiling a kernel for a TPU this host does not have.

libtpu builds a compile-only client from a topology description (`jax.experimental.topologies`), so a
CPU host with libtpu installed compiles for a TPU v5e, v5p, v6e or TPU7x exactly as a TPU VM does: the
same Mosaic passes, the same scoped-VMEM check (E1001), the same final program. Checked on the lent
v5e (JAX 0.12.0.1, libtpu 0.0.50.1, 2026-12-06): a softmax kernel's final bundle listing compiled on
this CPU host was byte for byte the one the chip's own compile dumped; the compile verdicts of the
VMEM grid's configs are compared in bench/tpu/v5e/vmem-offline.jsonl.

The lowering check traces the function once with its arguments placed on the topology's first device
(`placed`: a one-device program, as the simulator runs it) and compiles that lowering
(`compile_lowered`); a function over several devices is not compiled here.
"""

from __future__ import annotations

import functools
import importlib.metadata
import math
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import numpy as np

# The topology libtpu compiles for, per playground chip: one chip of each (TPU8i and TPU8t are newer
# than libtpu 0.0.50.1 knows: "Invalid TPU external name").
TOPOLOGIES = {"v5e": "v5e:1x1", "v5p": "v5p:1x1x1", "v6e": "v6e:1x1", "tpu7x": "tpu7x:1x1x1"}
# Without the first three, libtpu on a host that is no TPU VM asks the cloud metadata server what it is and
# prints warnings to the job's stderr; the topology it compiles for is named explicitly anyway.
_QUIET_ENV = {
    "TPU_SKIP_MDS_QUERY": "1",
    "TPU_ACCELERATOR_TYPE": "v5litepod-1",
    "TPU_WORKER_HOSTNAMES": "localhost",
    # libtpu lets one process on a host hold it (a lock file in /tmp), for the chips; a compile-only
    # client owns no chip, and several jobs (and servers) on one host compile at once.
    "ALLOW_MULTIPLE_LIBTPU_LOAD": "1",
}


@dataclass(frozen=True)
class Compiled:
    """What libtpu said of one function for one chip: `refused` is its exception, None if it compiled."""

    chip: str
    seconds: float
    refused: BaseException | None
    by: str  # "libtpu 0.0.50.1"


class NotCompiled(Exception):
    """The compile could not be tried (no libtpu, an unknown chip, an argument that is no array, or a
    kernel that did not lower for the placed arguments): the message says which."""


def libtpu_version() -> str | None:
    """The installed libtpu's version, None without one."""
    for name in ("libtpu", "libtpu-nightly"):
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return None


def off_chip() -> bool:
    """Whether this process runs JAX on the CPU only (a job off a chip slot): there the compile-only
    client is the one way to reach the chip's compiler; on a chip, the real compile happens anyway."""
    return os.environ.get("JAX_PLATFORMS", "").strip().lower() == "cpu"


def can_compile(chip: str) -> str:
    """'' if this process can compile for `chip` here, else why not (one plain sentence)."""
    if chip not in TOPOLOGIES:
        return f"libtpu {libtpu_version() or ''} has no compiler for {chip}".replace("  ", " ")
    if libtpu_version() is None:
        return "libtpu is not installed on this host"
    if not off_chip():
        return "this job runs on a TPU, where the kernel is compiled natively"
    return ""


@functools.cache
def _device(chip: str) -> Any:
    for key, value in _QUIET_ENV.items():
        os.environ.setdefault(key, value)
    from jax.experimental import topologies

    return topologies.get_topology_desc(platform="tpu", topology_name=TOPOLOGIES[chip]).devices[0]


def placed(chip: str, args: Sequence[Any]) -> list[Any]:
    """`args` as `jax.ShapeDtypeStruct`s on the first device of a `chip` topology: traced with them, a
    function lowers for that chip, and its lowering compiles with libtpu (`compile_lowered`). Only
    shapes and dtypes are used. Raises `NotCompiled` when the compile cannot be tried here."""
    why = can_compile(chip)
    if why:
        raise NotCompiled(why)
    from jax.sharding import Mesh, NamedSharding, PartitionSpec

    try:
        device = _device(chip)
    except Exception as exc:
        raise NotCompiled(
            f"libtpu could not describe a {chip} ({type(exc).__name__}: {str(exc)[:200]})"
        ) from exc
    leaves = jax.tree.leaves(list(args))
    arrays = (jax.Array, jax.ShapeDtypeStruct, np.ndarray, np.generic, int, float, bool, complex)
    plain = [a for a in leaves if not isinstance(a, arrays)]
    if plain:
        # A mutable ref (`jax.new_ref`) placed as an array would be traced as another function.
        raise NotCompiled(f"an argument is a {type(plain[0]).__name__}, not an array: compiled on a TPU only")
    if not any(hasattr(a, "dtype") and hasattr(a, "shape") for a in leaves):
        # Without an array argument nothing puts the program on the chip: it would lower for the CPU.
        raise NotCompiled(
            "the function takes no array, so nothing places it on the chip: compiled on a TPU only"
        )
    return _shapes(args, NamedSharding(Mesh([device], ("one",)), PartitionSpec()))


def _shapes(args: Sequence[Any], sharding: Any = None) -> list[Any]:
    """`args` as `jax.ShapeDtypeStruct`s (on `sharding` where given); what has no dtype as it is."""
    return jax.tree.map(
        lambda a: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=sharding) if hasattr(a, "dtype") else a,
        list(args),
    )


def compile_lowered(chip: str, lowered: Any) -> Compiled:
    """libtpu's compile of a function lowered from `placed` arguments."""
    t0 = time.perf_counter()
    refused: BaseException | None = None
    try:
        lowered.compile()
    except Exception as exc:
        refused = exc
    return Compiled(chip, time.perf_counter() - t0, refused, f"libtpu {libtpu_version()}")


def compile_for(chip: str, fn: Callable[..., Any], args: Sequence[Any]) -> Compiled:
    """Trace, lower and compile `fn(*args)` for `chip` (the benches' way; the lowering check traces
    once and compiles its own lowering). Raises `NotCompiled` when the compile cannot be tried."""
    abstract = placed(chip, args)
    try:
        lowered = jax.jit(fn).trace(*abstract).lower()
    except Exception as exc:
        raise NotCompiled(f"the kernel did not lower for libtpu's {chip} ({type(exc).__name__})") from exc
    return compile_lowered(chip, lowered)


def _on_this_chip(chip: str, args: Sequence[Any]) -> list[Any]:
    """`args` as shapes for this job's own TPU, which must be a `chip` (a native job compiles there)."""
    from sandbox.protocol.device_kinds import chip_of_device_kind

    kind = jax.devices()[0].device_kind
    if chip_of_device_kind(kind) != chip:
        raise NotCompiled(f"this job's device is a {kind}, not a {chip}")
    return _shapes(args)


def cost_seconds(chip: str, fn: Callable[..., Any], args: Sequence[Any]) -> float | None:
    """XLA's own estimate of `fn(*args)`'s device time on `chip`: libtpu's cost analysis of the program it
    compiles (`optimal_seconds`), after its fusion and layout passes, so an op XLA runs in several passes
    is costed as it runs: off a chip slot with the compile-only client, in a job on a chip with the
    chip's own. None when it cannot be compiled here or gives no figure. (Measured against
    the lent v5e in bench/tpu/v5e/xla-estimates.jsonl: close for attention and row reductions, too slow
    for dots, which the time model costs better.)"""
    try:
        abstract = placed(chip, args) if off_chip() else _on_this_chip(chip, args)
        analysis = jax.jit(fn).trace(*abstract).lower().compile().cost_analysis()
    except Exception:  # an op libtpu cannot compile for `chip` has no figure, as on a host without it
        return None
    if isinstance(analysis, list | tuple):
        analysis = analysis[0] if analysis else {}
    value = analysis.get("optimal_seconds") if isinstance(analysis, dict) else None
    return float(value) if isinstance(value, int | float) and math.isfinite(value) and value > 0 else None
