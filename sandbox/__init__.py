"""Runs one job in isolation and knows nothing of HTTP. One package, because the jail mounts it
read-only into every job; its folders say which process each part runs in:

    protocol/   types every process shares (job, result, events, pool messages, trace, chips, codec);
                imports nothing else
    catalog/    host side: the kernel catalog's entries and where each worked solution passes
    jobs/       host side: a Job from what a caller asked (one run, a sweep's shards)
    results/    host side: `classify` (raw facts → RunResult), the text report, run diffs, matrices
    host/       host side: the job's environment, the installed JAX runtimes, TPU chips, log format
    limits.py   named defaults of every per-job limit
    backends/   host side: the Backend interface, its registry, local / hardened / remote, the watcher,
                and `execute` (the one way a job becomes a result, for every queue and the CLI)
    queue/      host side: the Redis run queue the web servers and the workers share (no backends)
    worker/     host side: `python -m sandbox.worker`, runs one pool's jobs from the Redis queue
    jail/       inside bubblewrap: the warm pool and the isolation layers of each job
    harness/    the job child: JAX and the user's code, checks, lowering, trace; `harness/jaxapi/` is the
                JAX adapter, the only code that touches `jax._src` (one table of what each version needs)

    request → server queue → backends/execute → jail/ → harness/ → events → classify → RunResult
    request → Redis (queue/) → worker/ → backends/execute → … → RunResult → Redis → any web server

`tests/unit/test_architecture.py` holds the layers, forbids import cycles, keeps one classifier, and
keeps `jax._src` inside the adapter.
"""
