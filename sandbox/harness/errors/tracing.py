"""Messages for what JAX raises while it builds a kernel, and for what interpret mode cannot do.

These errors come with a Python traceback through the user's code, so the line is usually right;
what they lack is the user's vocabulary (`args[0]`, `swap`, `Blocked(block_size=128)`) and the next
step. Each rule recognises one JAX message of the pinned version by its wording (a table test over
the broken-kernel corpus fails when the wording changes) and rewrites it.
"""

from __future__ import annotations

import difflib
import importlib
import math
import re
from collections.abc import Callable

from sandbox.harness import compat
from sandbox.harness.errors import locate, specs
from sandbox.harness.errors.facts import Message, Root, Scene, user_frames
from sandbox.harness.jaxapi.fixes import Unsimulated
from sandbox.harness.monitor.source import Location

Rule = Callable[[Root, BaseException, Scene], "Message | None"]


def message(root: Root, exc: BaseException, scene: Scene) -> Message | None:
    for rule in RULES:
        found = rule(root, exc, scene)
        if found is not None:
            return found
    return None


# -- the kernel body ----------------------------------------------------------------------------------

_SWAP_DTYPE = re.compile(r"Invalid dtype for `swap`\. Ref dtype: (?P<ref>\w+)\. Value dtype: (?P<value>\w+)")
_SWAP_SHAPE = re.compile(
    r"Invalid shape for `swap`\. Ref shape: \((?P<ref>[^)]*)\)\. Expected shape: \((?P<want>[^)]*)\)\. Value shape: \((?P<value>[^)]*)\)"
)
_HBM_DIRECT = re.compile(
    r"(?P<prim>\w+): Buffers with a memory space of HBM or ANY cannot be referenced directly"
)
_PROGRAM_ID = re.compile(r"Axis (?P<axis>\d+) is out of bounds for grid \((?P<grid>[^)]*)\)")


def _swap_dtype(root: Root, exc: BaseException, scene: Scene) -> Message | None:
    match = _SWAP_DTYPE.search(root.message)
    if match is None:
        return None
    ref = _indexed(root, exc, scene, store=True) or "o_ref"
    text = (
        f"this line stores {match['value']} values into `{ref}`, a {match['ref']} ref: cast the value first, "
        f"e.g. `{ref}[...] = value.astype({ref}.dtype)`"
    )
    return Message("TypeError", text)


def _swap_shape(root: Root, exc: BaseException, scene: Scene) -> Message | None:
    match = _SWAP_SHAPE.search(root.message)
    if match is None:
        return None
    ref = _indexed(root, exc, scene, store=True)
    into = f"a region of `{ref}`" if ref else "a ref region"
    text = (
        f"this line stores a value of shape ({match['value']}) into {into} of shape ({match['want']}): "
        "a store needs a value of exactly that shape (stores do not broadcast)"
    )
    return Message("ValueError", text)


def _hbm_direct(root: Root, exc: BaseException, scene: Scene) -> Message | None:
    match = _HBM_DIRECT.search(root.message)
    if match is None:
        return None
    writes = match["prim"].startswith(("swap", "store"))
    ref = _indexed(root, exc, scene, store=writes)
    what = f"`{ref}`, a ref that lives in HBM" if ref else "a ref that lives in HBM"
    text = (
        f"this line {'writes' if writes else 'reads'} {what} (pl.kernel's operands and pl.ANY / pltpu.HBM "
        "refs do), which a kernel cannot index directly: copy the part you need into VMEM with "
        "`pltpu.sync_copy(hbm_ref, vmem_ref)` (or `pltpu.async_copy` and `.wait()`), or let "
        "emit_pipeline or a BlockSpec bring blocks in"
    )
    return Message("ValueError", text)


def _indexed(root: Root, exc: BaseException, scene: Scene, store: bool) -> str | None:
    """The ref indexed on the user's line that raised (parsed from the source)."""
    frames = user_frames(exc, root, scene.files)
    return locate.subscripted(frames[0].file, frames[0].line, store) if frames else None


