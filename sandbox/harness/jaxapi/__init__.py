"""The JAX adapter: the only code in the playground that imports `jax._src`, and the only code that
changes what JAX's TPU interpret mode does (`tests/unit/test_architecture.py` holds the first).

JAX's public API (`jax`, `jax.experimental.pallas`) is imported anywhere in the job child; what lives
in `jax._src` changes between versions without notice, so it is reached through here, and what each
version the playground runs needs is one table (`versions.SUPPORTED`).

versions.py         THE table: per JAX version, whether the pinned hooks apply, what its interpreter
                    lacks; `support(version)`, `pinned(...)` / `not_available(...)` (the user's words)
core.py             jaxpr types and helpers the TPU time model reads programs with (`Var`, `Literal`,
                    `Jaxpr`, `eval_jaxpr`, `NDIndexer`, `AbstractRef`, `dma_unflatten`, …)
interpret.py        handles on the interpreter's modules for the monitor and the trace to wrap, its
                    logger names, `to_range`, `races_found`, `route_race_reports` (older detectors)
compiler.py         what the lowering check needs: Mosaic's source-location setting, an MLIR context
process.py          what the warm pool needs: internal modules to preload, whether a backend exists
interpret_fixes.py  installs the interpret-mode fixes a version needs (`install`, `reason`)
fixes/              one patch of interpret mode per construct, and the chip's arithmetic (`mxu`, the
                    precision model of an f32 dot; `approx`, the approximate reciprocal)

The monitor (`monitor/hooks.py`) and the kernel trace (`trace/capture.py`) wrap the interpreter's
functions to watch them, without changing what they compute; they get the interpreter from
`interpret.py` and check `versions.support(...)` before they do.
"""
