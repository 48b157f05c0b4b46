"""The job child: JAX and the user's code, one job per process. Never imports the backends or the jail.

main.py             the one entry (`python -m sandbox.harness EVENTS_FD`, or `serve()` from the pool)
process.py          the child's own rlimits, peak memory and stdin
phases.py           the phases every job runs, in order, and its one error handling (`JobSession`)
session.py          a run's kernel job: every case, timing, memory, lowering, trace
target.py           native TPU or interpret mode simulating the chosen chip
usercode.py         loading user and reference sources under stable file names
calls.py            calling kernels: mutable-ref inputs, output flattening, cost, summaries
measure.py          timing and memory figures of a checked kernel
jaxapi/             the JAX adapter: the only code that imports `jax._src` or patches interpret mode
                    (the version table, jaxpr types, interpreter handles, `interpret_fixes` + `fixes/`)
errors/             the error translator: every user-facing error in the user's names and lines
monitor/            watching the interpreter: names for ids, failures, waits and deadlocks, progress
checks/             compare outputs per case, time, account memory, read race reports
lowering/           the real TPU lowering check, static chip checks, IR text
trace/              the kernel trace: capture, records, timeline, regions
"""
