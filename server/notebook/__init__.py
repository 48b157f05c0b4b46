""" "Open as notebook": a share as a Jupyter notebook (nbformat v4) that checks and times its kernel on the
reader's own machine, natively on a TPU and in TPU interpret mode elsewhere, and prints one JSON line
of the measurement that "Add a measurement" takes back (`server.store.measurements`).

The notebook is self-contained: it needs JAX and numpy, never this playground. Its code cells are
the files of `cells/` (plain Python, with the share's constants set by a generated cell before them);
`tests/sandbox/test_notebook.py` runs them on this CPU-only machine and expects a passing verdict.
"""
