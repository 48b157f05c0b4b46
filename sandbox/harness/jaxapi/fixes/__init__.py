"""Fixes that extend JAX's TPU interpret mode where it cannot run what a TPU runs (jax 0.12.0.1).

One module per construct; `sandbox.harness.jaxapi.interpret_fixes` installs them, version-guarded, and
each module's docstring says what it changes and what it cannot know about the hardware.

revisit.py      output blocks with `RevisitMode.ANY`, revisited at any grid step
semaphores.py   `pl.semaphore_read` of a simulated semaphore
rounding.py     `pltpu.stochastic_round` on a CPU
selects.py      `pl.select_ref` in DMAs and waits (a switch over the refs)
gathers.py      SparseCore indexed DMAs `x_hbm.at[ids_ref]` (one row copy per id)
vector_index.py `plsc.load_gather` / `store_scatter` / `addupdate_scatter`
allocations.py  `jax.empty_ref` in VMEM or SMEM inside a kernel body
prng.py         the TPU core's stateful PRNG (`prng_seed`, `prng_random_bits`), seeded per core
keys.py         PRNG keys as kernel operands, outputs and scratch; sampling and folding them in a kernel
futures.py      semaphores as kernel operands and outputs (async copy futures across kernels)
views.py        reads, writes and DMAs through `ref.reshape(...)` / `ref.bitcast(...)`
resident.py     aliased operands resident in VMEM or SMEM are one buffer
subcores.py     `plsc.subcore_barrier()`: a SparseCore's subcores as threads, one shared VMEM
masked.py       masked stores into refs of rank 3 or more (a bounds check on the wrong axis)
rewrite.py      shared: equations rewritten before the interpreter runs them
physical.py     shared: key and semaphore values across the interpreter's host callbacks
hostcall.py     shared: interpreter rules that stage host callbacks; replacing its host functions
"""


class Unsimulated(NotImplementedError):
    """A construct a fix recognises but does not simulate (the message says which and why).

    The error translator words these as the simulator's own refusal, not as something JAX said.
    """
