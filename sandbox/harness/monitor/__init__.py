"""Watching JAX's TPU interpreter from inside the job (jax 0.12.0.1, version-guarded).

hooks.py      wraps the interpreter's callbacks and feeds one `Monitor`: failures with their context,
              counts, waits, findings at a kernel's end
book.py       the user's names for the interpreter's buffer and semaphore ids
pipelines.py  `emit_pipeline` calls as written (grid, BlockSpecs, refs), to place a bad DMA
deadlock.py   the rule "every simulated core waits for what nothing can deliver", and its watchdog
progress.py   `progress` events while a kernel runs, so a killed job still says how far it got
source.py     JAX's source records reduced to lines of the user's files
"""
