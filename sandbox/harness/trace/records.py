"""What one interpreter callback did, as a record for `sandbox.harness.trace.timeline`; which buffer is which operand.

`Recorder` has one method per callback that `sandbox.harness.trace.capture` wraps (named like it, without a leading
underscore). Each gets the callback's result and its arguments by name (jax 0.12.0.1's parameter
names, checked by `sandbox.harness.trace.capture.check`) and returns a record dict, or None for calls that are part
of something already recorded (the second half of a pallas_call block copy). It also keeps
the book that names buffers: a launch begins on a device with `_initialize_shared_memory`, and its
first HBM buffers are the kernel's operands, inputs in order, then the outputs that do not alias an
input (the order of `interpret_pallas_call`); `describe` reads those operands from the lowering.
"""

from __future__ import annotations

import collections
import dataclasses
from collections.abc import Callable
from typing import Any, NamedTuple

from sandbox.harness.trace import regions, timeline

Args = dict[str, Any]
Record = dict[str, Any]
# The meshes of `jax.experimental.pallas.tpu_sc` (jax 0.12.0.1): a kernel on one runs on SparseCores;
# any other kernel (a pallas_call, a TensorCoreMesh) on TensorCores.
SPARSE_CORE_MESHES = frozenset({"ScalarSubcoreMesh", "VectorSubcoreMesh"})


class Buffer(NamedTuple):
    space: str  # "hbm", "vmem", "smem", ...
    label: str  # the operand's name for a kernel operand in HBM, else e.g. "vmem#104"
    operand: tuple[int, int, str] | None  # (device, launch, name) of a kernel operand
    itemsize: int | None
    shape: tuple[int, ...] | None


@dataclasses.dataclass(frozen=True)
class Kernel:
    """What lowering tells about one pallas_call / pl.kernel: its HBM operands, in allocation order."""

    name: str
    on_cores: bool  # on a TensorCore mesh (`pl.kernel`): each simulated core runs the body once
    operands: tuple[tuple[str, str, str], ...]  # (name, role, kernel parameter)
    core_kind: str = "tensor_core"  # or "sparse_core": which kind of core runs it


@dataclasses.dataclass
class _Launch:
    device: int
    number: int
    kernel: Kernel | None
    assigned: int = 0  # operands given a buffer so far
    buffers: dict[tuple[str, int, int | None], Buffer] = dataclasses.field(default_factory=dict)


