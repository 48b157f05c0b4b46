"""Calling user kernels from the harness: mutable-ref inputs, output flattening, cost, summaries.

Runs in the child (needs JAX). The harness owns inputs and the reference; this module only knows
how to feed them to a kernel and read back what it produced.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np


@dataclass(frozen=True)
class Call:
    """A prepared kernel call: `run()` executes once and blocks until the results are ready."""

    fn: Callable[..., Any]
    args: tuple[Any, ...]
    mutable: tuple[int, ...]

    def run(self) -> list[tuple[str, np.ndarray]]:
        result = self.fn(*self.args)
        jax.block_until_ready(result)
        outputs = [(f"input[{i}] (mutated in place)", np.asarray(self.args[i][...])) for i in self.mutable]
        if result is not None and not (isinstance(result, tuple) and not result):
            outputs += flatten("out", result)
        return outputs

    def of_arrays(self) -> tuple[Callable[..., Any], tuple[jax.ShapeDtypeStruct, ...]]:
        """The call as a function of plain arrays, and their shapes, for `jax.export` (which takes no
        refs): the mutable inputs are made refs inside it, and returned first, as `run` names its outputs."""
        specs = tuple(jax.ShapeDtypeStruct(tuple(a.shape), a.dtype) for a in self.args)
        if not self.mutable:
            return self.fn, specs
        fn, mutable = self.fn, self.mutable

        def with_refs(*values: Any) -> Any:
            args = tuple(jax.new_ref(v) if i in mutable else v for i, v in enumerate(values))
            result = fn(*args)
            mutated = tuple(args[i][...] for i in mutable)
            return (
                mutated
                if result is None or (isinstance(result, tuple) and not result)
                else (*mutated, result)
            )

        return with_refs, specs

    def run_quietly(self) -> None:
        """Run once and wait for the kernel to finish (what a timing brackets). A kernel that writes
        through a mutable ref returns nothing to wait on: the call then waits for one element read back
        from each ref, a read the kernel's write must precede (on the v5e such calls were timed from a
        window that closed before the kernel ran: 209-252 TFLOP/s on a 197 TFLOP/s chip)."""
        result = self.fn(*self.args)
        written = [self.args[i][(0,) * len(self.args[i].shape)] for i in self.mutable]
        jax.block_until_ready((result, written))


def prepare(fn: Callable[..., Any], inputs: Sequence[Any], mutable: tuple[int, ...]) -> Call:
    """Wrap `fn` in jit and give the inputs named as mutable to it as fresh `jax.new_ref`s."""
    args = tuple(jax.new_ref(jnp.asarray(x)) if i in mutable else x for i, x in enumerate(inputs))
    return Call(fn=jax.jit(fn), args=args, mutable=mutable)


def run_reference(reference: Callable[..., Any], inputs: Sequence[Any]) -> Any:
    """The reference's outputs, computed under `jax.jit` when it can be (op-by-op dispatch of a large
    reference, e.g. an attention gradient, takes many times longer), else eagerly, as written.

    Any failure under jit (a reference with Python control flow on values raises a tracer error)
    falls back to the eager call, whose own error, if any, is the one reported.
    """
    try:
        return jax.block_until_ready(jax.jit(reference)(*inputs))
    except Exception:
        return reference(*inputs)


def flatten(prefix: str, value: Any) -> list[tuple[str, np.ndarray]]:
    """Name every array leaf of a result pytree: out, out[0], out['k'], …"""
    leaves = jax.tree_util.tree_flatten_with_path(value)[0]
    if len(leaves) == 1 and not leaves[0][0]:
        return [(prefix, np.asarray(leaves[0][1]))]
    return [(prefix + jax.tree_util.keystr(path), np.asarray(leaf)) for path, leaf in leaves]


def leaves(value: Any) -> list[np.ndarray]:
    """Every array leaf of a pytree of inputs, as numpy (for the inputs' digest)."""
    return [np.asarray(leaf) for leaf in jax.tree_util.tree_leaves(value)]


def timed(run: Callable[[], Any]) -> tuple[Any, float]:
    t0 = time.perf_counter()
    value = run()
    return value, time.perf_counter() - t0


def nbytes(arrays: Sequence[Any]) -> int:
    return int(sum(np.asarray(a).nbytes for a in jax.tree_util.tree_leaves(list(arrays))))


def shape_bytes(tree: Any) -> int:
    """Bytes of a tree of arrays or `ShapeDtypeStruct`s from their shapes and dtypes alone (nothing copied
    to the host, nothing computed)."""
    return sum(
        math.prod(leaf.shape) * np.dtype(leaf.dtype).itemsize for leaf in jax.tree_util.tree_leaves(tree)
    )


def reference_cost(reference: Callable[..., Any], inputs: Sequence[Any]) -> tuple[int | None, int | None]:
    """Flops and HBM bytes of the plain-jnp reference, from XLA's cost analysis."""
    try:
        analysis = jax.jit(reference).lower(*inputs).compile().cost_analysis()
    except Exception:
        return None, None
    if isinstance(analysis, list):
        analysis = analysis[0] if analysis else {}
    analysis = analysis or {}
    flops = analysis.get("flops")
    bytes_accessed = analysis.get("bytes accessed")
    return (int(flops) if flops else None, int(bytes_accessed) if bytes_accessed else None)
