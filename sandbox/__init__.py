"""Runs one job in isolation and knows nothing of HTTP. One package, because the jail mounts it
read-only into every job; its folders say which process each part runs in:

    protocol/   types every process shares (job, result, events, trace, chips, codec); imports nothing else
    catalog.py jobs.py limits.py jobenv.py classify.py text_report.py progress.py reuse.py
    outcome.py logfmt.py
                host-side domain: what the server, the workers and the CLI call (no JAX)
    backends/   host side: the Backend interface, its registry, local / hardened / remote, the watcher
    queue/      host side: the Redis run queue the web servers and the workers share (no backends)
    worker/     host side: `python -m sandbox.worker`, runs one pool's jobs from the Redis queue
    jail/       inside bubblewrap: the warm pool and the isolation layers of each job
    harness/    the job child: JAX and the user's code, checks, lowering, trace

    request → server queue → backends/ → jail/ → harness/ → events → classify → RunResult
    request → Redis (queue/) → worker/ → backends/ → … → RunResult → Redis → any web server

`tests/unit/test_architecture.py` holds the layers and forbids import cycles.
"""
