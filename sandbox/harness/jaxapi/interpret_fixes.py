"""Fixes the harness applies to TPU interpret mode of one pinned JAX version, before user code runs.

`sparsecore_axis_index` (jax 0.12.0.1): a SparseCore kernel (`plsc.ScalarSubcoreMesh` /
`plsc.VectorSubcoreMesh`) reaches the interpreter as a pallas_call whose grid is the mesh, run one
instance after another on one simulated core. The interpreter still receives the SC mesh and, for
`lax.axis_index` over a mesh axis, answers with the simulated core id, which is 0 for every
instance: each instance then does instance 0's share and the rest of the output keeps its
uninitialised fill, silently. Passing `mesh=None` for SparseCore meshes makes `axis_index` answer
from the grid coordinate instead, which is the instance's own (core, subcore) index. TensorCore
meshes are left alone (their cores really are simulated, one thread each). Cross-subcore
synchronisation still cannot work: the instances run one after another.

`device_kind` (jax 0.12.0.1): kernels that pick tuned block sizes or code paths for a TPU generation
ask `jax.devices()[0].device_kind` (JAX's ragged paged attention, megablox's `is_tpu()`), which in
interpret mode on a CPU answers "cpu", so they raise or take a CPU path. The CPU `Device` class's
`device_kind` property is replaced by one that answers the simulated chip's kind (e.g. "TPU v5p") to
every caller outside JAX's own `jax/_src/` (JAX itself keeps seeing "cpu": its dispatch, caching and
mesh code compare device kinds). The platform stays "cpu".

`explicit_mesh` (jax 0.12.0.1): a multi-device job runs under the harness's device mesh (axis "x",
carrying the chip; see `sandbox.harness.target`). A kernel that builds its own mesh over the same
devices and hands it to `shard_map(..., mesh=mesh)` (JAX's shipped `all_gather` does) is refused
("The context mesh … should match the mesh passed to shard_map"), since the two differ in axis types
and in the chip the harness's carries. When the axis names and sizes are the same, the passed mesh
is taken to be the context one: `shard_map` then runs under the harness's mesh, chip included.

`sandbox/harness/jaxapi/fixes/` holds the fixes that extend the simulator to constructs a TPU runs and it
cannot (RevisitMode.ANY, semaphore_read, stochastic_round, select_ref, indexed DMAs, SparseCore
gather/scatter, empty_ref in a kernel body, the TPU's stateful PRNG, PRNG keys and semaphores as kernel
operands and outputs, ref views, aliased VMEM operands, subcore barriers, masked stores of rank 3), and
two that give the chip's arithmetic: f32 dots at the default precision as one bf16 MXU pass (`mxu`),
an approximate reciprocal as near exact as the chip's (`approx`);
each module's docstring says what it changes, and
`tests/sandbox/test_simulator_extensions.py` runs a kernel for each through a real backend.

Every fix is guarded: it is applied only on the JAX version it was written and tested for, and only
if the function it wraps still has the expected signature; otherwise nothing is changed (and the
run reports no fix). The two that give the chip's arithmetic (`mxu`, `approx`) are applied on every
runtime whose interpreter takes the same arguments (0.10.2 and 0.11.2 too), so a simulated f32 dot's
verdict is the chip's on every runtime (`tests/runtimes/test_chip_arithmetic_on_runtimes.py`). `tests/sandbox/test_sparsecore_fix.py` shows the bug without the fix and the
right answer with it, so a JAX upgrade that fixes or changes the bug makes that test say so.
"""

from __future__ import annotations

import functools
import inspect
import sys
from collections.abc import Callable
from typing import Any

from sandbox.harness.jaxapi import versions
from sandbox.harness.jaxapi.fixes import (
    allocations,
    approx,
    futures,
    gathers,
    keys,
    masked,
    mxu,
    prng,
    resident,
    revisit,
    rounding,
    selects,
    semaphores,
    subcores,
    vector_index,
    views,
)

