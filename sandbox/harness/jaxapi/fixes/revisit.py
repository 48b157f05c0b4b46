"""Output blocks marked `RevisitMode.ANY`, revisited at non-consecutive grid steps (jax 0.12.0.1).

On a TPU, `pl.Buffered(1, revisit=pl.RevisitMode.ANY)` on an output BlockSpec makes the pipeline
restore a block's contents from HBM whenever the grid comes back to it, so a kernel may accumulate
into block j at steps (0, j), (1, j), … JAX's interpreter never reads an output back: it raises
"Revisited block …" instead (and, without that check, would start each revisit from stale VMEM).

The fix gives each such output a hidden twin input: the same BlockSpec, aliased to the output, so
the interpreter loads the block from the output's HBM buffer whenever its index changes, exactly
when the TPU would restore it. The kernel body sees the twin's VMEM buffer as its output ref, and
after each step the harness copies that buffer into the output's own block buffer, which the
interpreter writes back to HBM when the index changes. The first visit reads the output's
uninitialised fill, as on a TPU. Aliased outputs are left alone (the interpreter already skips
their revisit check, and their HBM buffer is the input's).
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

NAME = "revisit_any"


@dataclass(frozen=True)
class Twins:
    """The kernel jaxpr after the change and, per twin, (its kernel operand, the output's)."""

    jaxpr: Any
    pairs: tuple[tuple[int, int], ...]
    spaces: tuple[Any, ...]


# Kernel jaxprs with twins → their pairs; read while the interpreter traces the grid body (several
# core threads may trace at once, hence the lock).
_TWINS: dict[int, Twins] = {}
_LOCK = threading.Lock()


def install(ipc: Any) -> bool:
    """Wrap `interpret_pallas_call` and `_interpret_jaxpr` of the interpreter module `ipc`."""
    if getattr(ipc.interpret_pallas_call, "_playground_revisit", False):
        return True
    if not hasattr(ipc, "_interpret_jaxpr") or not hasattr(ipc, "_forward_any_to_hbm"):
        return False
    ipc.interpret_pallas_call = _with_twins(ipc.interpret_pallas_call, ipc)
    ipc._interpret_jaxpr = _body_with_twins(ipc._interpret_jaxpr, ipc)
    return True


def revisits_any(block_mapping: Any) -> bool:
    from jax._src.pallas import core as pallas_core

    mode = getattr(block_mapping, "pipeline_mode", None)
    return getattr(mode, "revisit", None) is pallas_core.RevisitMode.ANY


def _with_twins(interpret: Callable[..., Any], ipc: Any) -> Callable[..., Any]:
    @functools.wraps(interpret)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        mapping = kwargs["grid_mapping"]
        aliased = {out for _, out in kwargs["input_output_aliases"]}
        outputs = [
            j
            for j, bm in enumerate(mapping.block_mappings[mapping.num_inputs :])
            if revisits_any(bm) and j not in aliased
        ]
        if not outputs:
            return interpret(*args, **kwargs)
        new_args, new_kwargs = add_twins(list(args), dict(kwargs), outputs, ipc)
        new_kwargs["interpret_params"] = _described_again(new_kwargs)
        return interpret(*new_args, **new_kwargs)

    wrapper._playground_revisit = True  # type: ignore[attr-defined]
    return wrapper


def _described_again(kwargs: dict[str, Any]) -> Any:
    """The monitor's description of the kernel (on the params, if monitored), now with the twins.

    The monitor names buffers by the order the interpreter allocates them, which the twins change.
    """
    import dataclasses

    from sandbox.harness import usercode
    from sandbox.harness.monitor.book import describe_kernel

    params = kwargs["interpret_params"]
    kernel = getattr(params, "playground_kernel", None)
    if kernel is None:
        return params
    files = (usercode.USER_FILE, usercode.REFERENCE_FILE)
    again = describe_kernel(kwargs, kernel.cores, kernel.on_mesh, files)
    return dataclasses.replace(params, playground_kernel=again)


def add_twins(
    args: list[Any], kwargs: dict[str, Any], outputs: list[int], ipc: Any
) -> tuple[list[Any], dict[str, Any]]:
    """The pallas_call's arguments with a twin input for each of `outputs` (see the module docstring)."""
    import dataclasses

    from jax._src import core as jax_core
    from jax._src.pallas.mosaic.interpret import utils

    mapping, jaxpr = kwargs["grid_mapping"], kwargs["jaxpr"]
    n_index, n_in = mapping.num_index_operands, mapping.num_inputs
    n_dynamic = mapping.num_dynamic_grid_bounds
    params = kwargs["interpret_params"]
    block_ops = list(mapping.block_mappings)
    invars = list(jaxpr.invars)
    names = list(jaxpr.debug_info.arg_names or ()) if jaxpr.debug_info else []
    twins, inits, aliases = [], [], list(kwargs["input_output_aliases"])
    for k, j in enumerate(outputs):
        bm = block_ops[n_in + j]
        twins.append(dataclasses.replace(bm, pipeline_mode=None, origin=f"{bm.origin} (restored)"))
        out_var = invars[n_index + n_in + j]
        invars.insert(n_index + n_in + k, jax_core.Var(out_var.aval))
        if len(names) == len(jaxpr.invars) + k:
            names.insert(n_index + n_in + k, names[n_index + n_in + k + j])
        aval = bm.array_aval
        inits.append(utils.get_uninitialized_array(aval.shape, aval.dtype, params.uninitialized_memory))
        aliases.append((n_index + n_in + k, j))
    added = len(outputs)
    debug = jaxpr.debug_info
    if debug is not None:
        debug = debug._replace(arg_names=tuple(names) if len(names) == len(invars) else None)
    new_jaxpr = jaxpr.replace(invars=invars, debug_info=debug)
    new_mapping = mapping.replace(
        block_mappings=(*block_ops[:n_in], *twins, *block_ops[n_in:]), num_inputs=n_in + added
    )
    pairs = tuple((n_index + n_in + k, n_index + n_in + added + j) for k, j in enumerate(outputs))
    spaces = tuple(ipc._forward_any_to_hbm(t.transformed_block_aval.memory_space) for t in twins)
    with _LOCK:
        _TWINS[id(new_jaxpr)] = Twins(new_jaxpr, pairs, spaces)
    at = n_dynamic + n_index + n_in
    args = [*args[:at], *inits, *args[at:]]
    kwargs.update(jaxpr=new_jaxpr, grid_mapping=new_mapping, input_output_aliases=tuple(aliases))
    return args, kwargs


def _body_with_twins(interpret_jaxpr: Callable[..., Any], ipc: Any) -> Callable[..., Any]:
    @functools.wraps(interpret_jaxpr)
    def wrapper(jaxpr: Any, *args: Any, ctx: Any, token: Any) -> Any:
        with _LOCK:
            twins = _TWINS.get(id(jaxpr))
        if twins is None or twins.jaxpr is not jaxpr:
            return interpret_jaxpr(jaxpr, *args, ctx=ctx, token=token)
        ids = list(args)
        for twin, output in twins.pairs:
            ids[output] = args[twin]  # the body's output ref is the twin's buffer, loaded on revisits
        token, out = interpret_jaxpr(jaxpr, *ids, ctx=ctx, token=token)
        for (twin, output), space in zip(twins.pairs, twins.spaces, strict=True):
            token = _copy(ipc, ctx, token, space, args[twin], args[output], jaxpr.invars[output].aval)
        return token, out

    return wrapper


def _copy(ipc: Any, ctx: Any, token: Any, space: Any, src: Any, dst: Any, aval: Any) -> Any:
    """Stage a whole-buffer copy between two of the kernel's block buffers (as interpreter callbacks)."""
    import jax

    space_id = ipc.TPU_MEMORY_SPACE_IDXS[space]
    token, value = ipc.callback.io_callback(
        ipc.get,
        (ipc.TOKEN_SHAPE_DTYPE, jax.ShapeDtypeStruct(aval.shape, aval.dtype)),
        token,
        ctx.device_id,
        ctx.local_core_id,
        space_id,
        src,
        (),
    )
    return ipc.callback.io_callback(
        ipc.store, ipc.TOKEN_SHAPE_DTYPE, token, ctx.device_id, ctx.local_core_id, space_id, dst, (), value
    )
