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

Every fix is guarded: it is applied only on the JAX version it was written and tested for, and only
if the function it wraps still has the expected signature; otherwise nothing is changed (and the
run reports no fix). `tests/sandbox/test_sparsecore_fix.py` shows the bug without the fix and the
right answer with it, so a JAX upgrade that fixes or changes the bug makes that test say so.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import Any

FIXED_JAX_VERSION = "0.12.0.1"
SPARSECORE_AXIS_INDEX = "sparsecore_axis_index"


def applies(jax_version: str) -> bool:
    return jax_version == FIXED_JAX_VERSION


def install() -> tuple[str, ...]:
    """Apply every fix that applies to the running JAX; returns the names of the fixes in effect."""
    import jax

    if not applies(jax.__version__):
        return ()
    return (SPARSECORE_AXIS_INDEX,) if _install_sparsecore_axis_index() else ()


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