SPARSECORE_AXIS_INDEX = "sparsecore_axis_index"
DEVICE_KIND = "device_kind"
EXPLICIT_MESH = "explicit_mesh"
REVISIT_ANY = revisit.NAME
SEMAPHORE_READ = semaphores.NAME
STOCHASTIC_ROUND = rounding.NAME
SELECT_REF = selects.NAME
INDEXED_DMA = gathers.NAME
VECTOR_GATHER_SCATTER = vector_index.NAME
EMPTY_REF_IN_KERNEL = allocations.NAME
PRNG_STATE = prng.NAME
KEY_OPERANDS = keys.NAME
SEMAPHORE_OPERANDS = futures.NAME
REF_VIEWS = views.NAME
ALIASED_RESIDENT = resident.NAME
SUBCORE_BARRIER = subcores.NAME
MASKED_STORE_BOUNDS = masked.NAME
MXU_PRECISION = mxu.NAME
APPROX_RECIPROCAL = approx.NAME


def applies(jax_version: str) -> bool:
    """Whether every fix applies on `jax_version` (else only the chip's arithmetic, where it fits)."""
    return versions.support(jax_version).internals


def reason(jax_version: str) -> str:
    """Why no fix is applied on `jax_version` ("" on the version they were written for)."""
    return versions.pinned(jax_version, "interpret-mode fix")


def install(device_kind: str | None = None) -> tuple[str, ...]:
    """Apply every fix that applies to the running JAX; returns the names of the fixes in effect.

    `device_kind`: the simulated chip's kind, for the `device_kind` fix (None: leave it alone).
    """
    import jax

    if not applies(jax.__version__):
        return _install_arithmetic() if versions.support(jax.__version__).chip_arithmetic else ()
    fixes = []
    if _install_sparsecore_axis_index():
        fixes.append(SPARSECORE_AXIS_INDEX)
    if device_kind is not None and _install_device_kind(device_kind):
        fixes.append(DEVICE_KIND)
    if _install_explicit_mesh():
        fixes.append(EXPLICIT_MESH)
    fixes += _install_extensions()
    return tuple(fixes)


def _install_arithmetic() -> tuple[str, ...]:
    """On the older runtimes, only the fixes that give the chip's arithmetic (the MXU's bf16 pass, the
    approximate reciprocal): they rewrite plain equations before the interpreter runs them, and the
    interpreter they wrap takes the same arguments on every runtime this playground offers (checked
    here, so a runtime whose interpreter differs runs without them and says so by their absence)."""
    from jax._src.pallas.mosaic.interpret import interpret_pallas_call as ipc

    params = list(inspect.signature(ipc._interpret_jaxpr).parameters)
    if params[:1] != ["jaxpr"] or not {"ctx", "token"} <= set(params):
        return ()
    arithmetic: list[tuple[str, Callable[[Any], bool]]] = [
        (MXU_PRECISION, mxu.install),
        (APPROX_RECIPROCAL, approx.install),
    ]
    return tuple(name for name, install in arithmetic if install(ipc))


def _install_extensions() -> list[str]:
    """The fixes that extend the simulator to constructs it cannot run (`sandbox.harness.jaxapi.fixes`)."""
    from jax._src.pallas.mosaic.interpret import interpret_pallas_call as ipc

    extensions: list[tuple[str, Callable[[Any], bool]]] = [
        (REVISIT_ANY, revisit.install),
        (SEMAPHORE_READ, semaphores.install),
        (STOCHASTIC_ROUND, rounding.install),
        (SELECT_REF, selects.install),
        (INDEXED_DMA, gathers.install),
        (VECTOR_GATHER_SCATTER, vector_index.install),
        (EMPTY_REF_IN_KERNEL, allocations.install),
        (PRNG_STATE, prng.install),
        (KEY_OPERANDS, keys.install),
        (SEMAPHORE_OPERANDS, futures.install),
        (REF_VIEWS, views.install),
        (ALIASED_RESIDENT, resident.install),
        (SUBCORE_BARRIER, subcores.install),
        (MASKED_STORE_BOUNDS, masked.install),
        (MXU_PRECISION, mxu.install),
        (APPROX_RECIPROCAL, approx.install),
    ]
    return [name for name, install in extensions if install(ipc)]


