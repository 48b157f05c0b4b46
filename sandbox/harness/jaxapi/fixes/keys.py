"""PRNG keys as kernel operands, outputs and scratch, and the key operations inside a kernel (jax 0.12.0.1).

On a TPU a kernel takes `jax.random` keys in SMEM or VMEM (a Pallas key from `pltpu.to_pallas_key`,
or a threefry key), copies them (`pltpu.sync_copy`), returns them, and samples from them in the body
(`jax.random.uniform(key_ref[...], …)`, `fold_in`, `pltpu.prng_seed(key_ref[...])`,
`unwrap_pallas_seed`); JAX's TPU tests `tpu_pallas_random_test.py` do all of these. JAX's
interpreter failed on each: the callbacks cannot carry key dtypes (fixed by `physical.py`), and a
Pallas key's sampling and folding lower to TPU-only primitives with no CPU rule ("MLIR translation
rule for primitive 'prng_seed' not found for platform cpu").

The fix gives the interpreter rules, mirroring the TPU compiler's lowering of the same operations:
- sampling (`random_bits`) from a Pallas key seeds the core's generator with the key and draws
  (`prng.py` simulates that generator: its bits are not the TPU's); from any other key it runs the
  key's own algorithm on its words, bit-exact with `jax.random` outside a kernel;
- `fold_in` on a Pallas key mixes as the key's implementation says (one threefry round);
- `unwrap_pallas_seed` / `wrap_pallas_seed` split a key into its words and join them back.
"""

from __future__ import annotations

from typing import Any

from sandbox.harness.jaxapi.fixes import Unsimulated, physical, prng

NAME = "prng_key_operands"


def install(ipc: Any) -> bool:
    from jax._src.pallas.mosaic import primitives as tpu_primitives
    from jax._src.pallas.mosaic import random as pl_random
    from jax._src.random import prng as jax_prng

    table = getattr(ipc, "_interpret_impls", None)
    needed = (getattr(jax_prng, "random_bits_impl_base", None), getattr(tpu_primitives, "split_key_p", None))
    if table is None or None in needed or not hasattr(pl_random, "is_pallas_impl"):
        return False
    if not physical.install(ipc) or not prng.install(ipc):
        return False
    table[jax_prng.random_bits_p] = _random_bits
    table[jax_prng.random_fold_in_p] = _fold_in
    table[tpu_primitives.split_key_p] = _split
    table[tpu_primitives.join_key_p] = _join
    return True


def _is_pallas(dtype: Any) -> bool:
    from jax._src.pallas.mosaic import random as pl_random

    return bool(pl_random.is_pallas_impl(dtype._impl))


def _random_bits(keys: Any, *, bit_width: int, shape: tuple[int, ...]) -> Any:
    import jax
    import jax.numpy as jnp
    from jax._src.random import prng as jax_prng

    impl = keys.dtype._impl
    if _is_pallas(keys.dtype):
        if keys.ndim:
            raise Unsimulated("sampling from an array of Pallas keys at once; index one key first")
        # The core's generator draws int32 words; `random_bits` promises unsigned ones of the same bits
        # (on a TPU both are the same 32-bit registers).
        bits = impl.random_bits(keys, bit_width, shape)
        return jax.lax.bitcast_convert_type(bits, jnp.dtype(f"uint{bit_width}"))
    return jax_prng.random_bits_impl_base(
        impl, jax_prng.random_unwrap(keys), keys.ndim, bit_width=bit_width, shape=shape
    )


def _fold_in(keys: Any, msgs: Any) -> Any:
    from jax._src.random import prng as jax_prng

    impl = keys.dtype._impl
    if _is_pallas(keys.dtype):
        if keys.ndim:
            raise Unsimulated("folding into an array of Pallas keys at once; index one key first")
        return impl.fold_in(keys, msgs)
    data = jax_prng.random_fold_in_impl_base(impl, jax_prng.random_unwrap(keys), msgs, keys.shape)
    return jax_prng.random_wrap(data, impl=impl)


def _split(key: Any) -> list[Any]:
    import jax.numpy as jnp

    words = jnp.ravel(physical.to_physical(key))
    return [words[i] for i in range(words.shape[0])]


def _join(*words: Any, impl: Any) -> Any:
    import jax.numpy as jnp
    from jax._src.random import prng as jax_prng

    data = jnp.stack([jnp.asarray(w, jnp.uint32) for w in words]).reshape(impl.key_shape)
    return jax_prng.random_wrap(data, impl=impl)
