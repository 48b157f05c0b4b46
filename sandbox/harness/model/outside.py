"""XLA's work around the kernels: the transposes, casts, reductions and dots a traced function runs
outside its Pallas kernels, costed at the chip's rooflines (pure jaxpr walking, no compile).

A TPU's device time for a function is every op it runs, not only its kernels: tokamax's splash
attention, for one, transposes q, k and v to heads-major before its kernel and the output back
after it, and the published time holds those copies. XLA fuses neighbouring element-wise and
layout ops into one loop that reads its inputs from HBM once and writes its outputs once, so the
model groups the ops between kernels the same way: every connected run of such ops is one fusion,
costed as the bytes that enter it (function inputs, kernel outputs) plus the bytes that leave it
(read by a kernel or returned), at the device's HBM bandwidth. A dot or convolution outside a
kernel is a fusion of its own, at the larger of its MXU time and its bytes, with its sole
element-wise consumer (a cast, a bias) fused into its output, as XLA does (measured on a v5e: the
catalog's plain-jnp references, f32-accumulated dots cast to bf16, within -5.3 % ... -2.1 % of their
device times: tests/model/test_xla_baseline.py). Slices and gathers read
only what they take; an in-place update writes only its update. A run of pure reshapes is free
(XLA makes it a bitcast). Calls and loops that hold no kernel are one opaque op each (what they
read and write, once); a collective outside a kernel (psum, all_gather, ...) runs over ICI and is
not costed (noted). ASSUMED: no fixed cost per fusion (not published), fusions read at peak bandwidth
and write at the chip's measured share of it (`ChipInfo.hbm_write_efficiency`; the v5e's elementwise
XLA op, 2 reads : 1 write, was 16 % faster than measured with writes at the peak, bench/tpu/v5e/xla.jsonl).
"""

from __future__ import annotations

import math
from collections.abc import Container, Iterator
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sandbox.harness.jaxapi import core as jcore
from sandbox.harness.jaxapi.core import AbstractRef
from sandbox.harness.model import layouts
from sandbox.harness.model.ops import CALLS, dot_kind, jaxpr_of, sub_jaxprs
from sandbox.protocol.chips import ChipInfo

KERNELS = frozenset({"pallas_call", "mpmd_map"})
# XLA lowers these to bitcasts (no copy) when alone: a fusion of only them moves nothing. A mutable
# ref's creation and reads alias its buffer (ASSUMED: an in-place kernel's caller pays no copy).
BITCASTS = frozenset(
    {"reshape", "squeeze", "expand_dims", "copy", "copy_p", "bitcast_convert_type"}
    | {"new_ref", "get", "freeze", "ref_get"}
)
# They read only the part of their first operand they return.
SLICES = frozenset({"slice", "dynamic_slice", "gather"})
# They update their first operand in place (XLA aliases the buffer): only the update is written.
UPDATES = {"dynamic_update_slice": 1, "scatter": 2, "scatter-add": 2, "scatter_add": 2}  # -> the update
COLLECTIVES = frozenset(
    {"psum", "pmax", "pmin", "ppermute", "all_gather", "all_to_all", "reduce_scatter", "psum_scatter"}
    | {"psum_invariant", "pbroadcast", "ragged_all_to_all"}
)
MATMULS = frozenset({"dot_general", "conv_general_dilated", "ragged_dot_general"})

# XLA's own op as a baseline comes in two kinds the chip tells apart (bench/tpu/v5e/xla.jsonl): dots and
# element-wise loops, which run as the model costs them, and ops XLA runs in several passes or below
# the MXU's peak (row reductions and what is built on them: softmax, attention's statistics; gathers;
# ragged dots), which the model's one pass at the peak makes too fast.
PASSES = frozenset(
    {"reduce_max", "reduce_min", "reduce_sum", "reduce_prod", "reduce_and", "reduce_or", "argmax", "argmin"}
    | {"cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp", "sort", "gather", "ragged_dot_general"}
)
XLA_PLAIN = "XLA's dots and element-wise ops"
XLA_PASSES = "XLA's reductions, gathers or ragged dots (softmax, attention, grouped dots)"
# The same ops costed by libtpu's own cost analysis of their compiled program (`model.runs.xla_baseline`
# where the chip's compiler runs off the chip): their bands are apart.
XLA_COMPILED = "XLA's reductions, gathers or ragged dots, costed by libtpu's compiler"


def xla_kind(closed: Any) -> str:
    """Which kind of XLA op a traced plain-JAX function is: `XLA_PASSES` if anything in it is one of
    `PASSES`, else `XLA_PLAIN`."""
    pending, seen = [jaxpr_of(closed)], set()
    while pending:
        for eqn in pending.pop().eqns:
            seen.add(eqn.primitive.name)
            pending.extend(sub_jaxprs(eqn))
    return XLA_PASSES if seen & PASSES else XLA_PLAIN


