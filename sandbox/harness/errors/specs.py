"""Messages for BlockSpec mistakes JAX finds while building a kernel, and for the TPU's tiling rule.

JAX names an operand by its place in the call (`args[0]`) and a block by `Blocked(block_size=128)`;
these rules name it as the kernel does (`x_ref`, input 1, f32[256, 128]), reading the kernel body and
the origins JAX held in its frames while it converted the BlockSpecs, and mark the index map's line.
"""

from __future__ import annotations

import inspect
import re

from sandbox.harness.errors import locate
from sandbox.harness.errors.facts import Message, Root, Scene
from sandbox.harness.monitor.book import Operand
from sandbox.harness.monitor.source import Location, location_of_function

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


def block_rank(root: Root, exc: BaseException, scene: Scene) -> Message | None:
    match = _BLOCK_RANK.search(root.message)
    if match is None:
        return None
    block = _block_dims(match["block"])
    array = dims(match["array"])
    text = (
        f"the BlockSpec for {_spec_operand(root, match['origin'])} has a {len(block)}-dimensional block "
        f"{_shape(block)} for an array of shape {_shape(array)}: give one block size per array dimension "
        "(None or pl.Squeezed() drops a dimension from the kernel's ref)"
    )
    return Message("ValueError", text, _block_spec_location(root, scene))


def index_map_returns(root: Root, exc: BaseException, scene: Scene) -> Message | None:
    match = _INDEX_MAP_RETURNS.search(root.message)
    if match is None:
        return None
    got, want = int(match["got"]), int(match["want"])
    text = (
        f"the index map for {_spec_operand(root, match['origin'])} returns {got} block "
        f"ind{'ex' if got == 1 else 'ices'}, but its block has {want} dimensions: return one block "
        f"index per block dimension, e.g. `lambda i: (i, {', '.join(['0'] * (want - 1))})`"
    )
    location = Location(match["file"], int(match["line"])) if match["file"] in scene.files else None
    return Message("ValueError", text, location or _block_spec_location(root, scene))


def arity(root: Root, exc: BaseException, scene: Scene) -> Message | None:
    match = _TAKES.search(root.message) if root.type == "TypeError" else None
    if match is None:
        return None
    want, got = int(match["want"]), int(match["got"])
    spec = locate.frame_local(root.exception, "block_spec")
    if spec is not None and ("<lambda>" in match["fn"] or _is_index_map(spec, match["fn"])):
        grid = locate.frame_local(root.exception, "grid") or ()
        origin = locate.frame_local(root.exception, "origin")
        whose = f" for {_spec_operand(root, origin)}" if origin else ""
        text = (
            f"the index map{whose} takes {want} argument{'s' if want != 1 else ''} but is called with {got}: it gets "
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


def tiling(root: Root, exc: BaseException, scene: Scene) -> Message | None:
    match = _TILING.search(root.message)
    if match is None:
        return None
    block, array = _block_dims(match["block"]), dims(match["array"])
    operand = _operand(match["origin"], match["kernel"], scene)
    what = operand.describe() if operand else _origin(match["origin"])
    text = (
        f"the TPU compiler needs the last two block dimensions to be multiples of 8 and 128, or the "
        f"whole array dimension: the BlockSpec for {what} has block {_shape(block)} on an array of "
        f"{_shape(array)}. Choose block sizes like (8k, 128m), or take the whole dimension"
    )
    return Message("ValueError", text, operand.index_map if operand else None)


def _spec_operand(root: Root, origin: str) -> str:
    """`x_ref` (input 1, f32[256, 128]) for `args[0]`, from what JAX held while converting BlockSpecs."""
    exc = root.exception
    kernel = locate.frame_local(exc, "kernel")
    in_origins = tuple(locate.frame_local(exc, "in_origins") or ())
    out_origins = tuple(locate.frame_local(exc, "out_origins") or ())
    prefetch = int(locate.frame_local(exc, "num_scalar_prefetch") or 0)
    aval = locate.frame_local(exc, "array_aval")
    try:
        params = list(inspect.signature(kernel).parameters)
    except (TypeError, ValueError):
        params = []
    if origin in in_origins:
        position, role, index = in_origins.index(origin), "input", in_origins.index(origin) - prefetch
    elif origin in out_origins:
        position, role = len(in_origins) + out_origins.index(origin), "output"
        index = out_origins.index(origin)
    else:
        return _origin(origin)
    if position >= len(params) or aval is None:
        return _origin(origin)
    shape = tuple(int(n) for n in getattr(aval, "shape", ()))
    return Operand(params[position], role, index, shape, str(aval.dtype), "vmem").describe()


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


def dims(text: str) -> tuple[int, ...]:
    return tuple(int(d) for d in text.replace(" ", "").split(",") if d)


def _shape(dims: tuple[int | None, ...]) -> str:
    return (
        "(" + ", ".join("None" if d is None else str(d) for d in dims) + ("," if len(dims) == 1 else "") + ")"
    )
