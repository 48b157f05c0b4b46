"""JAX's jaxpr types and the few internal helpers the TPU time model reads a kernel's program with.

The model walks a kernel's jaxpr (`Var`, `Literal`, `DropVar`, `Jaxpr`), replays parts of it
(`eval_jaxpr`), reads ref indexers (`NDIndexer`, `Slice`) and DMA operands (`dma_unflatten`); these
live in `jax._src`, so the model gets them from here: `from sandbox.harness.jaxapi import core as
jcore`, then `jcore.Var`, as it would JAX's own module.
"""

from __future__ import annotations

from jax._src.api_util import debug_info
from jax._src.core import DropVar, Jaxpr, Literal, Var, eval_jaxpr
from jax._src.pallas.mosaic.primitives import _dma_unflatten as dma_unflatten
from jax._src.state.indexing import NDIndexer, Slice
from jax._src.state.types import AbstractRef
from jax._src.tree_util import tree_unflatten

__all__ = [
    "AbstractRef",
    "DropVar",
    "Jaxpr",
    "Literal",
    "NDIndexer",
    "Slice",
    "Var",
    "debug_info",
    "dma_unflatten",
    "eval_jaxpr",
    "tree_unflatten",
]