class Recorder:
    """Turns callbacks into records; one per recording (buffer ids restart with every launch)."""

    def __init__(self, space_names: dict[int, str], to_range: Callable[[Any], Any]) -> None:
        # `to_range`: the interpreter's transforms (NDIndexers) → one slice or int per dimension.
        self._space_names = space_names
        self._to_range = to_range
        self._launches: dict[int, _Launch] = {}
        self._launch_counts: collections.Counter[int] = collections.Counter()
        self.operands: list[Record] = []

    def grid_point(self, kernel: Kernel, grid_point: Any, core_id: Any) -> Record:
        # The recorder is not told the device; `timeline.assign_devices` works it out.
        return {
            "kind": "grid_step",
            "device": None,
            "core": int(core_id),
            "grid_point": _ints(grid_point),
            "label": kernel.name,
        }

    def dma_start(self, out: Any, a: Args) -> Record:
        device, core = int(a["device_id"]), int(a["src_local_core_id"])
        dst_device = device if a["dst_device_id"] is None else int(a["dst_device_id"])
        dst_core = core if a.get("dst_local_core_id") is None else int(a["dst_local_core_id"])
        src = self._buffer(device, core, a["src_memory_space"], a["src_id"])
        dst = self._buffer(dst_device, dst_core, a["dst_memory_space"], a["dst_id"])
        src_range = self._range(a["src_transforms"], src.shape)
        return {
            "kind": "dma_start",
            "device": device,
            "core": core,
            "phase": phase(a.get("source_info")),
            "bytes": regions.region_bytes(src_range, src.itemsize),
            **_side("src", src, src_range),
            **_side("dst", dst, self._range(a["dst_transforms"], dst.shape)),
            "dst_device": dst_device,
            "dst_core": dst_core,
            "semaphore": int(a["dst_sem_id"]),
            "send_semaphore": None if a["src_sem_id"] is None else int(a["src_sem_id"]),
        }

    def dma_wait(self, out: Any, a: Args) -> Record:
        return {
            **_where(a),
            "kind": "dma_wait",
            "phase": phase(a.get("source_info")),
            "semaphore": int(a["sem_id"]),
            "bytes": int(a["size"]),
        }

    def semaphore_signal(self, out: Any, a: Args) -> Record:
        device = int(a["device_id"])
        target_device, target_core = a["target_device_id"], a["target_local_core_id"]
        return {
            **_where(a),
            "kind": "sem_signal",
            "semaphore": int(a["sem_id"]),
            "value": int(a["inc"]),
            # As the interpreter reads them: no target device = this one; no target core = core 0.
            "dst_device": device if target_device is None else int(target_device),
            "dst_core": 0 if target_core is None else int(target_core),
        }

    def semaphore_wait(self, out: Any, a: Args) -> Record:
        return {**_where(a), "kind": "sem_wait", "semaphore": int(a["sem_id"]), "value": int(a["value"])}

    def get(self, out: Any, a: Args) -> Record | None:
        block_read = a.get("input_name") is not None
        if not block_read and a.get("source_info") is None:
            return None  # pallas_call staging an output block, or reading its outputs back at the end
        buffer = self._buffer(int(a["device_id"]), int(a["local_core_id"]), a["memory_space"], a["buffer_id"])
        record = {
            **_where(a),
            "kind": "block_read" if block_read else "load",
            "phase": phase(a.get("source_info")),
            "bytes": getattr(out[1], "nbytes", None),
            **_side("src", buffer, self._range(a["transforms"], buffer.shape)),
        }
        return {**record, **_block(a)} if block_read else record

    def store(self, out: Any, a: Args) -> Record | None:
        if a.get("output_name") is None:
            return None  # the second half of a block_read: pallas_call filling the kernel's input buffer
        buffer = self._buffer(int(a["device_id"]), int(a["local_core_id"]), a["memory_space"], a["buffer_id"])
        return {
            **_where(a),
            "kind": "block_write",
            "bytes": getattr(a["val"], "nbytes", None),
            **_side("dst", buffer, self._range(a["transforms"], buffer.shape)),
            **_block(a),
        }

    def swap(self, out: Any, a: Args) -> Record:
        buffer = self._buffer(int(a["device_id"]), int(a["local_core_id"]), a["memory_space"], a["buffer_id"])
        return {
            **_where(a),
            "kind": "store",
            "phase": phase(a.get("source_info")),
            "bytes": getattr(a["val"], "nbytes", None),
            **_side("dst", buffer, self._range(a["transforms"], buffer.shape)),
        }

    def allocate_buffer(self, out: Any, a: Args) -> None:
        launch = self._launches.get(int(a["device_id"]))
        if launch is None:
            return
        space, number, val = self._space(a["memory_space"]), int(out[1]), a["val"]
        shared = a["local_core_id"] is None  # allocated on every core of the device
        core = None if shared or space == "hbm" else int(a["local_core_id"])
        shape, dtype = tuple(getattr(val, "shape", ())), getattr(val, "dtype", None)
        label, operand = f"{space}#{number}", None
        kernel = launch.kernel
        if space == "hbm" and shared and kernel is not None and launch.assigned < len(kernel.operands):
            name, role, param = kernel.operands[launch.assigned]
            launch.assigned += 1
            label, operand = name, (launch.device, launch.number, name)
            self.operands.append(
                {"device": launch.device, "launch": launch.number, "name": name, "role": role,
                 "kernel": kernel.name, "param": param, "shape": shape, "dtype": str(dtype)}
            )  # fmt: skip
        itemsize = getattr(dtype, "itemsize", None)
        launch.buffers[(space, number, core)] = Buffer(space, label, operand, itemsize, shape)

    def initialize_shared_memory(self, out: Any, a: Args) -> Record:
        device = int(a["device_id"])
        kernel = getattr(a["interpret_params"], "kernel", None)  # see `Capture._traced_params`
        self._launches[device] = _Launch(device, self._launch_counts[device], kernel)
        self._launch_counts[device] += 1
        return {
            "kind": "kernel_start",
            "device": device,
            "core": None,
            "label": kernel.name if kernel else "",
            "core_kind": kernel.core_kind if kernel else "",
        }

    def _space(self, memory_space: Any) -> str:
        return self._space_names.get(int(memory_space), f"space{int(memory_space)}")

    def _buffer(self, device: int, core: int, memory_space: Any, buffer_id: Any) -> Buffer:
        space, number = self._space(memory_space), int(buffer_id)
        launch = self._launches.get(device)
        found = None
        if launch is not None:
            found = launch.buffers.get((space, number, core)) or launch.buffers.get((space, number, None))
        return found or Buffer(space, f"{space}#{number}", None, None, None)

    def _range(self, transforms: Any, shape: tuple[int, ...] | None) -> regions.Range | None:
        if not transforms:
            return regions.whole(shape) if shape is not None else None
        return regions.normalize(self._to_range(transforms))