def _program_id(root: Root, exc: BaseException, scene: Scene) -> Message | None:
    match = _PROGRAM_ID.search(root.message)
    if match is None:
        return None
    axes = len(specs.dims(match["grid"]))
    text = (
        f"pl.program_id({match['axis']}) asks for grid axis {match['axis']}, but the grid "
        f"({match['grid']}) has {axes} ax{'is' if axes == 1 else 'es'}: axes are numbered from 0"
    )
    return Message("ValueError", text)


def _parallel_prefix(root: Root, exc: BaseException, scene: Scene) -> Message | None:
    if "parallel semantics must form a prefix of the grid" not in root.message:
        return None
    params = locate.frame_local(root.exception, "mosaic_params")
    semantics = tuple(str(getattr(s, "value", s)) for s in getattr(params, "dimension_semantics", None) or ())
    shown = f" {semantics}" if semantics else ""
    text = (
        f'dimension_semantics{shown} puts a "parallel" axis after an "arbitrary" one: parallel axes '
        'must lead the grid. Reorder the grid (and the index maps), or mark the later axes "arbitrary"'
    )
    return Message("ValueError", text, _keyword_location(root, exc, scene, "dimension_semantics"))


def _keyword_location(root: Root, exc: BaseException, scene: Scene, keyword: str) -> Location | None:
    for frame in user_frames(exc, root, scene.files):
        line = locate.keyword_line(frame.file, frame.line, keyword)
        if line is not None:
            return Location(frame.file, line, frame.function)
    return None


# -- devices, meshes and names ---------------------------------------------------------------------

_MESH_DEVICES = re.compile(
    r"Number of devices (?P<have>\d+) must be >= the product of mesh_shape \((?P<shape>[^)]*)\)"
)
_NO_ATTRIBUTE = re.compile(r"module '(?P<module>[\w.]+)' has no attribute '(?P<name>\w+)'")
MODULE_ALIASES = (
    ("pl", "jax.experimental.pallas"),
    ("pltpu", "jax.experimental.pallas.tpu"),
    ("plsc", "jax.experimental.pallas.tpu_sc"),
    ("jnp", "jax.numpy"),
    ("lax", "jax.lax"),
    ("jax", "jax"),
)


def _mesh_devices(root: Root, exc: BaseException, scene: Scene) -> Message | None:
    match = _MESH_DEVICES.search(root.message)
    if match is not None:
        need = math.prod(specs.dims(match["shape"]))
        text = (
            f"the mesh needs {need} devices, but this run simulates {match['have']}: put `DEVICES = {need}` "
            "at the top of the file to simulate that many"
        )
        return Message("ValueError", text)
    if "context mesh" in root.message and "cannot be empty" in root.message:
        text = (
            "jax.shard_map needs a device mesh, and this run simulates one device: put `DEVICES = 4` "
            "(or the count you need) at the top of the file; the playground then sets a mesh with one "
            'axis, "x", over all of them'
        )
        return Message("ValueError", text)
    return None


def _chip_mismatch(root: Root, exc: BaseException, scene: Scene) -> Message | None:
    """The monitor refused a mesh bigger than the chip: mark the `mesh=` argument."""
    if root.type != "ChipMismatchError":
        return None
    return Message("ValueError", root.message, _keyword_location(root, exc, scene, "mesh"))


