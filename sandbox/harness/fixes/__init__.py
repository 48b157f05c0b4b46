"""Fixes that extend JAX's TPU interpret mode where it cannot run what a TPU runs (jax 0.12.0.1).

One module per construct; `sandbox.harness.interpret_fixes` installs them, version-guarded, and
each module's docstring says what it changes and what it cannot know about the hardware.

revisit.py      output blocks with `RevisitMode.ANY`, revisited at any grid step
semaphores.py   `pltpu.semaphore_read` of a simulated semaphore
rounding.py     `pltpu.stochastic_round` on a CPU
"""