def describe(kwargs: dict[str, Any], tensor_core_mesh: type) -> Kernel:
    """The HBM operands of the kernel being lowered (`interpret_pallas_call`'s keyword arguments).

    On a TensorCore mesh (`pl.kernel`) each simulated core runs the body once; a SparseCore mesh is
    run as a grid, one point per subcore.
    """
    mapping, jaxpr = kwargs["grid_mapping"], kwargs["jaxpr"]
    names = list(getattr(jaxpr.debug_info, "arg_names", None) or ())
    params = names[mapping.slice_block_ops] if names else []
    inputs, outputs = mapping.num_inputs, mapping.num_outputs
    aliased = {out: i - mapping.num_index_operands for i, out in kwargs["input_output_aliases"]}
    roles = ["input"] * inputs
    for i in aliased.values():
        roles[i] = "input and output"
    operands = [(f"in{i}", roles[i], _at(params, i)) for i in range(inputs)]
    for j in range(outputs):
        if j not in aliased:
            name = "out" if outputs == 1 else f"out[{j}]"
            operands.append((name, "output", _at(params, inputs + j)))
    title = kwargs.get("name") or getattr(jaxpr.debug_info, "func_name", "") or "kernel"
    mesh = kwargs.get("mesh")
    on_cores = isinstance(mesh, tensor_core_mesh)
    core_kind = "sparse_core" if type(mesh).__name__ in SPARSE_CORE_MESHES else "tensor_core"
    return Kernel(name=str(title), on_cores=on_cores, operands=tuple(operands), core_kind=core_kind)


def phase(source_info: Any) -> str:
    """The emit_pipeline phase that issued a callback, from the named scopes emit_pipeline opens."""
    if source_info is None:
        return ""
    for part in reversed(str(source_info.name_stack).split("/")):
        if part.startswith("ep_"):
            return timeline.PIPELINE_SCOPES.get(part.rstrip("0123456789").rstrip("_"), "")
    return ""


def _where(a: Args) -> Record:
    return {"device": int(a["device_id"]), "core": int(a["local_core_id"])}


def _side(prefix: str, buffer: Buffer, rng: regions.Range | None) -> Record:
    return {
        prefix: buffer.label,
        f"{prefix}_space": buffer.space,
        f"{prefix}_operand": buffer.operand,
        f"{prefix}_range": rng,
    }


def _block(a: Args) -> Record:
    return {"block": _ints(a.get("block_indices")), "grid_point": _ints(a.get("grid_loop_idx"))}


def _ints(values: Any) -> tuple[int, ...]:
    import numpy as np

    return tuple(int(x) for x in np.ravel(np.asarray(values))) if values is not None else ()


def _at(names: list[str], i: int) -> str:
    return str(names[i]) if i < len(names) else ""