def _no_attribute(root: Root, exc: BaseException, scene: Scene) -> Message | None:
    match = _NO_ATTRIBUTE.search(root.message) if root.type == "AttributeError" else None
    if match is None:
        return None
    module, name = match["module"], match["name"]
    short = next((alias for alias, full in MODULE_ALIASES if full == module), module)
    # A remedy in this JAX first (the name moved to another module), then the JAX that has it.
    for alias, full in MODULE_ALIASES:
        if full != module and hasattr(_module(full), name):
            return Message(
                "AttributeError", f"`{short}` ({module}) has no `{name}`; `{alias}.{name}` ({full}) does"
            )
    where = scene.elsewhere.get(f"{compat.INDEXED_ALIAS.get(module, module)}.{name}")
    if where is not None:
        return Message(
            "AttributeError",
            f"`{short}.{name}` is not in jax {scene.jax_version}; it is in {where}: choose that JAX version "
            "to run it as written",
        )
    close = difflib.get_close_matches(name, dir(_module(module)), n=1)
    hint = f"; did you mean `{short}.{close[0]}`?" if close else ""
    return Message("AttributeError", f"`{short}` ({module}) has no `{name}`{hint}")


def _module(name: str) -> object:
    try:
        return importlib.import_module(name)
    except ImportError:
        return object()


# -- limitations of interpret mode -------------------------------------------------------------------

LIMITATIONS: tuple[tuple[str, ...], ...] = (
    # On runtimes without the harness's fixes (a ref given to a select is told apart first).
    ("Triggering __jax_array__() during abstractification", "an indexed (gather or scatter) DMA"),
    ("MLIR translation rule for primitive 'barrier' not found for platform cpu", "plsc.subcore_barrier()"),
    (
        "Unsupported memory space: smem",
        "a ref in SMEM made outside the kernel (jax.new_ref(..., memory_space=SMEM))",
    ),
    (
        "No state discharge rule implemented for primitive: io_callback",
        "allocating a ref inside the kernel body (jax.empty_ref)",
        "; give it as scratch_types, or allocate it with pl.run_scoped",
    ),
    ("Lowering multiple mesh/function pairs is not currently supported", "a pl.kernel over several meshes"),
    ("External meshes are not currently supported in fallback lowering", "a kernel on an external mesh"),
    (
        "an accumulating DMA (add=True) is simulated only as an indexed copy",
        "an accumulating DMA (`add=True`) without ids",
    ),
    (
        "plsc.subcore_barrier() or plsc.fetch_and_add on a mesh of several SparseCores",
        "plsc.subcore_barrier() or plsc.fetch_and_add on a mesh of several SparseCores",
    ),
    ("from an array of Pallas keys at once", "sampling or folding an array of Pallas PRNG keys at once"),
    ("a ref view by ", "this view of a ref"),
    (
        "a bitcast of a 1-D ref that changes the element width",
        "a bitcast of a 1-D ref that changes the element width",
    ),
    # Keys and semaphores as pallas_call operands: the interpreter fills and moves every operand as a
    # plain array (NaN poison, host callbacks), which key and semaphore dtypes are not.
    ("nan + key<", "a PRNG key as a kernel operand or output"),
    ("Cannot interpret 'key<", "a PRNG key as a kernel operand or output"),
    ("nan + dma_sem", "a semaphore as a kernel output (an async copy's future)"),
    ("nan + sem", "a semaphore as a kernel output"),
    ("'AbstractSemaphoreTyRules' has no attribute 'full'", "a semaphore as a kernel output"),
    ("an indexed DMA is simulated only with", "this form of indexed DMA"),
    ("Non-decrementing wait is not supported", "a semaphore wait that does not decrement"),
    ("'BitcastTransform' object has no attribute 'indices'", "a copy of a bitcast ref (`ref.bitcast(...)`)"),
    (
        "'ReshapeTransform' object has no attribute 'indices'",
        "reading or writing a reshaped ref (`ref.reshape(...)`)",
    ),
    # jax 0.11 and older: a `device_id` naming an axis the device mesh lacks (a TensorCoreMesh's core).
    ("': JitTracer(int32[])}", "a copy or signal to another core of the chip (`device_id={'core': ...}`)"),
)


