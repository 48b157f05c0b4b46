"""The job child: JAX and the user's code, one job per process. Never imports the backends or the jail.

main.py             the one entry (`python -m sandbox.harness EVENTS_FD`, or `serve()` from the pool)
process.py          the child's own rlimits, peak memory and stdin
session.py          one job: target, user code, every case, timing, memory, lowering, trace
target.py           native TPU or interpret mode simulating the chosen chip
usercode.py         loading user and reference sources; errors trimmed to the user's lines
calls.py            calling kernels: mutable-ref inputs, output flattening, cost, summaries
interpret_fixes.py  version-guarded fixes to JAX's interpret mode
checks/             compare outputs, time, account memory, read race reports
lowering/           the real TPU lowering check, static chip checks, IR text
trace/              the kernel trace: capture, records, timeline, regions
"""
