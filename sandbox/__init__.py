"""Runs one job in isolation and knows nothing of HTTP. One package, because the jail mounts it
read-only into every job; its folders say which process each part runs in:

    protocol/   types every process shares (job, result, events, trace, chips, codec); imports nothing else
    catalog.py jobs.py limits.py jobenv.py classify.py text_report.py
                host-side domain: what the server and the CLI call (no JAX)
    backends/   host side: the Backend interface, its registry, local / hardened / remote, the watcher
    jail/       inside bubblewrap: the warm pool and the isolation layers of each job
    harness/    the job child: JAX and the user's code, checks, lowering, trace

    request → server queue → backends/ → jail/ → harness/ → events → classify → RunResult

`tests/unit/test_architecture.py` holds the layers and forbids import cycles.
"""