def _limitation(root: Root, exc: BaseException, scene: Scene) -> Message | None:
    found = next((entry for entry in LIMITATIONS if entry[0] in root.message), None)
    if found is None:
        return None
    what, hint = found[1], (found[2] if len(found) > 2 else "")
    version = f" {scene.jax_version}" if scene.jax_version else ""
    # The harness's own refusals (`sandbox.harness.jaxapi.fixes`) are the simulator's words, not JAX's.
    ours = isinstance(root.exception or exc, Unsimulated)
    text = (
        f"{what} is not supported by TPU interpret mode in JAX{version}: a limitation of the simulator, not "
        f"a mistake in your kernel ({'the simulator says' if ours else 'JAX says'}: "
        f"{root.message.splitlines()[0][:200]}){hint}"
    )
    return Message("NotImplementedError" if ours else root.type, text, limitation=True)


def _selected_ref(root: Root, exc: BaseException, scene: Scene) -> Message | None:
    """`pl.select_ref(...)` given to something other than a DMA: JAX cannot build that for any target."""
    if "multi-ref TransformedRef" not in root.message and "Triggering __jax_array__()" not in root.message:
        return None
    called = _called_with_selected_ref(exc)
    if called is None:
        return None
    version = f" {scene.jax_version}" if scene.jax_version else ""
    text = (
        f"a ref picked by `pl.select_ref(...)` is usable only as a DMA's source, destination or semaphore; JAX"
        f"{version} cannot build {_USES.get(called, f'`{called}`')} on one for any target, a TPU included (JAX says: "
        f"{root.message.splitlines()[0].split('. ')[0][:160]}). Pick with `lax.switch(i, [...])` over the refs, or index one "
        "array of refs (`sems.at[i]`)"
    )
    return Message(root.type, text)


_USES = {
    "ref_get": "a read (`ref[...]`)",
    "ref_set": "a write (`ref[...] = x`)",
    "ref_swap": "a write (`ref[...] = x`)",
    "semaphore_signal": "`pl.semaphore_signal`",
    "semaphore_wait": "`pl.semaphore_wait`",
    "semaphore_read": "`pl.semaphore_read`",
}


def _called_with_selected_ref(exc: BaseException) -> str | None:
    """The name of the innermost JAX function whose arguments hold a ref made by `pl.select_ref`."""
    tb, called = exc.__traceback__, None
    while tb is not None:
        frame = tb.tb_frame
        if any(getattr(v, "multiref", False) is True for v in frame.f_locals.values()):
            called = frame.f_code.co_name
        tb = tb.tb_next
    return called


_INDEXED = ("load_gather", "store_scatter", "addupdate_scatter")


def _indexed_dtype(root: Root, exc: BaseException, scene: Scene) -> Message | None:
    """A SparseCore indexed load or store on a ref of another dtype than int32 / float32 (a TPU rule)."""
    if "must be int32 or float32" not in root.message:
        return None
    tb, called = exc.__traceback__, None
    while tb is not None:
        name = tb.tb_frame.f_code.co_name
        called = name if name in _INDEXED else called
        tb = tb.tb_next
    what = f"plsc.{called}" if called else "a SparseCore indexed load or store"
    text = (
        f"{what} takes int32 or float32 refs only ({root.message.splitlines()[0]}), on a TPU as in the "
        "simulator (JAX checks it when it builds the kernel). Keep that buffer in float32 (or int32) and "
        "cast when you load it"
    )
    return Message(root.type, text)


def _syntax(root: Root, exc: BaseException, scene: Scene) -> Message | None:
    if not isinstance(exc, SyntaxError):
        return None
    return Message(
        type(exc).__name__, f"this line is not valid Python ({exc.msg}), so the file could not be run"
    )


RULES: tuple[Rule, ...] = (
    _syntax,
    _selected_ref,
    _limitation,
    _indexed_dtype,
    specs.block_rank,
    specs.index_map_returns,
    specs.arity,
    specs.tiling,
    _swap_dtype,
    _swap_shape,
    _hbm_direct,
    _program_id,
    _parallel_prefix,
    _mesh_devices,
    _chip_mismatch,
    _no_attribute,
)