@dataclass
class Outside:
    """XLA's work outside the kernels of one traced function, on one chip."""

    seconds: float = 0.0
    bytes: int = 0
    flops: int = 0
    fusions: int = 0  # the groups costed (bitcast-only groups left out)
    notes: list[str] = field(default_factory=list)


def outside_work(closed: Any, chip: ChipInfo) -> Outside:
    """What XLA runs around the kernels of `closed` (a traced function), costed on `chip`."""
    found = Outside()
    _level(jaxpr_of(closed), chip, found, inside_loop=False)
    _relayouts(jaxpr_of(closed), chip, found)
    if found.fusions:
        found.notes.insert(
            0,
            f"XLA ops outside the kernels: {found.fusions} fusion(s) moving {_size(found.bytes)} "
            f"({found.seconds * 1e6:.2f} µs at HBM bandwidth"
            + (f", {found.flops:.3g} flops at the MXU's peak" if found.flops else "")
            + "), included in the estimate",
        )
    return found


def _size(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} B"


def _holds_kernel(eqn: Any) -> bool:
    if eqn.primitive.name in KERNELS:
        return True
    return any(_holds_kernel(e) for sub in sub_jaxprs(eqn) for e in sub.eqns)


def _nbytes(var: Any) -> int:
    aval: Any = getattr(var, "aval", None)
    shape = getattr(aval, "shape", None)
    if shape is None or isinstance(aval, AbstractRef):  # a ref is its buffer: not data moved
        return 0
    try:
        itemsize = np.dtype(aval.dtype).itemsize
    except TypeError:  # an extended dtype (PRNG keys, semaphores): not array data XLA moves
        return 0
    return math.prod(shape) * itemsize


def _matmul_flops(node: Node) -> int:
    if node.name != "dot_general":
        return 0  # convolutions: costed by their bytes only
    (lhs_contract, _), _ = node.eqn.params["dimension_numbers"]
    lhs = node.eqn.invars[0].aval.shape
    return 2 * math.prod(node.eqn.outvars[0].aval.shape) * math.prod(lhs[d] for d in lhs_contract)


def _is_bitcast(node: Node, inputs: Container[Any], returned: Container[Any]) -> bool:
    """An op XLA turns into a bitcast when alone: a reshape, a slice or broadcast that keeps every
    element, a transpose that moves only size-1 dimensions, a cast to the same type; a copy, but for one
    of the function's inputs that it returns (`jnp.copy(x)`: a new buffer, since XLA may not hand back
    an input it was not given to donate; the lent v5e copied 64 MiB so in 0.204 ms, `v5e/xla.jsonl`)."""
    if node.name in ("copy", "copy_p") and len(node.ins) == 1 and len(node.outs) == 1:
        return not (node.ins[0] in inputs and node.outs[0] in returned)
    if node.name in BITCASTS:
        return True
    if not node.ins or not isinstance(node.ins[0], jcore.Var) or len(node.outs) != 1:
        return False
    src: Any = node.ins[0].aval
    out: Any = node.outs[0].aval
    if node.name in ("slice", "dynamic_slice", "broadcast_in_dim", "convert_element_type"):
        return src.dtype == out.dtype and math.prod(src.shape) == math.prod(out.shape)
    if node.name == "transpose":
        moved = [d for d in node.eqn.params["permutation"] if src.shape[d] != 1]
        return moved == sorted(moved)
    return False


@dataclass(frozen=True)
class Node:
    """One op of a level with calls inlined (XLA inlines them): its equation, and its operands and
    results as the values they are at that level (a call's inner variables resolved to the outer)."""

    eqn: Any
    ins: tuple[Any, ...]
    outs: tuple[Any, ...]

    @property
    def name(self) -> str:
        return str(self.eqn.primitive.name)


def _inline(jaxpr: Any, alias: dict[Any, Any], nodes: list[Node]) -> None:
    """Append `jaxpr`'s ops to `nodes`, calls (jit, custom_jvp, ...) replaced by their bodies."""

    def resolve(atom: Any) -> Any:
        while isinstance(atom, jcore.Var) and atom in alias:
            atom = alias[atom]
        return atom

    for eqn in jaxpr.eqns:
        ins = tuple(resolve(v) for v in eqn.invars)
        if eqn.primitive.name in CALLS:
            inner = jaxpr_of(eqn.params[CALLS[eqn.primitive.name]])
            alias.update(zip(inner.invars, ins, strict=False))  # a call's body takes its operands
            _inline(inner, alias, nodes)
            alias.update(zip(eqn.outvars, (resolve(v) for v in inner.outvars), strict=False))
            continue
        nodes.append(Node(eqn, ins, tuple(eqn.outvars)))


