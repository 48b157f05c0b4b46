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

from sandbox.harness.errors import locate
from sandbox.harness.errors.facts import Message, Root, Scene, user_frames
from sandbox.harness.monitor.book import Operand
from sandbox.harness.monitor.source import Location, location_of_function

Rule = Callable[[Root, BaseException, Scene], "Message | None"]


def message(root: Root, exc: BaseException, scene: Scene) -> Message | None:
    for rule in RULES:
        found = rule(root, exc, scene)
        if found is not None:
            return found
    return None


# -- BlockSpecs and index maps --------------------------------------------------------------------

_BLOCK_RANK = re.compile(
    r"Block shape for (?P<origin>\S+) \(= \((?P<block>.*)\)\) must have the same number of dimensions "
    r"as the array shape \((?P<array>[^)]*)\)"
)
_INDEX_MAP_RETURNS = re.compile(
    r"Index map function .+? at (?P<file>[^\s:]+):(?P<line>\d+) for (?P<origin>\S+) must return "
    r"(?P<want>\d+) values.*Currently returning (?P<got>\d+) values",
    re.S,
)
_TAKES = re.compile(
    r"(?P<fn>[\w.<>]+)\(\) takes (?P<want>\d+) positional arguments? but (?P<got>\d+) (?:were|was) given"
)
_TILING = re.compile(
    r"last two dimensions of your block shape are divisible by 8 and 128.*?Block spec for (?P<origin>\S+) in "
    r"pallas_call (?P<kernel>\S+) at .*? has block shape \((?P<block>.*?)\), array shape \((?P<array>[^)]*)\)",
    re.S,
)
_BLOCKED = re.compile(r"Blocked\(block_size=(\d+)\)|Squeezed\(\)|None")


def _block_rank(root: Root, exc: BaseException, scene: Scene) -> Message | None:
    match = _BLOCK_RANK.search(root.message)
    if match is None:
        return None
    block = _block_dims(match["block"])
    array = _dims(match["array"])
    text = (
        f"the BlockSpec for {_origin(match['origin'])} has a {len(block)}-dimensional block {_shape(block)} "
        f"for an array of shape {_shape(array)}: give one block size per array dimension "
        "(None or pl.Squeezed() drops a dimension from the kernel's ref)"
    )
    return Message("ValueError", text, _block_spec_location(root, scene))


def _index_map_returns(root: Root, exc: BaseException, scene: Scene) -> Message | None:
    match = _INDEX_MAP_RETURNS.search(root.message)
    if match is None:
        return None
    got, want = int(match["got"]), int(match["want"])
    text = (
        f"the index map for {_origin(match['origin'])} returns {got} block "
        f"ind{'ex' if got == 1 else 'ices'}, but its block has {want} dimensions: return one block "
        f"index per block dimension, e.g. `lambda i: (i, {', '.join(['0'] * (want - 1))})`"
    )
    location = Location(match["file"], int(match["line"])) if match["file"] in scene.files else None
    return Message("ValueError", text, location or _block_spec_location(root, scene))


def _arity(root: Root, exc: BaseException, scene: Scene) -> Message | None:
    match = _TAKES.search(root.message) if root.type == "TypeError" else None
    if match is None:
        return None
    want, got = int(match["want"]), int(match["got"])
    spec = locate.frame_local(root.exception, "block_spec")
    if spec is not None and ("<lambda>" in match["fn"] or _is_index_map(spec, match["fn"])):
        grid = locate.frame_local(root.exception, "grid") or ()
        text = (
            f"the index map takes {want} argument{'s' if want != 1 else ''} but is called with {got}: it gets "
            f"one index per grid axis (this grid has {len(grid)}), followed by any scalar-prefetch refs"
        )
        return Message("TypeError", text, location_of_function(getattr(spec, "index_map", None), scene.files))
    body = locate.frame_local(root.exception, "kernel")
    name = match["fn"].rsplit(".", 1)[-1]
    if body is not None and getattr(getattr(body, "func", body), "__name__", None) == name:
        text = (
            f"the kernel body `{name}` takes {want} ref{'s' if want != 1 else ''}, but pallas_call passes {got}: "
            "one per scalar-prefetch operand, input, output and scratch buffer, in that order "
            "(each scratch_shapes entry adds a ref at the end)"
        )
        return Message("TypeError", text, location_of_function(getattr(body, "func", body), scene.files))
    where = locate.function_named(root.exception, name, scene.files)
    if where is None:
        return None
    return Message(
        "TypeError", f"`{name}` (line {where.line}) takes {want} argument(s) but is called with {got}", where
    )


def _is_index_map(spec: object, fn: str) -> bool:
    index_map = getattr(spec, "index_map", None)
    return getattr(index_map, "__name__", None) == fn.rsplit(".", 1)[-1]


def _tiling(root: Root, exc: BaseException, scene: Scene) -> Message | None:
    match = _TILING.search(root.message)
    if match is None:
        return None
    block, array = _block_dims(match["block"]), _dims(match["array"])
    operand = _operand(match["origin"], match["kernel"], scene)
    what = operand.describe() if operand else _origin(match["origin"])
    text = (
        f"the TPU compiler needs the last two block dimensions to be multiples of 8 and 128, or the "
        f"whole array dimension: the BlockSpec for {what} has block {_shape(block)} on an array of "
        f"{_shape(array)}. Choose block sizes like (8k, 128m), or take the whole dimension"
    )
    return Message("ValueError", text, operand.index_map if operand else None)


def _block_spec_location(root: Root, scene: Scene) -> Location | None:
    spec = locate.frame_local(root.exception, "block_spec")
    return location_of_function(getattr(spec, "index_map", None), scene.files)


