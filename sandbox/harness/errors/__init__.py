"""Every user-facing error passes here: the user's names, the user's line, what to do next.

translate.py  the one entry: root exception → rules → ErrorInfo (user) + log text (server)
rules.py      failures while a kernel runs: blocks and DMAs out of bounds, revisited blocks,
              deadlocks, DMAs left in flight, semaphores left non-zero
specs.py      BlockSpec mistakes JAX finds while building a kernel, and the TPU's tiling rule
tracing.py    the rest of what JAX raises while building a kernel (stores, refs, grids, meshes,
              names) and the known limitations of interpret mode
locate.py     the line of a call's argument (`ast`), objects JAX held when it raised
clean.py      no internal paths, no JAX_TRACEBACK_FILTERING advice
"""

from sandbox.harness.errors.rules import notes
from sandbox.harness.errors.translate import Scene, Translation, translate

__all__ = ["Scene", "Translation", "notes", "translate"]
