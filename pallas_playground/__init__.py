"""A Python client for a Pallas Playground server: submit a kernel, follow it, cancel it, share it,
and read the catalog, as typed results (`RunResult` is the sandbox's own result type).

    from pallas_playground import Client

    client = Client("http://127.0.0.1:8000")
    finished = client.run(open("kernel.py").read(), entry="tiled_matmul", chip="v5e")
    print(finished.result.status, finished.result.summary)

Standard library only (urllib for HTTP, Server-Sent Events read line by line) and the playground's
protocol types (`sandbox.protocol`, standard library only as well). `python -m sandbox run FILE
--server URL` is its command line.
"""

from pallas_playground.client import Client, Event, Finished, PlaygroundError, RunState, SharedLink, Submitted

__all__ = ["Client", "Event", "Finished", "PlaygroundError", "RunState", "SharedLink", "Submitted"]