def _operand(origin: str, kernel: str, scene: Scene) -> Operand | None:
    """`args[1]` of kernel `double_kernel`, from the operands of its simulated run."""
    book_kernel = scene.monitor.book.last_kernel if scene.monitor else None
    if book_kernel is None or book_kernel.name != kernel.rsplit(".", 1)[-1]:
        return None
    match = re.fullmatch(r"args\[(\d+)\]", origin)
    blocked = [o for o in book_kernel.operands if o.role in ("input", "input and output", "output")]
    if match:
        inputs = [o for o in blocked if o.role != "output"]
        index = int(match[1])
        return inputs[index] if index < len(inputs) else None
    outputs = [o for o in blocked if o.role == "output"]
    found = re.search(r"(\d+)", origin)
    index = int(found[1]) if found else 0
    return outputs[index] if index < len(outputs) else None


def _origin(origin: str) -> str:
    match = re.fullmatch(r"args\[(\d+)\]", origin)
    if match:
        return f"input {int(match[1]) + 1}"
    if origin.startswith("out"):
        found = re.search(r"(\d+)", origin)
        return f"output {int(found[1]) + 1}" if found else "the output"
    return origin


def _block_dims(text: str) -> tuple[int | None, ...]:
    return tuple(int(m[1]) if m[1] else None for m in _BLOCKED.finditer(text))


def _dims(text: str) -> tuple[int, ...]:
    return tuple(int(d) for d in text.replace(" ", "").split(",") if d)


def _shape(dims: tuple[int | None, ...]) -> str:
    return (
        "(" + ", ".join("None" if d is None else str(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"
    )


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
    text = (
        f"this line stores {match['value']} values into a {match['ref']} ref: cast the value first, "
        "e.g. `o_ref[...] = value.astype(o_ref.dtype)`"
    )
    return Message("TypeError", text)


def _swap_shape(root: Root, exc: BaseException, scene: Scene) -> Message | None:
    match = _SWAP_SHAPE.search(root.message)
    if match is None:
        return None
    text = (
        f"this line stores a value of shape ({match['value']}) into a ref region of shape "
        f"({match['want']}): a store needs a value of exactly that shape (stores do not broadcast)"
    )
    return Message("ValueError", text)


def _hbm_direct(root: Root, exc: BaseException, scene: Scene) -> Message | None:
    match = _HBM_DIRECT.search(root.message)
    if match is None:
        return None
    verb = "writes" if match["prim"].startswith(("swap", "store")) else "reads"
    text = (
        f"this line {verb} a ref that lives in HBM (pl.kernel's operands and pl.ANY / pltpu.HBM refs "
        "do), which a kernel cannot index directly: copy the part you need into VMEM with "
        "`pltpu.sync_copy(hbm_ref, vmem_ref)` (or `pltpu.async_copy` and `.wait()`), or let "
        "emit_pipeline or a BlockSpec bring blocks in"
    )
    return Message("ValueError", text)


def _program_id(root: Root, exc: BaseException, scene: Scene) -> Message | None:
    match = _PROGRAM_ID.search(root.message)
    if match is None:
        return None
    axes = len(_dims(match["grid"]))
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
        need = math.prod(_dims(match["shape"]))
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
    for alias, full in MODULE_ALIASES:
        if full != module and hasattr(_module(full), name):
            return Message(
                "AttributeError", f"`{short}` ({module}) has no `{name}`; `{alias}.{name}` ({full}) does"
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

LIMITATIONS = (
    ("MLIR translation rule for primitive 'barrier' not found for platform cpu", "plsc.subcore_barrier()"),
    ("Triggering __jax_array__() during abstractification", "an indexed (gather or scatter) DMA"),
    (
        "Unsupported memory space: smem",
        "a ref in SMEM made outside the kernel (jax.new_ref(..., memory_space=SMEM))",
    ),
    (
        "No state discharge rule implemented for primitive: io_callback",
        "allocating a ref inside the kernel body (jax.empty_ref); use scratch_types or pl.run_scoped",
    ),
    ("Lowering multiple mesh/function pairs is not currently supported", "a pl.kernel over several meshes"),
    ("External meshes are not currently supported in fallback lowering", "a kernel on an external mesh"),
    ("must be int32 or float32", "plsc.load_gather"),
    ("Non-decrementing wait is not supported", "a semaphore wait that does not decrement"),
    (
        "'ReshapeTransform' object has no attribute 'indices'",
        "reading or writing a reshaped ref (`ref.reshape(...)`)",
    ),
)


def _limitation(root: Root, exc: BaseException, scene: Scene) -> Message | None:
    what = next((w for pattern, w in LIMITATIONS if pattern in root.message), None)
    if what is None:
        return None
    version = f" {scene.jax_version}" if scene.jax_version else ""
    text = (
        f"{what} is not supported by TPU interpret mode in JAX{version}: a limitation of the simulator, not "
        f"a mistake in your kernel (JAX says: {root.message.splitlines()[0][:200]}). The TPU lowering check "
        "tells whether it compiles for a real TPU"
    )
    return Message(root.type, text, limitation=True)


def _syntax(root: Root, exc: BaseException, scene: Scene) -> Message | None:
    if not isinstance(exc, SyntaxError):
        return None
    return Message(
        type(exc).__name__, f"this line is not valid Python ({exc.msg}), so the file could not be run"
    )


RULES: tuple[Rule, ...] = (
    _syntax,
    _limitation,
    _block_rank,
    _index_map_returns,
    _arity,
    _tiling,
    _swap_dtype,
    _swap_shape,
    _hbm_direct,
    _program_id,
    _parallel_prefix,
    _mesh_devices,
    _chip_mismatch,
    _no_attribute,
)
