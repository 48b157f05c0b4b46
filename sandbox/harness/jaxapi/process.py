"""What the warm pool (`sandbox.jail.pool`) needs of JAX's internals: which internal modules to import
before forking, and whether a JAX backend exists yet (a forked child of a process with one deadlocks).

Imports nothing from JAX until asked: the pool reads `PRELOAD` before it imports JAX itself.
"""

from __future__ import annotations

# Imported lazily by the first Pallas lowering otherwise (found by diffing sys.modules before and
# after catalog runs). Not every runtime has each (jax 0.10.2's Mosaic GPU interpreter fails to import
# on a CPU host): the pool imports those it can.
PRELOAD = (
    "jax._src.pallas.mosaic.pallas_call_registration",
    "jax._src.pallas.mosaic.sc_lowering",
    "jax._src.pallas.mosaic_gpu.interpret.interpret_pallas_call",
)


def backends_initialised() -> bool:
    """Whether this process has initialised a JAX backend."""
    from jax._src import xla_bridge

    return bool(xla_bridge._backends)
