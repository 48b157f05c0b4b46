"""A `pl.kernel` (`mpmd_map` over a TensorCoreMesh) as the model sees it: one program per core.

The body is walked once per core in program mode (`walker.Walker`), with `axis_index` of the
mesh's core axis set to that core: `emit_pipeline` shows up as a loop whose iterations start and
wait for DMAs (each such iteration is a pipeline step), a core barrier as semaphore signals and
waits. `simulate.program_steps` then simulates the cores side by side.
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
    if not meshes:
        raise ModelLimitError(f"{name}: a pl.kernel without a mesh is not modelled")
    if is_sparse_core(meshes[0]):
        return _sparse_core(eqn, name, meshes[0], bodies[0], known, chip)
    if len(bodies) > 1:
        notes.append(f"only the first of {len(bodies)} meshes (the TensorCore program) is modelled")
    mesh, body = meshes[0], bodies[0]
    cores = int(getattr(mesh, "num_cores", 1) or 1)
    axes = frozenset(str(a) for a in getattr(mesh, "shape", {"core": cores}))
    if cores > chip.device_tensor_cores:
        notes.append(
            f"the mesh asks for {cores} TensorCores but a {chip.device_kind} device has "
            f"{chip.device_tensor_cores}: "
            "the cores are simulated side by side anyway"
        )
    events = []
    for core in range(cores):
        walker = Walker(steps=None, core=core, core_axes=axes, sublanes=chip.sublanes, mxu=chip.mxu_size)
        env = _env(body, known)
        walker.run(body, env)
        walker.flush()
        events.append(walker.events)
        notes += sorted(n for n in walker.notes if n and n not in notes)
    # What a perfect kernel would move: every HBM operand (inputs, outputs, HBM scratch) once.
    min_bytes = float(sum(_bytes(v) for v in body.invars if space_of(v.aval, "hbm") == "hbm"))
    remote = any(_remote(e) for core in events for e in core)
    family = families.classify(families.Traits.of_program(body, remote=remote))
    return Program(kernel=name, events=events, min_bytes=min_bytes, notes=notes, family=family)


def is_sparse_core(mesh: Any) -> bool:
    kind = str(getattr(mesh, "core_type", "")).lower()
    return "sparse" in kind or kind.startswith("sc_")


def _remote(event: Any) -> bool:
    return event[0] == "dma" and len(event) > 3 and event[3] == "ici"


def _sparse_core(eqn: Any, name: str, mesh: Any, body: Any, known: Sequence[Any], chip: ChipInfo) -> Program:
    """A SparseCore kernel: one program per scalar subcore (`ScalarSubcoreMesh`, one per SparseCore)
    or per vector subcore (`VectorSubcoreMesh`), each walked with its mesh coordinates; vector
    work in rows of the subcore's lanes. `cost.Rates.of_sparse_core` gives each program its
    SparseCore's share of the device's DMA bandwidth."""
    sc = chip.sparse_core
    if sc is None:
        raise ModelLimitError(f"{name}: a {chip.device_kind} has no SparseCore")
    cores = int(getattr(mesh, "num_cores", 1) or 1)
    vector = hasattr(mesh, "subcore_axis_name")
    subcores = int(getattr(mesh, "num_subcores", sc.subcores) or sc.subcores) if vector else 1
    notes = [
        f"SparseCore: {cores} core(s) x {subcores} {'vector' if vector else 'scalar'} subcore program(s); "
        "its DMA rate and step cost are assumed; on the one published SparseCore gather (JAX's guide, "
        "TPU7x) the real chip took 1.65x the model's time, so a copy-bound SparseCore estimate is likely optimistic"
    ]
    events = []
    for core in range(cores):
        for sub in range(subcores):
            axes = _sc_axes(mesh, core, sub, vector)
            walker = Walker(
                steps=None, core=core, core_axes=frozenset(axes), sublanes=1, lanes=sc.lanes, axis_values=axes
            )
            walker.run(body, _env(body, known))
            walker.flush()
            events.append(walker.events)
            notes += sorted(n for n in walker.notes if n and n not in notes)
    min_bytes = float(sum(_bytes(v) for v in body.invars if space_of(v.aval, "hbm") == "hbm"))
    family = families.classify(families.Traits.of_sparse_core())
    return Program(
        kernel=name, events=events, min_bytes=min_bytes, notes=notes, family=family, unit="sparse_core",
        programs_per_core=subcores,
    )  # fmt: skip


def _sc_axes(mesh: Any, core: int, sub: int, vector: bool) -> dict[str, int]:
    if vector:
        return {str(mesh.core_axis_name): core, str(mesh.subcore_axis_name): sub}
    return {str(getattr(mesh, "axis_name", "core")): core}


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