def _level(jaxpr: Any, chip: ChipInfo, found: Outside, *, inside_loop: bool) -> None:
    """Cost the fusions of one jaxpr's level (calls inlined); recurse into the maps, loops and
    branches that hold kernels, each a level of its own."""
    alias: dict[Any, Any] = {}
    nodes: list[Node] = []
    _inline(jaxpr, alias, nodes)
    returned = {a for v in jaxpr.outvars if isinstance(a := alias.get(v, v), jcore.Var)}
    nodes = _live(nodes, returned)
    fusible: list[Node] = []  # this level's XLA ops, fused where connected
    collectives = 0
    for node in nodes:
        if node.name in KERNELS:
            continue
        if _holds_kernel(node.eqn):  # a shard_map, loop or branch around kernels: look inside
            for sub in sub_jaxprs(node.eqn):
                _level(sub, chip, found, inside_loop=inside_loop or node.name != "shard_map")
            continue
        if node.name in COLLECTIVES:
            collectives += 1
            continue
        fusible.append(node)
    if collectives:
        found.notes.append(f"{collectives} XLA collective(s) outside the kernels (over ICI) are not costed")
    before = found.fusions
    readers: dict[Any, set[int]] = {}  # value -> the ops reading it
    for node in nodes:
        for v in node.ins:
            if isinstance(v, jcore.Var):
                readers.setdefault(v, set()).add(id(node))
    inputs = set(jaxpr.invars)
    for group in _groups(fusible):
        _cost(group, readers, returned, chip, found, inputs)
    if inside_loop and found.fusions > before:
        found.notes.append("XLA ops inside a loop or branch of the function: counted once")


def _relayouts(jaxpr: Any, chip: ChipInfo, found: Outside) -> None:
    """The copies XLA adds between the function's own arrays and its Pallas kernels where the TPU keeps
    an array in another layout than the row-major one a kernel takes (`layouts`): a function input a
    kernel reads, copied before it, and a kernel output the function returns, copied after it."""
    alias: dict[Any, Any] = {}
    nodes: list[Node] = []
    _inline(jaxpr, alias, nodes)
    inputs = set(jaxpr.invars)
    returned = {a for v in jaxpr.outvars if isinstance(a := alias.get(v, v), jcore.Var)}
    copied: set[Any] = set()
    for node in nodes:
        if node.name == "pallas_call":
            copied.update(v for v in node.ins if isinstance(v, jcore.Var) and v in inputs and _relayout(v))
            copied.update(v for v in node.outs if v in returned and _relayout(v))
    if not copied:
        return
    # Each copy reads the array and writes it, both at the HBM peak (its bytes: the copy's tile padding
    # is left out). MEASURED on the lent v5e (bench/tpu/relayout_probe.py, v5e/relayout-probe-*.json):
    # a Pallas copy of a (4, 16, 2048, 64) bf16 array with XLA's two copies around it took 0.132 ms,
    # the same kernel at head dim 128 and no copies 0.129 ms; writes at the v5e's measured share
    # (`hbm_write_efficiency`, a kernel's copies') made the pair 0.104 ms where this gives 0.082.
    read = written = sum(_nbytes(v) for v in copied)
    seconds = (read + written) / chip.device_hbm_bandwidth
    found.seconds += seconds
    found.bytes += read + written
    found.fusions += len(copied)
    shapes = sorted({f"{_dtype_name(v)}{list(v.aval.shape)}" for v in copied})
    found.notes.append(
        f"XLA copies {len(copied)} array(s) between the layout the TPU keeps them in and the row-major one "
        f"a Pallas kernel takes ({', '.join(shapes[:4])}{', …' if len(shapes) > 4 else ''}: the TPU keeps "
        f"another dimension in lanes, one that pads less): {_size(read + written)} moved, "
        f"{seconds * 1e6:.2f} µs, included in the estimate"
    )


def _relayout(var: Any) -> bool:
    aval: Any = getattr(var, "aval", None)
    shape = getattr(aval, "shape", None)
    if shape is None or isinstance(aval, AbstractRef) or _nbytes(var) == 0:
        return False
    return layouts.relayout(tuple(int(d) for d in shape), np.dtype(aval.dtype).itemsize)


def _dtype_name(var: Any) -> str:
    return str(np.dtype(var.aval.dtype).name)


