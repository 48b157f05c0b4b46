"""Messages for failures while a kernel runs in the interpreter: bad blocks, bad DMAs, stuck cores.

Each rule reads the root exception and the context the interpreter monitor attached to it (which
callback, which buffer id, which range, which grid point), names things the way the user wrote them
(`sandbox.harness.monitor.book`), and says what to change. None of them parses JAX's wording for
facts the context already holds; a few recognise the kind of failure by its opening words.
"""

from __future__ import annotations

import re
from typing import Any

from sandbox.harness.errors.facts import Message, Root, Scene
from sandbox.harness.jaxapi import interpret
from sandbox.harness.jaxapi.fixes import gathers, subcores
from sandbox.harness.monitor import pipelines as pipes
from sandbox.harness.monitor.book import KernelInfo, Named, Operand
from sandbox.harness.monitor.core import Finding, UnfinishedKernelError
from sandbox.harness.monitor.deadlock import Deadlock, DeadlockError, WaitState

_REVISITED = re.compile(
    r"of output (?P<output>\d+) in iteration \((?P<step>[^)]*)\)\. The block was previously visited in iterations \((?P<first>[^)]*)\)"
)


def runtime(root: Root, scene: Scene) -> Message | None:
    if isinstance(root.exception, DeadlockError):
        return deadlock(root.exception.deadlock, scene)
    if isinstance(root.exception, UnfinishedKernelError):
        return unfinished(root.exception.findings, scene)
    op = root.context.get("op", "")
    if root.type in ("IndexError", "ValueError") and root.message.startswith("Out-of-bounds"):
        if op in ("get", "store") and (root.context.get("input_name") or root.context.get("output_name")):
            return block_out_of_bounds(root, scene)
        return buffer_out_of_bounds(root, scene)
    if op == "_check_for_revisiting" and root.message.startswith("Revisited block"):
        return revisited(root, scene)
    if op == "semaphore_signal" and root.type == "IndexError":
        return signal_target(root, scene)
    if (
        op == "dma_start"
        and root.type == "IndexError"
        and _device_outside(root.context.get("dst_device_id"), scene)
    ):
        return remote_target(root, scene)
    return None


# -- stuck and unfinished kernels ---------------------------------------------------------------


def deadlock(found: Deadlock, scene: Scene) -> Message:
    """Every core waits and nothing can wake them. The marked line is the first wait we can place."""
    states = sorted(found.waits, key=lambda s: (s.wait.location is None, s.wait.device, s.wait.core))
    first = states[0]
    who = _who(first, found.cores, scene.devices)
    name = _semaphore_name(first.wait.sem_id, scene)
    if first.wait.sem_id == subcores.BARRIER_SEMAPHORE:  # the barrier's protocol says what its count means
        return Message("Deadlock", subcores.stuck(first.count, found.cores), first.wait.location)
    if first.wait.dma:
        text = (
            f"{who} would wait forever: it waits for a DMA on {name} to deliver {first.wait.value:,} bytes, "
            "but no copy that signals that semaphore is in flight"
        )
        hint = "Every .wait() needs its own .start() of a copy with the same semaphore and size"
    else:
        text = (
            f"{who} would wait forever: it waits for {name} to reach {first.wait.value}, but the "
            f"semaphore holds {first.count} and nothing still running can signal it"
        )
        hint = "Every wait needs a matching signal (same semaphore, same core, same count)"
    others = [_who(s, found.cores, scene.devices) for s in states[1:]]
    if others:
        text += f" ({', '.join(others)} wait{'s' if len(others) == 1 else ''} too)"
    if found.finished:
        n = len(found.finished)
        text += f" ({n} core{'s have' if n > 1 else ' has'} finished)"
    return Message("Deadlock", f"{text}. {hint}", first.wait.location)


def _who(state: WaitState, cores: int, devices: int) -> str:
    if cores <= 1:
        return "the kernel"
    if devices > 1:
        return f"device {state.wait.device}, core {state.wait.core}"
    return f"core {state.wait.core}"


