"""The TPU core's stateful PRNG (`pltpu.prng_seed`, `pltpu.prng_random_bits`) in interpret mode (jax 0.12.0.1).

On a TPU each core has a hardware random number generator: `prng_seed(*seeds)` sets its state and
`prng_random_bits(shape)` draws int32 bits from it; the stateful samplers (`pltpu.stateful_uniform`,
…) and Pallas PRNG keys (`pltpu.to_pallas_key`, `jax.random.key(…, impl="pallas_tpu")`) are built on
the two. JAX's interpreter ignored the seed and returned zeros for every draw, so a dropout mask or
a sampled tensor came out constant, silently.

The fix keeps one generator per simulated core in the host process: `prng_seed` seeds it from the
seed words (ints, or a Pallas key's words), `prng_random_bits` draws from it. The same seeds give the
same bits, different seeds different streams, and a stream does not repeat within a kernel, which is
what JAX's own TPU tests of the PRNG check. **The bits are not the TPU's**: the hardware generator's
algorithm is not documented, so no simulator can reproduce its stream; a kernel whose check depends
on the exact bits (rather than their distribution) cannot be checked here. A core that draws before
any seed is seeded with 0.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

from sandbox.harness.jaxapi.fixes import hostcall, physical

NAME = "prng_state"
_GENERATORS: dict[tuple[int, int], Any] = {}
_LOCK = threading.Lock()


def install(ipc: Any) -> bool:
    from jax._src.pallas.mosaic import primitives as tpu_primitives

    seed_p = getattr(tpu_primitives, "prng_seed_p", None)
    bits_p = getattr(tpu_primitives, "prng_random_bits_p", None)
    if seed_p is None or bits_p is None or not hasattr(ipc, "callback"):
        return False
    return hostcall.register(
        ipc, seed_p, functools.partial(_stage_seed, ipc), lambda *avals: []
    ) and hostcall.register(ipc, bits_p, functools.partial(_stage_bits, ipc), _bits_aval)


def _bits_aval(*, shape: tuple[int, ...]) -> Any:
    import jax.numpy as jnp
    from jax._src import core as jax_core

    return jax_core.ShapedArray(tuple(shape), jnp.dtype("int32"))


def _stage_seed(ipc: Any, eqn: Any, invals: list[Any], ctx: Any, token: Any) -> tuple[Any, list[Any]]:
    import jax.numpy as jnp

    words = jnp.concatenate([jnp.ravel(physical.to_physical(v)).astype(jnp.uint32) for v in invals])
    token = ipc.callback.io_callback(
        _seed, ipc.TOKEN_SHAPE_DTYPE, token, ctx.device_id, ctx.local_core_id, words
    )
    return token, []


def _stage_bits(ipc: Any, eqn: Any, invals: list[Any], ctx: Any, token: Any) -> tuple[Any, list[Any]]:
    import jax

    aval = eqn.outvars[0].aval
    token, bits = ipc.callback.io_callback(
        functools.partial(_draw, shape=tuple(aval.shape)),
        (ipc.TOKEN_SHAPE_DTYPE, jax.ShapeDtypeStruct(aval.shape, aval.dtype)),
        token,
        ctx.device_id,
        ctx.local_core_id,
    )
    return token, [bits]


def _seed(token: Any, device_id: Any, local_core_id: Any, words: Any) -> Any:
    import numpy as np

    with _LOCK:
        seed = np.random.SeedSequence([int(w) for w in np.asarray(words).ravel()])
        _GENERATORS[(int(device_id), int(local_core_id))] = np.random.Generator(np.random.Philox(seed))
    return token


def _draw(token: Any, device_id: Any, local_core_id: Any, *, shape: tuple[int, ...]) -> tuple[Any, Any]:
    import numpy as np

    core = (int(device_id), int(local_core_id))
    with _LOCK:
        generator = _GENERATORS.get(core)
        if generator is None:
            generator = _GENERATORS[core] = np.random.Generator(np.random.Philox(np.random.SeedSequence(0)))
        return token, generator.integers(0, 2**32, size=shape, dtype=np.uint32).view(np.int32)
