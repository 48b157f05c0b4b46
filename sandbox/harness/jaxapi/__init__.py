"""The JAX adapter: the only code in the playground that imports `jax._src` or patches interpret mode.

versions.py         THE table of the JAX versions the playground runs, and what each needs
interpret_fixes.py  installs the interpret-mode fixes a version needs (the modules in `fixes/`)
fixes/              one patch of JAX's TPU interpret mode per construct (and the chip's arithmetic)
"""