def unfinished(findings: list[Finding], scene: Scene) -> Message:
    """The kernel returned with a DMA in flight or a semaphore not back at zero (marked: its start / last signal)."""
    dmas = [f for f in findings if f.kind == "pending_dma"]
    first = dmas[0] if dmas else findings[0]
    if first.kind == "pending_dma":
        text = (
            f"the kernel ended with a DMA in flight: the copy from {_buffer_name(first.src, scene)} to "
            f"{_buffer_name(first.dst, scene)} was started but never waited on, so it never completed "
            "(on a TPU the kernel could end before the data lands). Call .wait() on that copy before the "
            "kernel ends"
        )
        return Message("UnfinishedDMA", _more(text, len(dmas) - 1, "DMA"), first.location)
    name = _semaphore_name(first.sem_id, scene)
    named = scene.monitor.book.semaphore(first.sem_id) if scene.monitor else None
    is_dma = named is not None and named.operand is not None and "dma" in named.operand.dtype.lower()
    amount = f"{first.count:,} bytes" if is_dma else str(first.count)
    text = (
        f"{name} still holds {amount} when the kernel ends: it was signalled more than it was waited on "
        "(the last signal is marked). A kernel must leave every semaphore at zero: wait once for every "
        "signal, with the same count"
    )
    return Message("UnbalancedSemaphore", _more(text, len(findings) - 1, "semaphore"), first.location)


def notes(findings: list[Finding], scene: Scene) -> list[str]:
    """Sentences about a run that did not fail by themselves (`Monitor.take_notes`)."""
    overtaken = [f for f in findings if f.kind == "overtaken_dma"]
    if not overtaken:
        return []
    names = " and ".join(dict.fromkeys(_semaphore_name(f.sem_id, scene) for f in overtaken))
    lines = sorted({f.location.line for f in overtaken if f.location})
    where = f" (line {', '.join(map(str, lines))})" if lines else ""
    return [
        f"a DMA wait on {names}{where} returned for a later copy while an earlier one on the same "
        "semaphore was still in flight: a wait counts bytes, not copies, and the simulator (like a TPU) "
        "does not promise that two copies land in order. If outputs differ, wait for each copy before "
        "starting the next one on that semaphore (DMA execution mode 'eager' runs every copy at .start())"
    ]


def _more(text: str, others: int, what: str) -> str:
    return text + (f" ({others} more {what}{'s' if others > 1 else ''} like it)" if others > 0 else "")


# -- out-of-bounds blocks and buffers -------------------------------------------------------------


def block_out_of_bounds(root: Root, scene: Scene) -> Message:
    """A pallas_call BlockSpec's index map points outside its array (the interpreter's block copy)."""
    ctx = root.context
    reading = ctx.get("input_name") is not None
    name = str(ctx.get("input_name") if reading else ctx.get("output_name"))
    kernel = _kernel(ctx, scene)
    operand = kernel.operand_named(name) if kernel else None
    block = _ints(ctx.get("block_indices"))
    step = _ints(ctx.get("grid_loop_idx"))
    rng = to_range(ctx.get("transforms"))
    what = operand.describe() if operand else f"`{name}`"
    names = kernel.grid_names if kernel else tuple(f"axis {d}" for d in range(len(step)))
    text = (
        f"the index map of {what} gives block {_tuple(block)} at grid step {grid_step(names, step)}: "
        f"{outside(rng, operand.shape if operand else ())}. {INDEX_MAP_HINT}{_last_block(operand, name)}"
    )
    return Message("IndexError", text, operand.index_map if operand else None)


INDEX_MAP_HINT = "Index maps return block indices, not element offsets"


def buffer_out_of_bounds(root: Root, scene: Scene) -> Message:
    """A DMA, or a ref access in the kernel body, reaches outside a buffer."""
    ctx = root.context
    dma = ctx.get("dma")
    if dma is not None:
        reading = ctx.get("op") == "dma read"
        space_id = dma.src_memory_space if reading else dma.dst_memory_space
        buffer_id = dma.src_buffer_id if reading else dma.dst_buffer_id
        device = dma.src_device_id if reading else dma.dst_device_id
        transforms = dma.src_transforms if reading else dma.dst_transforms
    else:
        reading = ctx.get("op") == "get"
        space_id, buffer_id = ctx.get("memory_space"), ctx.get("buffer_id")
        device, transforms = ctx.get("device_id"), ctx.get("transforms")
    space = scene.monitor.space(space_id) if scene.monitor and space_id is not None else "?"
    named = (
        scene.monitor.book.buffer(space, int(buffer_id), int(device))
        if scene.monitor and buffer_id is not None
        else None
    )
    rng = to_range(transforms)
    shape = (
        named.operand.shape
        if named and named.operand and named.what == "array"
        else _shape_from(root.message)
    )
    placed = _pipeline_block(named, rng, shape, reading, scene) if dma is not None else None
    if placed is not None:
        return placed
    what = named.describe() if named else f"a {space.upper()} buffer"
    verb = "reads" if reading else "writes"
    if dma is not None and gathers.is_row_copy(getattr(dma, "source_info", None)):
        text = f"an indexed DMA {verb} {what} at {outside(rng, shape)}: an id in its ids ref is out of range"
    elif dma is not None:
        text = f"a DMA {verb} {what} at {outside(rng, shape)}. Check the slices given to the copy"
    else:
        text = f"this line {verb} {what} at {outside(rng, shape)}. Check the index, or pl.ds(start, size)"
    return Message("IndexError", text)


