"""Aliased operands that live in VMEM or SMEM (`pl.BlockSpec(memory_space=pltpu.VMEM)`) are one buffer (jax 0.12.0.1).

On a TPU an operand whose BlockSpec names VMEM or SMEM and no block shape is placed there whole by
XLA, and the kernel gets a ref to it directly, without a pipeline copy. An input aliased to such an
output (`input_output_aliases`) is then the *same* buffer: what the kernel writes through either ref,
or what a DMA writes into it, is the output (JAX's `test_basic_async_copy_into_vmem`: a later kernel
waits for a copy into the buffer and returns it). JAX's interpreter gave the input and the output
buffers of their own and copied the output's back, so such an output came out as its uninitialised
fill (NaN), silently.

The fix, for each such pair, makes the kernel body use the input's buffer for both refs, and copies
that buffer into the output's at the end of each body run, so the interpreter writes the shared
contents back as the output. Pairs with a block shape or the default memory space are pipelined on
a TPU too (separate buffers) and are left alone.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

NAME = "aliased_resident_operands"


def install(ipc: Any) -> bool:
    import inspect

    if getattr(ipc.interpret_pallas_call, "_playground_resident", False):
        return True
    wanted = {"jaxpr", "grid_mapping", "input_output_aliases"}
    if not wanted <= set(inspect.signature(ipc.interpret_pallas_call).parameters):
        return False
    ipc.interpret_pallas_call = _sharing(ipc.interpret_pallas_call)
    return True


def _sharing(interpret: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(interpret)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        pairs = _resident_pairs(kwargs["grid_mapping"], kwargs["input_output_aliases"])
        if pairs:
            kwargs["jaxpr"] = _shared(kwargs["jaxpr"], pairs)
        return interpret(*args, **kwargs)

    wrapper._playground_resident = True  # type: ignore[attr-defined]
    return wrapper


def _resident_pairs(mapping: Any, aliases: Any) -> list[tuple[int, int]]:
    """(input's kernel operand, output's kernel operand) of each aliased pair resident in VMEM or SMEM."""
    from jax._src.pallas.mosaic import core as tpu_core

    resident = (tpu_core.MemorySpace.VMEM, tpu_core.MemorySpace.SMEM)
    scalars, inputs = mapping.num_index_operands, mapping.num_inputs
    pairs = []
    for operand, output in aliases:
        i = operand - scalars
        if i < 0:
            continue
        spaces = [mapping.block_mappings[n].transformed_block_aval.memory_space for n in (i, inputs + output)]
        if all(space in resident for space in spaces):
            pairs.append((scalars + i, scalars + inputs + output))
    return pairs


def _shared(jaxpr: Any, pairs: list[tuple[int, int]]) -> Any:
    import jax
    from jax._src import core as jax_core

    invars = jaxpr.invars
    same = {invars[out]: invars[inp] for inp, out in pairs}

    def renamed(v: Any) -> Any:
        return same.get(v, v) if isinstance(v, jax_core.Var) else v

    eqns = [e.replace(invars=[renamed(v) for v in e.invars]) for e in jaxpr.eqns]
    for inp, out in pairs:
        copy = jax.make_jaxpr(_copy)(invars[inp].aval, invars[out].aval).jaxpr
        sub = dict(zip(copy.invars, (invars[inp], invars[out]), strict=True))
        eqns += [
            e.replace(invars=[sub.get(v, v) if isinstance(v, jax_core.Var) else v for v in e.invars])
            for e in copy.eqns
        ]
    return jaxpr.replace(eqns=eqns)


def _copy(source: Any, target: Any) -> None:
    target[...] = source[...]