def _live(nodes: list[Node], returned: set[Any]) -> list[Node]:
    """The ops whose results are used (XLA drops the rest): kernels, effects, and what they or the
    function's results need."""
    needed = set(returned)
    kept: list[Node] = []
    for node in reversed(nodes):
        if node.eqn.effects or any(v in needed for v in node.outs) or _holds_kernel(node.eqn):
            kept.append(node)
            needed.update(v for v in node.ins if isinstance(v, jcore.Var))
    return kept[::-1]


def _groups(nodes: list[Node]) -> Iterator[list[Node]]:
    """Connected runs of fusible ops (union-find over the values one produces and another reads);
    a dot or convolution is a group of its own."""
    parent = list(range(len(nodes)))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    producer: dict[Any, int] = {}
    readers: dict[Any, int] = {}
    for node in nodes:
        for v in node.ins:
            if isinstance(v, jcore.Var):
                readers[v] = readers.get(v, 0) + 1
    joined: set[int] = set()  # dots that took an element-wise consumer into their fusion
    for i, node in enumerate(nodes):
        if node.name not in MATMULS:
            for v in node.ins:
                j = producer.get(v) if isinstance(v, jcore.Var) else None
                if j is None:
                    continue
                if nodes[j].name not in MATMULS:
                    parent[root(i)] = root(j)
                elif _output_fusible(node, v, readers) and j not in joined and root(i) == i:
                    # XLA fuses a dot's sole element-wise consumer (a cast, a bias, an activation)
                    # into the dot's output: the dot's own result never reaches HBM. Measured on a
                    # v5e: an f32 dot cast to bf16 ran as one fusion (kind=kOutput).
                    joined.add(j)
                    parent[root(i)] = root(j)
        for v in node.outs:
            producer[v] = i
    members: dict[int, list[Node]] = {}
    for i, node in enumerate(nodes):
        members.setdefault(root(i), []).append(node)
    yield from members.values()


def _output_fusible(node: Node, value: Any, readers: dict[Any, int]) -> bool:
    """Whether `node` may join the fusion of the dot that made `value`: the dot's only reader, and an
    op of one output the size of its input (element-wise)."""
    if readers.get(value, 0) != 1 or len(node.outs) != 1 or node.name in MATMULS:
        return False
    out: Any = getattr(node.outs[0], "aval", None)
    src: Any = getattr(value, "aval", None)
    return out is not None and src is not None and getattr(out, "shape", None) == getattr(src, "shape", ())


def _cost(
    group: list[Node],
    readers: dict[Any, set[int]],
    returned: set[Any],
    chip: ChipInfo,
    found: Outside,
    inputs: Container[Any],
) -> None:
    """Add one fusion: what enters it plus what leaves it, at HBM bandwidth (or its dot's MXU time);
    `inputs`: the level's own inputs (a copy of one it returns is not a bitcast, `_is_bitcast`)."""
    if all(_is_bitcast(n, inputs, returned) for n in group):
        return
    inside = {id(n) for n in group}
    produced = {v for n in group for v in n.outs}
    whole: dict[Any, int] = {}  # per outside value: its bytes if any op reads all of it
    sliced: dict[Any, int] = {}  # the parts slices take of it (at most all of it)
    for n in group:
        for k, v in enumerate(n.ins):
            if not isinstance(v, jcore.Var) or v in produced:
                continue
            if k == 0 and n.name in SLICES:
                sliced[v] = min(sliced.get(v, 0) + _nbytes(n.outs[0]), _nbytes(v))
            elif k == 0 and n.name in UPDATES:
                sliced.setdefault(v, 0)  # updated in place: not read
            else:
                whole[v] = _nbytes(v)
    read = {**sliced, **whole}
    written = 0
    for n in group:
        for v in n.outs:
            if isinstance(v, jcore.DropVar) or (not readers.get(v, set()) - inside and v not in returned):
                continue
            update = UPDATES.get(n.name)
            written += _nbytes(n.ins[update]) if update is not None and len(n.ins) > update else _nbytes(v)
    moved = sum(read.values()) + written
    flops = sum(_matmul_flops(n) for n in group)
    if moved == 0 and flops == 0:
        return
    # Reads at the peak, writes at the share of it the chip's writes reach (`hbm_write_efficiency`).
    bandwidth = chip.device_hbm_bandwidth
    seconds = sum(read.values()) / bandwidth + written / (bandwidth * chip.hbm_write_efficiency)
    if flops:
        # The group's dot, wherever it sits: a consumer it took in may have brought earlier ops with it.
        dot = next(n for n in group if n.name in MATMULS)
        peak = chip.mxu_rate(dot_kind(dot.eqn)) * chip.mxu_efficiency * chip.device_tensor_cores
        seconds = max(seconds, flops / peak)
    found.seconds += seconds
    found.bytes += moved
    found.flops += flops
    found.fusions += 1