def _install_sparsecore_axis_index() -> bool:
    from jax._src.pallas.mosaic import core as tpu_core
    from jax._src.pallas.mosaic.interpret import interpret_pallas_call as ipc

    current = ipc.interpret_pallas_call
    if getattr(current, "_playground_fix", None) == SPARSECORE_AXIS_INDEX:
        return True
    if "mesh" not in inspect.signature(current).parameters:
        return False
    # `pallas_call`'s lowering looks the function up on the module each time, so this takes effect
    # for every kernel lowered from now on.
    ipc.interpret_pallas_call = _without_sparsecore_mesh(current, tpu_core.TensorCoreMesh)
    return True


def _without_sparsecore_mesh(interpret: Callable[..., Any], tensor_core_mesh: type) -> Callable[..., Any]:
    @functools.wraps(interpret)
    def wrapper(*args: Any, mesh: Any = None, **kwargs: Any) -> Any:
        if mesh is not None and not isinstance(mesh, tensor_core_mesh):
            mesh = None
        return interpret(*args, mesh=mesh, **kwargs)

    wrapper._playground_fix = SPARSECORE_AXIS_INDEX  # type: ignore[attr-defined]
    return wrapper


def _install_device_kind(kind: str) -> bool:
    import jax

    device_class = type(jax.devices()[0])
    current: Any = device_class.__dict__.get("device_kind")
    if current is None:
        return False
    if getattr(current, "fget", None) is not None and getattr(current.fget, "_playground_fix", None):
        current.fget._playground_kind[0] = kind
        return True
    if not isinstance(current, property) and type(current).__name__ not in (
        "getset_descriptor",
        "nb_property",
    ):
        return False
    original = current
    simulated = [kind]

    def device_kind(device: Any) -> str:
        real = original.__get__(device, device_class)
        caller = sys._getframe(1).f_code.co_filename
        if real != "cpu" or _INTERNAL in caller:
            return real
        return simulated[0]

    device_kind._playground_fix = DEVICE_KIND  # type: ignore[attr-defined]
    device_kind._playground_kind = simulated  # type: ignore[attr-defined]
    try:
        device_class.device_kind = property(device_kind)
    except (TypeError, AttributeError):  # an immutable class in some jaxlib: leave it
        return False
    return True


# JAX's own modules keep the real answer; only user code and kernels outside `jax/_src` see the chip.
_INTERNAL = "/jax/_src/"


def _install_explicit_mesh() -> bool:
    from jax._src import shard_map

    current = shard_map._shmap_checks
    if getattr(current, "_playground_fix", None) == EXPLICIT_MESH:
        return True
    if tuple(inspect.signature(current).parameters) != (
        "mesh",
        "axis_names",
        "in_specs",
        "out_specs",
        "_smap",
    ):
        return False
    shard_map._shmap_checks = _context_mesh_for_the_same_axes(current, shard_map.get_abstract_mesh)
    return True


def _context_mesh_for_the_same_axes(
    checks: Callable[..., Any], context: Callable[[], Any]
) -> Callable[..., Any]:
    @functools.wraps(checks)
    def wrapper(mesh: Any, *args: Any) -> Any:
        current = context()
        if mesh is not None and not current.empty and _same_axes(mesh, current):
            mesh = None  # shard_map then takes the context mesh, the harness's
        return checks(mesh, *args)

    wrapper._playground_fix = EXPLICIT_MESH  # type: ignore[attr-defined]
    return wrapper


def _same_axes(mesh: Any, other: Any) -> bool:
    return tuple(mesh.axis_names) == tuple(other.axis_names) and tuple(mesh.axis_sizes) == tuple(
        other.axis_sizes
    )
