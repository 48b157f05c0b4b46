"""The runner service and the remote backend: a real job over a real unix socket, cancel, peer check."""

import os
import threading
import time
from pathlib import Path

import pytest

from sandbox.backends.execute import execute
from sandbox.backends.local import LocalBackend
from sandbox.backends.remote import RemoteBackend
from sandbox.backends.service import Service
from sandbox.jobs.build import make_job
from sandbox.limits import default_limits
from sandbox.protocol import RunStatus
from tests.sandbox.conftest import run_job_on
from tests.sandbox.test_spine_local import ADD_KERNEL

pytestmark = pytest.mark.slow


@pytest.fixture
def service(tmp_path):
    path = tmp_path / "runner.sock"
    svc = Service(LocalBackend(), path, {os.getuid()})
    thread = threading.Thread(target=svc.serve, daemon=True)
    thread.start()
    while not path.exists():
        time.sleep(0.01)
    yield svc
    svc.stop()


def test_remote_job_streams_events_and_passes(service):
    job = make_job(ADD_KERNEL + "\ndef reference(x, y):\n    return x + y\n", timing_budget_seconds=0.05)
    events = []
    result = run_job_on(RemoteBackend(service.path), job, events.append)
    assert result.status == RunStatus.PASSED, result.summary
    kinds = [e.kind for e in events]
    assert kinds[0] == "started" and "case" in kinds  # the queue sends its own `done`, with the result


def test_remote_cancel_stops_the_job(service):
    job = make_job("import time\ntime.sleep(60)\n", limits=default_limits(wall_seconds=30))
    cancel = threading.Event()
    threading.Timer(1.0, cancel.set).start()
    started = time.monotonic()
    result = execute(RemoteBackend(service.path), job, cancel, lambda kind, data: None).result
    assert result.status == RunStatus.CANCELLED and time.monotonic() - started < 10


def test_unreachable_runner_fails_the_run_cleanly(tmp_path):
    job = make_job("print(1)")
    result = run_job_on(RemoteBackend(tmp_path / "nobody.sock"), job)
    assert result.status == RunStatus.ERROR and "unreachable" in result.summary


def test_runner_refuses_other_uids(tmp_path):
    path = tmp_path / "runner.sock"
    svc = Service(LocalBackend(), path, {os.getuid() + 12345})
    threading.Thread(target=svc.serve, daemon=True).start()
    while not path.exists():
        time.sleep(0.01)
    try:
        job = make_job("print(1)")
        result = run_job_on(RemoteBackend(path), job)
        assert result.status == RunStatus.ERROR and "refused the job: uid" in result.summary
    finally:
        svc.stop()


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root: the runner is root, the web server is not")
@pytest.mark.parametrize(("group", "reached"), [(None, "PermissionError"), (23390, "connected")])
def test_the_web_uid_reaches_the_runner_socket_only_through_its_group(group, reached):
    import shutil
    import subprocess
    import tempfile

    folder = tempfile.mkdtemp(prefix="runner-sock-")
    os.chmod(folder, 0o755)  # as /run/playground in the shared volume
    path = os.path.join(folder, "runner.sock")
    svc = Service(LocalBackend(), Path(path), {23390}, socket_group=group)
    threading.Thread(target=svc.serve, daemon=True).start()
    while not os.path.exists(path):
        time.sleep(0.01)
    connect = (
        "import socket, sys\ntry:\n    socket.socket(socket.AF_UNIX).connect(sys.argv[1]); print('connected')\n"
        "except OSError as e:\n    print(type(e).__name__)"
    )
    try:
        web = ["setpriv", "--reuid=23390", "--regid=23390", "--clear-groups", "/usr/bin/python3", "-c"]
        out = subprocess.run([*web, connect, path], capture_output=True, text=True, timeout=30).stdout
        assert out.strip() == reached
    finally:
        svc.stop()
        shutil.rmtree(folder, ignore_errors=True)
