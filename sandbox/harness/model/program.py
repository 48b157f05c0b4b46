"""A `pl.kernel` (`mpmd_map` over a TensorCoreMesh) as the model sees it: one program per core.

The body is walked once per core in program mode (`walker.Walker`), with `axis_index` of the
mesh's core axis set to that core: `emit_pipeline` shows up as a loop whose iterations start and
wait for DMAs (each such iteration is a pipeline step), a core barrier as semaphore signals and
waits. `cost.program_steps` then simulates the cores side by side.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from sandbox.harness.model import families
from sandbox.harness.model.cost import Program
from sandbox.harness.model.evaluate import Ref, inner, itemsize, size, space_of
from sandbox.harness.model.ops import jaxpr_of
from sandbox.harness.model.walker import ModelLimitError, Walker
from sandbox.protocol.chips import ChipInfo


def model_kernel(eqn: Any, known: Sequence[Any], chip: ChipInfo) -> Program:
    meshes = tuple(eqn.params.get("meshes", ()))
    bodies = [jaxpr_of(j) for j in eqn.params["jaxprs"]]
    name = _name(eqn, bodies)
    notes: list[str] = []
    if (
        not meshes
        or "sparse" in str(getattr(meshes[0], "core_type", "")).lower()
        or "sc_" in str(getattr(meshes[0], "core_type", "")).lower()
    ):
        raise ModelLimitError(f"{name}: SparseCore kernels are not modelled (TensorCore meshes only)")
    if len(bodies) > 1:
        notes.append(f"only the first of {len(bodies)} meshes (the TensorCore program) is modelled")
    mesh, body = meshes[0], bodies[0]
    cores = int(getattr(mesh, "num_cores", 1) or 1)
    axes = frozenset(str(a) for a in getattr(mesh, "shape", {"core": cores}))
    if cores > chip.tensor_cores:
        notes.append(
            f"the mesh asks for {cores} TensorCores but a {chip.device_kind} has {chip.tensor_cores}: "
            "the cores are simulated side by side anyway"
        )
    events = []
    for core in range(cores):
        walker = Walker(steps=None, core=core, core_axes=axes)
        env = _env(body, known)
        walker.run(body, env)
        walker.flush()
        events.append(walker.events)
        notes += sorted(n for n in walker.notes if n and n not in notes)
    # What a perfect kernel would move: every HBM operand (inputs, outputs, HBM scratch) once.
    min_bytes = float(sum(_bytes(v) for v in body.invars if space_of(v.aval, "hbm") == "hbm"))
    return Program(kernel=name, events=events, min_bytes=min_bytes, notes=notes, family=families.PROGRAM)


def _env(body: Any, known: Sequence[Any]) -> dict[Any, Any]:
    env: dict[Any, Any] = {}
    for i, var in enumerate(body.invars):
        aval = inner(var.aval)
        space = space_of(var.aval, "hbm")
        value = known[i] if i < len(known) and space == "smem" and known[i] is not None else None
        env[var] = Ref(
            ("arg", i), tuple(aval.shape), aval.dtype, space, np.asarray(value) if value is not None else None
        )
    return env


def _bytes(var: Any) -> int:
    aval = inner(var.aval)
    return size(aval.shape) * itemsize(aval.dtype)


def _name(eqn: Any, bodies: list[Any]) -> str:
    if eqn.params.get("name"):
        return str(eqn.params["name"])
    info = getattr(bodies[0], "debug_info", None) if bodies else None
    return str(getattr(info, "func_name", None) or "kernel")