def _pipeline_block(
    named: Named | None, rng: tuple[Any, ...], shape: tuple[int, ...], reading: bool, scene: Scene
) -> Message | None:
    """An emit_pipeline BlockSpec whose index map asked for this block: name it, with its grid step."""
    if named is None or named.operand is None or scene.monitor is None or not rng:
        return None
    sizes = tuple(_size(s) for s in rng)
    block = tuple((s.start // _size(s)) if isinstance(s, slice) and _size(s) else 0 for s in rng)
    for call in scene.monitor.pipelines.find(named.operand.name, sizes):
        spec = next(s for s in call.specs if s.ref_name == named.operand.name and s.block_shape == sizes)
        step = pipes.step_of(call, spec, block)
        at = f" at grid step {grid_step(call.grid_names(), step)}" if step is not None else ""
        role = "in_specs" if spec.role == "input" else "out_specs"
        text = (
            f"the emit_pipeline index map ({role}[{spec.index}]) of {named.operand.describe()} gives block "
            f"{_tuple(block)}{at}: {outside(rng, shape)}. "
            f"{INDEX_MAP_HINT}{_last_block(named.operand, named.operand.name, sizes)}"
        )
        return Message("IndexError", text, spec.location or call.location)
    return None


def revisited(root: Root, scene: Scene) -> Message:
    match = _REVISITED.search(root.message)
    kernel = _kernel(root.context, scene)
    outputs = [o for o in kernel.operands if o.role == "output"] if kernel else []
    index = int(match["output"]) if match else 0
    operand = outputs[index] if index < len(outputs) else None
    names = kernel.grid_names if kernel else ()
    step = _ints(match["step"]) if match else ()
    first = _ints(match["first"]) if match else ()
    what = operand.describe() if operand else f"output {index + 1}"
    text = (
        f"{what}: the same output block is written again at grid step {grid_step(names, step)}, after the "
        f"grid moved on from it (first written at step {grid_step(names, first)}). pallas_call copies an "
        "output block back to HBM when its index changes, so all steps that write one block must be "
        'consecutive: put the reduction axis last in the grid and mark it "arbitrary" (or give the '
        "output's BlockSpec pipeline_mode=pl.Buffered(1, revisit=pl.RevisitMode.ANY), which reloads the "
        "block on each revisit)"
    )
    return Message("RuntimeError", text, operand.index_map if operand else None)


def signal_target(root: Root, scene: Scene) -> Message:
    ctx = root.context
    kernel = _kernel(ctx, scene)
    cores = kernel.cores if kernel else 1
    target = ctx.get("target_local_core_id")
    device = ctx.get("target_device_id")
    name = _semaphore_name(int(ctx.get("sem_id", -1)), scene)
    if target is not None and int(target) >= cores:
        text = (
            f"this line signals {name} on core {int(target)}, but the kernel runs on {cores} "
            f"core{'s' if cores > 1 else ''} (0 to {cores - 1}): core_index must be below the mesh's num_cores"
        )
    else:
        shown = int(device) if device is not None else "?"
        n = scene.devices
        text = (
            f"this line signals {name} on device {shown}, but this run simulates {n} "
            f"device{'s' if n > 1 else ''} (0 to {n - 1}): wrap the device index around, e.g. `(me + 1) % n`"
        )
    return Message("IndexError", text)


def remote_target(root: Root, scene: Scene) -> Message:
    device = int(root.context["dst_device_id"])
    n = scene.devices
    text = (
        f"this copy goes to device {device}, but this run simulates {n} device{'s' if n > 1 else ''} "
        f"(0 to {n - 1}): wrap the neighbour's index around the ring, e.g. `(me + 1) % n`"
    )
    return Message("IndexError", text)


def _device_outside(device: Any, scene: Scene) -> bool:
    return device is not None and not 0 <= int(device) < scene.devices


# -- naming and formatting -----------------------------------------------------------------------


def _kernel(ctx: dict[str, Any], scene: Scene) -> KernelInfo | None:
    if scene.monitor is None:
        return None
    device = ctx.get("device_id")
    found = scene.monitor.book.kernel(int(device)) if device is not None else None
    return found or scene.monitor.book.last_kernel


def _semaphore_name(sem_id: int, scene: Scene) -> str:
    named = scene.monitor.book.semaphore(sem_id) if scene.monitor else None
    return named.describe() if named else "a semaphore"


def _buffer_name(key: tuple[str, int, int] | None, scene: Scene) -> str:
    if key is None or scene.monitor is None:
        return "a buffer"
    named = scene.monitor.book.buffer(*key)
    return named.describe() if named else f"a {key[0].upper()} buffer"


def to_range(transforms: Any) -> tuple[Any, ...]:
    """The interpreter's transforms (NDIndexers) → one slice or int per dimension ((), if unknown)."""
    if transforms is None:
        return ()
    try:
        return tuple(interpret.to_range(transforms))
    except Exception:
        return ()


def outside(rng: tuple[Any, ...], shape: tuple[int, ...]) -> str:
    """The dimensions a region leaves, and by how much: "rows 256:384, past the array's 256 rows"."""
    if not rng:
        return "a region outside the array"
    rank = len(rng)
    parts, limits = [], []
    for dim, s in enumerate(rng):
        if not _outside(s, shape, dim):
            continue
        label = _axis_label(dim, rank)
        span = f"{s.start}:{s.stop}" if isinstance(s, slice) else str(s)
        if label.startswith("axis"):
            parts.append(f"{span} along {label}")
            limits.append(f"{shape[dim]} along {label}")
        else:
            parts.append(f"{label} {span}" if isinstance(s, slice) else f"{_singular(label)} {span}")
            limits.append(f"{shape[dim]} {label}")
    if not parts:
        return "a region outside the array"
    return f"{' and '.join(parts)}, past the array's {' and '.join(limits)}"


def _axis_label(dim: int, rank: int) -> str:
    if rank >= 2 and dim == rank - 2:
        return "rows"
    if dim == rank - 1:
        return "columns" if rank >= 2 else "elements"
    return f"axis {dim}"


def _singular(label: str) -> str:
    return {"rows": "row", "columns": "column", "elements": "element"}.get(label, label)


def _outside(s: Any, shape: tuple[int, ...], dim: int) -> bool:
    if dim >= len(shape):
        return False
    stop = s.stop if isinstance(s, slice) else int(s) + 1
    start = s.start if isinstance(s, slice) else int(s)
    return start < 0 or stop > shape[dim]


def _last_block(operand: Operand | None, name: str, sizes: tuple[int, ...] | None = None) -> str:
    block = sizes or (operand.block_shape if operand else None)
    if operand is None or not block or len(block) != len(operand.shape):
        return ""
    last = tuple(max(-(-n // b) - 1, 0) for n, b in zip(operand.shape, block, strict=True))
    return f"; the last block of `{name}` is {_tuple(last)}"


def grid_step(names: tuple[str, ...], point: tuple[int, ...] | None) -> str:
    if point is None:
        return "?"
    if len(names) == len(point):
        return "(" + ", ".join(f"{n}={p}" for n, p in zip(names, point, strict=True)) + ")"
    return _tuple(point)


def _tuple(values: tuple[int, ...]) -> str:
    return "(" + ", ".join(str(v) for v in values) + ("," if len(values) == 1 else "") + ")"


def _ints(values: Any) -> tuple[int, ...]:
    """Ints from an interpreter array, or from "0, 0, 1" as JAX's messages print a grid point."""
    if values is None:
        return ()
    if isinstance(values, str):
        return tuple(int(v) for v in values.split(",") if v.strip())
    import numpy as np

    return tuple(int(v) for v in np.ravel(np.asarray(values)))


def _size(s: Any) -> int:
    return (s.stop - s.start) // (s.step or 1) if isinstance(s, slice) else 1


_SHAPE = re.compile(r"has shape \((?P<dims>[\d, ]*)\)")


def _shape_from(message: str) -> tuple[int, ...]:
    match = _SHAPE.search(message)
    if match is None:
        return ()
    return tuple(int(d) for d in match["dims"].replace(" ", "").split(",") if d)
