"""Fixes that extend JAX's TPU interpret mode where it cannot run what a TPU runs (jax 0.12.0.1).

One module per construct; `sandbox.harness.interpret_fixes` installs them, version-guarded, and
each module's docstring says what it changes and what it cannot know about the hardware.

revisit.py      output blocks with `RevisitMode.ANY`, revisited at any grid step
semaphores.py   `pl.semaphore_read` of a simulated semaphore
rounding.py     `pltpu.stochastic_round` on a CPU
selects.py      `pl.select_ref` in DMAs and waits (a switch over the refs)
gathers.py      SparseCore indexed DMAs `x_hbm.at[ids_ref]` (one row copy per id)
vector_index.py `plsc.load_gather` / `store_scatter` / `addupdate_scatter`
allocations.py  `jax.empty_ref` in VMEM or SMEM inside a kernel body
rewrite.py      the shared mechanism: equations rewritten before the interpreter runs them
"""
